"""Predicates of the rules for serving options (deprecated args, SSL, multimodal), PD and encoder disaggregation, attention backends.

Found by the coverage inventory (catalogs/coverage/<pin>.yaml); each predicate reports
the first of SGLang's own checks the settings break, in SGLang's order and words.
"""

from __future__ import annotations
