"""SGLang's cross-flag rules, checked on a service's argv before deploy.

The rules themselves are reviewable data in ``catalogs/rules.yaml`` (id, SGLang versions,
severity, message, fix); each has one small predicate here, registered under the same
id, that decides whether it fires. Predicates read :class:`Settings`: every setting of
the pin as SGLang would parse the rendered argv (the catalog's types and defaults) plus
the service's environment. A firing rule becomes a diagnostic (``X0xx`` error, ``X1xx``
warning) at the manifest line that set the offending value.

:func:`evaluate` is pure (argv words in, findings out) so the differential test can run
the same rules on a generated corpus that the real SGLang validates too.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from generator.sglang.catalog import Action, Catalog, load_flag_tables, tables_dir, version_key
from generator.errors import Diagnostics, GenError, Position, Severity
from generator.sglang.flags import CheckedArg

RULES_FILE = "rules.yaml"
_SEVERITIES = {"error": Severity.ERROR, "warning": Severity.WARNING}
_ENFORCED = ("args", "runtime", "none")
_BOUND = re.compile(r"^(>=|<=|>|<|==)?\s*(\d+(?:\.\d+)*)$")
_TRUE_WORDS = ("true", "1", "yes", "y")  # SGLang's EnvBool


class RulesFormatError(GenError, ValueError):
    """catalogs/rules.yaml is malformed, or does not match the predicates in this module."""


# ----- version ranges -----

@dataclass(frozen=True)
class VersionRange:
    """A set of SGLang releases: "all", or comma-joined bounds like ">=0.5.15,<0.5.23"."""

    text: str
    bounds: tuple[tuple[str, tuple[int, ...]], ...]

    @classmethod
    def parse(cls, text: str) -> "VersionRange":
        """Parse a range; raise RulesFormatError on anything else."""
        text = str(text).strip()
        if text == "all":
            return cls(text, ())
        bounds = []
        for part in text.split(","):
            match = _BOUND.match(part.strip())
            if not match:
                raise RulesFormatError(f"bad version range {text!r} (part {part!r})")
            bounds.append((match.group(1) or "==", tuple(int(x) for x in match.group(2).split("."))))
        return cls(text, tuple(bounds))

    def contains(self, version: tuple[int, ...] | None) -> bool:
        """True when ``version`` is in the range (an unknown version only matches "all")."""
        if not self.bounds:
            return True
        if version is None:
            return False
        ops: dict[str, Callable[[tuple[int, ...], tuple[int, ...]], bool]] = {
            ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
            "<": lambda a, b: a < b, "==": lambda a, b: a == b,
        }
        return all(ops[op](version, bound) for op, bound in self.bounds)


# ----- the rules as data -----

@dataclass(frozen=True)
class RuleSpec:
    """One entry of catalogs/rules.yaml."""

    id: str
    code: str
    versions: VersionRange
    severity: Severity
    enforced: str  # args | runtime | none: where SGLang itself enforces it
    message: str
    fix: str
    evidence: str
    params: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def param(self, name: str, version: tuple[int, ...] | None) -> Any:
        """A versioned parameter: the last entry whose range holds ``version`` (None if none)."""
        table = self.params.get(name) or {}
        found = None
        for text, value in table.items():
            if VersionRange.parse(text).contains(version):
                found = value
        return found


def rules_path(catalog: Catalog) -> Path:
    """catalogs/rules.yaml beside the catalog's flag tables."""
    return tables_dir(catalog.source_file) / RULES_FILE


