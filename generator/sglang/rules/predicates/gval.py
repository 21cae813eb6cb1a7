"""Predicates of the rules for SGLang's general argument validation (check_server_args, watermarks, bucket rules).

Found by the coverage inventory (catalogs/coverage/<pin>.yaml); each predicate reports
the first of SGLang's own checks the settings break, in SGLang's order and words.
"""

from __future__ import annotations
