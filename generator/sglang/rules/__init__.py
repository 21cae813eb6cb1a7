"""SGLang's cross-flag rules, checked on a service's argv before deploy.

The rules themselves are reviewable data in ``catalogs/rules.yaml`` (id, SGLang versions,
severity, message, fix); each has one small predicate, registered under the same id, that
decides whether it fires. Predicates read :class:`Settings`: every setting of the pin as
SGLang would parse the rendered argv (the catalog's types and defaults) plus the service's
environment. A firing rule becomes a diagnostic (``X0xx`` or ``X2xx`` error, ``X1xx`` warning) at the
manifest line that set the offending value.

Modules: ``spec`` (a rule as data, version ranges), ``load`` (reading rules.yaml),
``settings`` (argv read back), ``registry`` (predicates by id), ``predicates/*`` (one per
rule, by topic), ``evaluate`` (running them; :func:`evaluate` is pure).
"""

from generator.sglang.rules import predicates  # noqa: F401  (registers every predicate)
from generator.sglang.rules.evaluate import Finding, catalog_rules, check_rules, evaluate, sglang_numa_flag
from generator.sglang.rules.load import RULES_FILE, load_rules, rules_path
from generator.sglang.rules.predicates.common import EAGLE_FAMILY, algorithm, dp_attention
from generator.sglang.rules.predicates.parallel import dist_init_addr_ok
from generator.sglang.rules.registry import PREDICATES, Hit, Predicate, predicate
from generator.sglang.rules.settings import (Settings, parse_value, settings_from_argv,
                                             settings_from_words)
from generator.sglang.rules.spec import RuleSpec, RulesFormatError, VersionRange

__all__ = [
    "EAGLE_FAMILY", "PREDICATES", "RULES_FILE", "Finding", "Hit", "Predicate", "RuleSpec",
    "RulesFormatError", "Settings", "VersionRange", "algorithm", "catalog_rules", "check_rules",
    "dist_init_addr_ok", "dp_attention", "evaluate", "load_rules", "parse_value", "predicate",
    "rules_path", "settings_from_argv", "settings_from_words", "sglang_numa_flag",
]