def load_rules(path: Path) -> tuple[RuleSpec, ...]:
    """Read and check rules.yaml (cached on the file's mtime)."""
    return _load_rules_cached(path, path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _load_rules_cached(path: Path, _mtime: int) -> tuple[RuleSpec, ...]:
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(path.read_text(encoding="utf-8")) or {}  # libyaml when installed
    out: list[RuleSpec] = []
    seen_codes: dict[str, str] = {}
    for item in data.get("rules") or []:
        try:
            spec = RuleSpec(
                id=item["id"], code=item["code"], versions=VersionRange.parse(item["versions"]),
                severity=_SEVERITIES[item["severity"]], enforced=item["enforced"],
                message=item["message"], fix=item["fix"], evidence=item["evidence"],
                params=item.get("params") or {},
            )
        except (KeyError, TypeError) as exc:
            raise RulesFormatError(f"{path}: malformed rule {item!r}: {exc!r}") from exc
        family = "X0" if spec.severity is Severity.ERROR else "X1"
        if not re.fullmatch(r"X\d{3}", spec.code) or not spec.code.startswith(family):
            raise RulesFormatError(f"{path}: rule {spec.id}: code {spec.code} does not fit "
                                   f"severity {spec.severity.value} ({family}xx)")
        if spec.code in seen_codes:
            raise RulesFormatError(f"{path}: code {spec.code} used by {seen_codes[spec.code]} and {spec.id}")
        if spec.enforced not in _ENFORCED:
            raise RulesFormatError(f"{path}: rule {spec.id}: enforced must be one of {_ENFORCED}")
        seen_codes[spec.code] = spec.id
        out.append(spec)
    ids = [r.id for r in out]
    missing = sorted(set(ids) - set(PREDICATES))
    extra = sorted(set(PREDICATES) - set(ids))
    if missing or extra or len(ids) != len(set(ids)):
        raise RulesFormatError(f"{path}: rules without a predicate {missing}, predicates without "
                               f"a rule {extra}, or an id twice")
    return tuple(out)


# ----- what a predicate sees -----

@dataclass(frozen=True)
class Settings:
    """Every setting of one service as SGLang would parse its argv, plus its environment.

    Names are dests; the pin's own dest is found through renames.yaml's dest groups, so a
    predicate writes ``tp_size`` and reads ``tensor_parallel_size`` on 0.5.9.
    """

    catalog: Catalog
    values: Mapping[str, Any]  # dest -> value, defaults filled in
    written: Mapping[str, Position | None]  # dests the manifest set (position when known)
    env: Mapping[str, str]
    env_pos: Mapping[str, Position] = field(default_factory=dict)
    # name -> the pin's dest; filled on first use (predicates ask for the same few names,
    # and resolving one reads the flag tables).
    _dests: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    # The flag tables, read once per service instead of once per name asked for.
    _tables: list[Any] = field(default_factory=list, compare=False, repr=False)

    @property
    def version(self) -> tuple[int, ...] | None:
        """The pin's release number."""
        return version_key(self.catalog.version)

    def at_least(self, *release: int) -> bool:
        """True when the pin is this release or newer."""
        return self.version is not None and self.version >= release

    def dest(self, name: str) -> str:
        """The pin's dest for a setting name (``tp_size`` -> ``tensor_parallel_size`` on 0.5.9)."""
        found = self._dests.get(name)
        if found is None:
            found = name
            if not self._tables:
                self._tables.append(load_flag_tables(self.catalog.source_file))
            for candidate in self._tables[0].dest_names(name):
                if candidate in self.values or self.catalog.by_dest(candidate) is not None:
                    found = candidate
                    break
            self._dests[name] = found
        return found

    def get(self, name: str, default: Any = None) -> Any:
        """The setting's value (SGLang's default when the manifest left it out)."""
        value = self.values.get(self.dest(name))
        return default if value is None else value

    def has(self, name: str) -> bool:
        """True when the pin has this setting at all."""
        return self.catalog.by_dest(self.dest(name)) is not None

    def is_set(self, name: str) -> bool:
        """True when the manifest set this setting."""
        return self.dest(name) in self.written

    def flag(self, name: str) -> str:
        """The pin's option string for a setting, for messages."""
        action = self.catalog.by_dest(self.dest(name))
        return action.canonical if action is not None else "--" + name.replace("_", "-")

    def pos(self, names: Iterable[str]) -> Position | None:
        """Where the first of ``names`` (dests or environment variables) was written."""
        for name in names:
            where = self.written.get(self.dest(name)) or self.env_pos.get(name)
            if where is not None:
                return where
        return None


@dataclass(frozen=True)
class Hit:
    """A predicate fired: which settings to blame (position order) and the message fields."""

    blame: tuple[str, ...]
    fields: Mapping[str, Any]


@dataclass(frozen=True)
class Finding:
    """A rule that fired, with its rendered message and position (None: not positioned)."""

    rule: RuleSpec
    message: str
    fix: str
    pos: Position | None


Predicate = Callable[[Settings, RuleSpec], Hit | None]
PREDICATES: dict[str, Predicate] = {}


def predicate(rule_id: str) -> Callable[[Predicate], Predicate]:
    """Register the predicate of the rule ``rule_id``."""
    def register(fn: Predicate) -> Predicate:
        PREDICATES[rule_id] = fn
        return fn
    return register


# ----- reading argv back the way argparse does -----

def _convert(action: Action, word: str) -> Any:
    kind = action.type
    try:
        if kind == "int":
            return int(word)
        if kind == "float":
            return float(word)
    except ValueError:
        return word  # flags.py reports bad types; rules see the text
    if kind == "bool":
        return word.lower() in ("true", "1", "yes")
    return word


def parse_value(action: Action, words: Sequence[str]) -> Any:
    """The value argparse stores for one rendered flag group (``words[0]`` is the option)."""
    if action.kind == "store_false":
        return False
    if action.kind == "boolean_optional":
        return words[0] != action.negative
    if not action.takes_value or len(words) == 1:
        return True  # store_true, store_const, deprecated switches
    values = [_convert(action, w) for w in words[1:]]
    if action.nargs in (None, "?") and len(values) == 1:
        return values[0]
    return values


def _default(action: Action) -> Any:
    default = action.default
    return None if isinstance(default, dict) and "repr" in default else default


# id(catalog) -> (catalog, its defaults): a catalog is immutable, and computing the
# defaults of its ~330 actions per service was a fifth of a cold check.
_DEFAULTS: dict[int, tuple[Catalog, dict[str, Any]]] = {}


def _defaults(catalog: Catalog) -> dict[str, Any]:
    """SGLang's default of every setting of ``catalog`` (dest -> value)."""
    cached = _DEFAULTS.get(id(catalog))
    if cached is not None and cached[0] is catalog:
        return cached[1]
    values: dict[str, Any] = {}
    for action in catalog.actions:
        if action.kind not in ("help", "version") and action.dest not in values:
            live = catalog.by_dest(action.dest)
            values[action.dest] = _default(live if live is not None else action)
    if len(_DEFAULTS) > 64:
        _DEFAULTS.clear()
    _DEFAULTS[id(catalog)] = (catalog, values)
    return values


def settings_from_words(catalog: Catalog, groups: Sequence[tuple[Action, Sequence[str], Position | None]],
                        env: Mapping[str, str], env_pos: Mapping[str, Position] | None = None) -> Settings:
    """Settings from rendered flag groups (action, words, where written) and an environment."""
    values = dict(_defaults(catalog))
    written: dict[str, Position | None] = {}
    for action, words, pos in groups:
        if not words:
            continue  # a switch turned off: SGLang keeps its default
        values[action.dest] = parse_value(action, words)
        written[action.dest] = pos
    return Settings(catalog, values, written, dict(env), dict(env_pos or {}))


def settings_from_argv(catalog: Catalog, argv: Sequence[str], env: Mapping[str, str]) -> Settings:
    """Settings from a flat argv of canonical option strings (what gen renders; tests use it)."""
    groups: list[tuple[Action, list[str], Position | None]] = []
    for word in argv:
        action = catalog.by_option(word) if word.startswith("--") else None
        if action is not None:
            groups.append((action, [word], None))
        elif groups:
            groups[-1][1].append(word)
        else:
            raise ValueError(f"argv must start with an option, got {word!r}")
    return settings_from_words(catalog, groups, env)


# ----- evaluation -----

class _Fields(dict):  # type: ignore[type-arg]
    """Format fields that print a missing key as itself, so a message never crashes."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def evaluate(settings: Settings, rules: Sequence[RuleSpec]) -> list[Finding]:
    """Every rule of the pin's version that fires on ``settings``, in rules.yaml order."""
    out: list[Finding] = []
    for rule in rules:
        if not rule.versions.contains(settings.version):
            continue
        hit = PREDICATES[rule.id](settings, rule)
        if hit is None:
            continue
        fields = _Fields(hit.fields)
        fields.setdefault("version", settings.catalog.version)
        out.append(Finding(rule, rule.message.format_map(fields), rule.fix.format_map(fields),
                           settings.pos(hit.blame)))
    return out


def check_rules(catalog: Catalog, placement: Any, argv: Any, environment: Sequence[tuple[str, str]],
                diags: Diagnostics) -> None:
    """Run every rule on one rendered service; record findings in ``diags``.

    ``placement`` is the service's Placement (for positions of its model and service
    manifests), ``argv`` its checked ServiceArgv, ``environment`` the rendered variables.
    """
    model, service = placement.model, placement.service
    env_pos: dict[str, Position] = {}
    for owner in (model, service):  # the service's own value wins, as in the rendering
        for name, _ in owner.env:
            env_pos[name] = owner.pos("env", name)
    groups: list[tuple[Action, Sequence[str], Position | None]] = [
        (g.action, g.words, g.pos) for g in argv.groups if isinstance(g, CheckedArg)]
    settings = settings_from_words(catalog, groups, dict(environment), env_pos)
    settings = _with_dropped_tool_parser(settings, placement)
    fallback = service.pos("model")
    for finding in evaluate(settings, load_rules(rules_path(catalog))):
        record = diags.error if finding.rule.severity is Severity.ERROR else diags.warning
        record(finding.pos or fallback, finding.rule.code, finding.message, finding.fix)


def _with_dropped_tool_parser(settings: Settings, placement: Any) -> Settings:
    """Put back a tool-call parser the flag check refused (a bad choice never reaches argv).

    Only this setting: its trap ('qwen3' is the reasoning parser's name) deserves its own
    explanation next to argparse's "invalid choice".
    """
    if settings.is_set("tool_call_parser"):
        return settings
    model, service = placement.model, placement.service
    written: tuple[Any, Position] | None = None
    if model.tool_call_parser is not None:
        written = (model.tool_call_parser, model.pos("parsers", "tool_call"))
    for owner in (model, service):
        for flag, value in owner.args:
            if flag.split("=", 1)[0] == "--tool-call-parser":
                written = (value if "=" not in flag else flag.split("=", 1)[1], owner.pos("args", flag, key=True))
    if written is None:
        return settings
    dest = settings.dest("tool_call_parser")
    return Settings(settings.catalog, {**settings.values, dest: written[0]},
                    {**settings.written, dest: written[1]}, settings.env, settings.env_pos)


def sglang_numa_flag(argv: Any, service: Any) -> tuple[list[int] | None, Position]:
    """SGLang's own ``--numa-node`` of a checked argv (None when not written) and where it was set."""
    for g in argv.groups:
        if g.action.dest == "numa_node" and g.words:
            value = parse_value(g.action, g.words)
            return ([int(v) for v in value] if isinstance(value, list) else [int(value)]), g.pos
    return None, service.pos("name")


# ----- shared reading of speculative and parallel settings -----

EAGLE_FAMILY = ("EAGLE", "EAGLE3", "STANDALONE")


def algorithm(s: Settings) -> str | None:
    """The speculative algorithm as SGLang resolves it: upper-cased (0.5.15+), NEXTN -> EAGLE."""
    raw = s.get("speculative_algorithm")
    if raw is None:
        return None
    name = str(raw).upper() if s.at_least(0, 5, 15) else str(raw)
    return "EAGLE" if name == "NEXTN" else name


def dp_attention(s: Settings) -> tuple[bool, int, str]:
    """Whether DP attention is in effect, its size, and the setting that turned it on.

    0.5.23 has ``--attn-dp-size``; ``--dp-size N --enable-dp-attention`` is rewritten to
    it. Older pins turn DP attention off silently when ``--dp-size`` is 1.
    """
    enabled = bool(s.get("enable_dp_attention", False))
    dp = int(s.get("dp_size", 1))
    if s.has("attn_dp_size"):
        attn = int(s.get("attn_dp_size", 1))
        if attn > 1:
            return True, attn, f"{s.flag('attn_dp_size')} {attn}"
    if enabled and dp > 1:
        return True, dp, f"{s.flag('enable_dp_attention')} with {s.flag('dp_size')} {dp}"
    return False, 1, ""


def _int(s: Settings, name: str, default: int) -> int:
    value = s.get(name, default)
    return value if isinstance(value, int) else default


# ----- predicates, one per rule id -----

@predicate("spec-algo-unknown")
def _spec_algo_unknown(s: Settings, rule: RuleSpec) -> Hit | None:
    raw = s.get("speculative_algorithm")
    known = rule.param("builtins", s.version) or []
    if raw is None or str(raw).upper() in known:
        return None
    fix = ("write EAGLE: SGLang runs a model's own MTP heads as EAGLE (model cards say NEXTN)"
           if str(raw).upper() == "MTP" else "use one of " + ", ".join(known))
    return Hit(("speculative_algorithm",), {"algo": raw, "known": ", ".join(known), "fix": fix})


@predicate("spec-steps-all-or-none")
def _spec_steps_all_or_none(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) not in EAGLE_FAMILY or s.get("speculative_num_steps") is not None:
        return None
    given = [n for n in ("speculative_eagle_topk", "speculative_num_draft_tokens") if s.get(n) is not None]
    if not given:
        return None
    return Hit(tuple(given), {"given": " and ".join(s.flag(n) for n in given),
                              "steps": s.flag("speculative_num_steps")})


@predicate("spec-steps-needs-topk")
def _spec_steps_needs_topk(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) not in EAGLE_FAMILY:
        return None
    if s.get("speculative_num_steps") is None or s.get("speculative_eagle_topk") is not None:
        return None
    return Hit(("speculative_num_steps",), {"steps": s.flag("speculative_num_steps"),
                                            "topk": s.flag("speculative_eagle_topk")})


def _topk_page(s: Settings, rule: RuleSpec) -> tuple[int, int, list[str]] | None:
    """(top-k, page size, allowed backends) when top-k > 1 meets page size > 1."""
    algo = algorithm(s)
    if algo in EAGLE_FAMILY:
        topk = s.get("speculative_eagle_topk")
    elif algo == "NGRAM":
        topk = s.get("speculative_ngram_max_bfs_breadth")
    else:
        return None
    page = s.get("page_size", 1)
    allowed = rule.param("backends", s.version)
    if not isinstance(topk, int) or not isinstance(page, int) or topk <= 1 or page <= 1 or not allowed:
        return None
    if algo == "NGRAM":
        allowed = rule.param("ngram_backends", s.version) or allowed
    return topk, page, list(allowed)


def _topk_page_fields(s: Settings, topk: int, page: int, allowed: list[str]) -> dict[str, Any]:
    return {"topk": s.flag("speculative_eagle_topk"), "topk_value": topk, "page": s.flag("page_size"),
            "page_value": page, "backend": s.flag("attention_backend"),
            "allowed": "|".join(allowed), "first": allowed[0], "got": s.get("attention_backend")}


@predicate("spec-topk-page")
def _spec_topk_page(s: Settings, rule: RuleSpec) -> Hit | None:
    found = _topk_page(s, rule)
    if found is None or s.get("attention_backend") is None or s.get("attention_backend") in found[2]:
        return None
    return Hit(("attention_backend", "page_size", "speculative_eagle_topk"), _topk_page_fields(s, *found))


@predicate("spec-topk-page-auto-backend")
def _spec_topk_page_auto(s: Settings, rule: RuleSpec) -> Hit | None:
    found = _topk_page(s, rule)
    if found is None or s.get("attention_backend") is not None:
        return None
    return Hit(("page_size", "speculative_eagle_topk"), _topk_page_fields(s, *found))


@predicate("spec-topk-trtllm")
def _spec_topk_trtllm(s: Settings, rule: RuleSpec) -> Hit | None:
    topk = s.get("speculative_eagle_topk")
    if algorithm(s) not in EAGLE_FAMILY or not isinstance(topk, int) or topk <= 1:
        return None
    for name in ("attention_backend", "decode_attention_backend", "prefill_attention_backend"):
        if s.get(name) == "trtllm_mha":
            return Hit((name, "speculative_eagle_topk"), {"which": s.flag(name), "topk_value": topk,
                                                          "topk": s.flag("speculative_eagle_topk")})
    return None


@predicate("spec-topk1-draft-tokens")
def _spec_topk1_draft(s: Settings, rule: RuleSpec) -> Hit | None:
    steps, topk, draft = (s.get("speculative_num_steps"), s.get("speculative_eagle_topk"),
                          s.get("speculative_num_draft_tokens"))
    if algorithm(s) not in EAGLE_FAMILY or topk != 1 or not isinstance(steps, int) or draft is None:
        return None
    if draft == steps + 1:
        return None
    return Hit(("speculative_num_draft_tokens",), {
        "topk": s.flag("speculative_eagle_topk"), "draft": s.flag("speculative_num_draft_tokens"),
        "steps": s.flag("speculative_num_steps"), "forced": steps + 1, "written": draft})


@predicate("spec-nextn-alias")
def _spec_nextn(s: Settings, rule: RuleSpec) -> Hit | None:
    raw = s.get("speculative_algorithm")
    return Hit(("speculative_algorithm",), {}) if raw is not None and str(raw).upper() == "NEXTN" else None


def _env_true(s: Settings, name: str) -> bool:
    return s.env.get(name, "").lower() in _TRUE_WORDS


@predicate("spec-v2-env")
def _spec_v2_env(s: Settings, rule: RuleSpec) -> Hit | None:
    topk = s.get("speculative_eagle_topk")
    if not _env_true(s, "SGLANG_ENABLE_SPEC_V2") or algorithm(s) not in EAGLE_FAMILY:
        return None
    if not isinstance(topk, int) or topk <= 1:
        return None
    return Hit(("speculative_eagle_topk", "SGLANG_ENABLE_SPEC_V2"), {
        "env": s.env["SGLANG_ENABLE_SPEC_V2"], "topk": s.flag("speculative_eagle_topk"),
        "algo": algorithm(s), "topk_value": topk})


@predicate("spec-v2-removed")
def _spec_v2_removed(s: Settings, rule: RuleSpec) -> Hit | None:
    if "SGLANG_ENABLE_SPEC_V2" not in s.env:
        return None
    return Hit(("SGLANG_ENABLE_SPEC_V2",), {"no_overlap": s.flag("disable_overlap_schedule")})


def _spec_with_dp(s: Settings, algo: str) -> Hit | None:
    on, _, text = dp_attention(s)
    if algorithm(s) != algo or not on:
        return None
    return Hit(("attn_dp_size", "enable_dp_attention", "dp_size", "speculative_algorithm"), {"dp_text": text})


@predicate("spec-standalone-dp")
def _spec_standalone_dp(s: Settings, rule: RuleSpec) -> Hit | None:
    return _spec_with_dp(s, "STANDALONE")


@predicate("spec-ngram-dp")
def _spec_ngram_dp(s: Settings, rule: RuleSpec) -> Hit | None:
    return _spec_with_dp(s, "NGRAM")


@predicate("spec-draft-path-eagle3")
def _spec_draft_eagle3(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) != "EAGLE3" or s.get("speculative_draft_model_path") is not None:
        return None
    return Hit(("speculative_algorithm",), {"draft_path": s.flag("speculative_draft_model_path")})


@predicate("spec-draft-path-dflash")
def _spec_draft_dflash(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) != "DFLASH" or s.get("speculative_draft_model_path") is not None:
        return None
    return Hit(("speculative_algorithm",), {"draft_path": s.flag("speculative_draft_model_path")})


@predicate("spec-pp")
def _spec_pp(s: Settings, rule: RuleSpec) -> Hit | None:
    algo, pp = algorithm(s), _int(s, "pp_size", 1)
    if algo in (None, "NONE") or pp <= 1:
        return None
    if s.at_least(0, 5, 23) and s.get("disaggregation_mode") == "prefill" and algo == "EAGLE":
        return None  # 0.5.23 runs MTP with PP on prefill nodes
    return Hit(("pp_size", "speculative_algorithm"), {"algo": algo, "pp": s.flag("pp_size"), "pp_value": pp})


@predicate("nnodes-divides")
def _nnodes_divides(s: Settings, rule: RuleSpec) -> Hit | None:
    tp, pp, nnodes = _int(s, "tp_size", 1), _int(s, "pp_size", 1), _int(s, "nnodes", 1)
    if nnodes < 1 or (tp * pp) % nnodes == 0:
        return None
    return Hit(("nnodes", "tp_size", "pp_size"), {
        "tp": s.flag("tp_size"), "tp_value": tp, "pp": s.flag("pp_size"), "pp_value": pp,
        "product": tp * pp, "nnodes": s.flag("nnodes"), "nnodes_value": nnodes})


@predicate("multinode-dp")
def _multinode_dp(s: Settings, rule: RuleSpec) -> Hit | None:
    dp, nnodes = _int(s, "dp_size", 1), _int(s, "nnodes", 1)
    on, _, _ = dp_attention(s)
    if dp <= 1 or nnodes <= 1 or (on and not s.has("attn_dp_size")):
        return None
    if s.has("attn_dp_size") and on and not s.is_set("attn_dp_size"):
        return None  # 0.5.23 rewrites --dp-size N --enable-dp-attention to --attn-dp-size N
    fix = (f"use {s.flag('attn_dp_size')} N (DP attention) instead of {s.flag('dp_size')}"
           if s.has("attn_dp_size") else f"add {s.flag('enable_dp_attention')}, or run one replica per node")
    return Hit(("dp_size", "nnodes"), {"dp": s.flag("dp_size"), "dp_value": dp, "nnodes_value": nnodes,
                                       "fix": fix})


@predicate("dp-attn-divides")
def _dp_attn_divides(s: Settings, rule: RuleSpec) -> Hit | None:
    on, size, _ = dp_attention(s)
    tp = _int(s, "tp_size", 1)
    if not on or tp % size == 0:
        return None
    name = "attn_dp_size" if s.is_set("attn_dp_size") else "dp_size"
    return Hit((name, "tp_size"), {"tp": s.flag("tp_size"), "tp_value": tp, "dp": s.flag(name),
                                   "dp_value": size})


@predicate("dp-lm-head")
def _dp_lm_head(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_dp_lm_head", False):
        return None
    if s.has("attn_dp_size"):
        if dp_attention(s)[0]:
            return None
        fix = f"set {s.flag('attn_dp_size')} > 1, or drop {s.flag('enable_dp_lm_head')}"
    else:
        if s.get("enable_dp_attention", False):
            return None  # with --dp-size 1 both are turned off silently (warning X106)
        fix = f"add {s.flag('enable_dp_attention')}, or drop {s.flag('enable_dp_lm_head')}"
    return Hit(("enable_dp_lm_head",), {"lm_head": s.flag("enable_dp_lm_head"), "fix": fix})


@predicate("dp-attn-both")
def _dp_attn_both(s: Settings, rule: RuleSpec) -> Hit | None:
    dp, attn = _int(s, "dp_size", 1), _int(s, "attn_dp_size", 1)
    if dp <= 1 or attn <= 1:
        return None
    return Hit(("dp_size", "attn_dp_size"), {"dp": s.flag("dp_size"), "dp_value": dp,
                                             "attn_dp": s.flag("attn_dp_size"), "attn_dp_value": attn})


@predicate("dp-attn-rewrite")
def _dp_attn_rewrite(s: Settings, rule: RuleSpec) -> Hit | None:
    dp = _int(s, "dp_size", 1)
    if not s.get("enable_dp_attention", False) or dp <= 1 or _int(s, "attn_dp_size", 1) > 1:
        return None
    return Hit(("enable_dp_attention", "dp_size"), {
        "dp": s.flag("dp_size"), "dp_value": dp, "enable": s.flag("enable_dp_attention"),
        "attn_dp": s.flag("attn_dp_size")})


@predicate("dp1-disables-dpattn")
def _dp1_disables(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_dp_attention", False) or _int(s, "dp_size", 1) != 1:
        return None
    return Hit(("enable_dp_attention",), {"enable": s.flag("enable_dp_attention"), "dp": s.flag("dp_size")})


_HOST_PORT = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9._-]+)):(?P<port>\d{1,5})$")


