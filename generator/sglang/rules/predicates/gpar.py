"""Predicates of the rules for parallelism layout (elastic EP, DWDP, decode context parallelism, CP/TP group sharing, layernorm SP, LM-head DP).

Found by the coverage inventory (catalogs/coverage/<pin>.yaml); each predicate reports
the first of SGLang's own checks the settings break, in SGLang's order and words.
"""

from __future__ import annotations
