"""Predicates of the rules for KV cache, KV sharding, hierarchical cache, HiSparse and mamba state.

Found by the coverage inventory (catalogs/coverage/<pin>.yaml); each predicate reports
the first of SGLang's own checks the settings break, in SGLang's order and words.
"""

from __future__ import annotations
