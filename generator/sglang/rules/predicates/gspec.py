"""Predicates of the rules for speculative decoding algorithms (UNO, DSPARK, DFLASH, EAGLE family, NGRAM) and LoRA.

Found by the coverage inventory (catalogs/coverage/<pin>.yaml); each predicate reports
the first of SGLang's own checks the settings break, in SGLang's order and words.
"""

from __future__ import annotations
