"""Predicates of the rules for MoE kernels and all-to-all dispatch, mega-MoE, expert packs, and the smaller validation hooks (cuda graph, model path, memory).

Found by the coverage inventory (catalogs/coverage/<pin>.yaml); each predicate reports
the first of SGLang's own checks the settings break, in SGLang's order and words.
"""

from __future__ import annotations