def dist_init_addr_ok(value: str) -> bool:
    """``host:port`` or ``[v6]:port`` with a port in 1-65535 (what SGLang and NCCL split)."""
    match = _HOST_PORT.match(value)
    return bool(match) and 1 <= int(match.group("port")) <= 65535


@predicate("dist-init-addr-form")
def _dist_init_addr(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("dist_init_addr")
    if value is None or dist_init_addr_ok(str(value)):
        return None
    return Hit(("dist_init_addr",), {"dist": s.flag("dist_init_addr"), "value": value})


@predicate("multinode-needs-addr")
def _multinode_addr(s: Settings, rule: RuleSpec) -> Hit | None:
    nnodes = _int(s, "nnodes", 1)
    if nnodes <= 1 or s.get("dist_init_addr") is not None:
        return None
    return Hit(("nnodes",), {"nnodes": s.flag("nnodes"), "nnodes_value": nnodes,
                             "dist": s.flag("dist_init_addr")})


@predicate("node-rank-range")
def _node_rank(s: Settings, rule: RuleSpec) -> Hit | None:
    rank, nnodes = _int(s, "node_rank", 0), _int(s, "nnodes", 1)
    if 0 <= rank < max(nnodes, 1):
        return None
    return Hit(("node_rank", "nnodes"), {"rank": s.flag("node_rank"), "rank_value": rank,
                                         "nnodes": s.flag("nnodes"), "nnodes_value": nnodes})


@predicate("served-model-colon")
def _served_colon(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("served_model_name")
    if value is None or ":" not in str(value):
        return None
    return Hit(("served_model_name",), {"name": s.flag("served_model_name"), "value": value,
                                        "suggestion": str(value).replace(":", "-")})


@predicate("mem-fraction")
def _mem_fraction(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("mem_fraction_static")
    if not isinstance(value, (int, float)) or 0 < value < 1:
        return None
    return Hit(("mem_fraction_static",), {"mem": s.flag("mem_fraction_static"), "value": value})


@predicate("port-range")
def _port_range(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("port")
    if not isinstance(value, int) or 1 <= value <= 65535:
        return None
    return Hit(("port",), {"port": s.flag("port"), "value": value})


@predicate("port-grpc-0515")
def _port_grpc(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("port")
    if not isinstance(value, int) or value > 65535 or value + 10000 <= 65535 or "SGLANG_GRPC_PORT" in s.env:
        return None
    return Hit(("port",), {"port": s.flag("port"), "value": value, "grpc": value + 10000})


@predicate("tool-call-parser-qwen3")
def _tool_qwen3(s: Settings, rule: RuleSpec) -> Hit | None:
    return Hit(("tool_call_parser",), {}) if s.get("tool_call_parser") == "qwen3" else None
