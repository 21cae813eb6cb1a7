"""Reading catalogs/rules.yaml: positioned YAML, its schema, then what only rules can get wrong.

Every problem is a positioned diagnostic (see generator/sglang/datafiles.py for the codes),
all of them at once; a broken file raises DataFileError, which the CLI reports with exit 1.
"""

from __future__ import annotations

import functools
import string
from pathlib import Path
from typing import Any

from generator.codes import REGISTRY, rule_code_severity
from generator.errors import Diagnostics, Severity
from generator.load.manifests import Document
from generator.sglang.catalog import Catalog, tables_dir
from generator.sglang.datafiles import RULES_SCHEMA, load_data_file, raise_if_errors
from generator.sglang.rules.fields import Fields, predicate_fields, resolved_item_fields
from generator.sglang.rules.message import LIST_STYLES
from generator.sglang.rules.texts import TEMPLATE_KEYS, template_problem, templates_of
from generator.sglang.rules.registry import PREDICATES
from generator.sglang.rules.spec import RuleSpec, RulesFormatError, VersionRange
from generator.sglang.rules.when import When, WhenError, compile_when

RULES_FILE = "rules.yaml"
_SEVERITIES = {"error": Severity.ERROR, "warning": Severity.WARNING}


def rules_path(catalog: Catalog) -> Path:
    """catalogs/rules.yaml beside the catalog's flag tables."""
    return tables_dir(catalog.source_file) / RULES_FILE


def load_rules(path: Path) -> tuple[RuleSpec, ...]:
    """Read and check rules.yaml (cached on the file's mtime); DataFileError when broken or missing
    (a catalogs/ folder without its rules.yaml was an internal error: the file's stat raised)."""
    try:
        stamp = path.lstat().st_mtime_ns
    except OSError:
        stamp = -1  # load_data_file says what is wrong (Y008), positioned at the file
    return _load_rules_cached(path, stamp)


@functools.lru_cache(maxsize=4)
def _load_rules_cached(path: Path, _mtime: int) -> tuple[RuleSpec, ...]:
    diags = Diagnostics()
    doc = load_data_file(path, RULES_SCHEMA, diags)
    out = _specs(doc, diags) if doc is not None else []
    raise_if_errors(diags)
    return tuple(out)


def _range(doc: Document, path: tuple[Any, ...], text: str, diags: Diagnostics,
           key: bool = False) -> VersionRange | None:
    """A version range, or C014 at its position."""
    try:
        return VersionRange.parse(text)
    except RulesFormatError:
        diags.error(doc.pos(path, key=key), "C014",
                    f"bad version range {text!r}: write \"all\" or comma-joined bounds "
                    f"like \">=0.5.15,<0.5.23\"")
        return None


def _specs(doc: Document, diags: Diagnostics) -> list[RuleSpec]:
    """The rules of a schema-valid document, with ids, codes and ranges checked."""
    out: list[RuleSpec] = []
    first_id: dict[str, int] = {}
    first_code: dict[str, str] = {}
    for i, item in enumerate(doc.data["rules"]):
        at = ("rules", i)
        rid, code, severity = item["id"], item["code"], _SEVERITIES[item["severity"]]
        versions = _range(doc, at + ("versions",), item["versions"], diags)
        params_ok = all([_range(doc, at + ("params", name, text), str(text), diags, key=True) is not None
                         for name, table in (item.get("params") or {}).items() for text in table])
        if code in REGISTRY:  # M001-M012 are gen's own checkpoint codes (generator/codes.py)
            diags.error(doc.pos(at + ("code",)), "C012",
                        f"rule '{rid}': code {code} is a code of generator/codes.py, not free for a rule")
        if rule_code_severity(code) is not severity:
            letter = code[0] if code[:1] in ("X", "G") else "X"  # the code's own family
            family = f"{letter}0xx or {letter}2xx" if severity is Severity.ERROR else f"{letter}1xx"
            diags.error(doc.pos(at + ("code",)), "C013",
                        f"rule '{rid}': code {code} does not fit severity {item['severity']} ({family})")
        if rid in first_id:
            diags.error(doc.pos(at + ("id",)), "C012",
                        f"rule id '{rid}' is used twice (first at rules[{first_id[rid]}])")
        if code in first_code:
            diags.error(doc.pos(at + ("code",)), "C012",
                        f"code {code} is used by '{first_code[code]}' and '{rid}'")
        when = _when(doc, at, item, diags)
        if "when" not in item and rid not in PREDICATES:
            diags.error(doc.pos(at + ("id",)), "C010",
                        f"rule '{rid}' has no predicate in generator/sglang/rules/predicates/",
                        _hint(rid, set(PREDICATES) - {r.id for r in out} - {rid}))
        if "when" in item and rid in PREDICATES:
            diags.error(doc.pos(at + ("when",), key=True), "C031",
                        f"rule '{rid}' has a when: condition and a predicate: keep one")
        _templates(doc, at, item, diags)
        first_id.setdefault(rid, i)
        first_code.setdefault(code, rid)
        if versions is not None and params_ok:  # a bad range is C014, above
            out.append(RuleSpec(id=rid, code=code, versions=versions, severity=severity,
                                enforced=item["enforced"], message=item["message"],
                                fix=item["fix"], evidence=item["evidence"],
                                params=item.get("params") or {}, checks=item.get("checks") or {},
                                items=item.get("items") or {}, when=when))
    for rid in sorted(set(PREDICATES) - set(first_id)):
        diags.error(doc.pos(("rules",), key=True), "C011",
                    f"predicate '{rid}' has no rule in {doc.path}: add its entry or remove it")
    return out


def _when(doc: Document, at: tuple[Any, ...], item: dict[str, Any], diags: Diagnostics) -> When | None:
    """A declarative rule's compiled condition, or C030 at the part that is malformed."""
    if "when" not in item:
        if "blame" in item:
            diags.error(doc.pos(at + ("blame",), key=True), "C030",
                        f"rule '{item['id']}': blame: belongs to a declarative rule (with when:)")
        return None
    try:
        test = compile_when(item["when"])
    except WhenError as exc:
        diags.error(doc.pos(at + ("when",) + exc.path), "C030", f"rule '{item['id']}': when: {exc}")
        return None
    if not item.get("blame"):
        diags.error(doc.pos(at + ("when",), key=True), "C030",
                    f"rule '{item['id']}': a declarative rule names the settings to blame (blame: [...])")
        return None
    return When(test, tuple(item["blame"]), plain_data(item["when"]))


def plain_data(data: Any) -> Any:
    """A YAML condition as plain lists and dicts (ruamel's commented containers dropped)."""
    if isinstance(data, dict):
        return {str(k): plain_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [plain_data(v) for v in data]
    return data


# The fields a declarative rule's texts can use (a predicate's rule may use its own fields too).
_READERS = ("flag", "value", "env", "version")
# The readers of a setting or variable: the part after the dot names it, not a field.
_SETTING_READERS = frozenset({"flag", "negated", "value", "env"})


def _templates(doc: Document, at: tuple[Any, ...], item: dict[str, Any], diags: Diagnostics) -> None:
    """Every text of the rule is a template of named placeholders and nothing else (C032), and
    names only fields the text is given (C019).

    One check for every template wherever it stands (texts.templates_of): texts.template_problem
    refuses a format spec, a conversion, an index, an attribute walk or an unnamed placeholder;
    a declarative rule's texts may use only the readers, as it has no predicate fields.
    """
    bad = False
    for path, text in templates_of(item):
        problem = template_problem(text)
        if problem is not None:
            diags.error(doc.pos(at + path), "C032", f"rule '{item['id']}': {path[-1]}: {problem}")
            bad = True
            continue
        roots = {f.split(".")[0] for _, f, _, _ in string.Formatter().parse(text) if f is not None}
        if "when" in item and roots - set(_READERS):
            diags.error(doc.pos(at + path), "C032",
                        f"rule '{item['id']}': {path[-1]}: a declarative rule's text can use only "
                        f"{{flag.NAME}}, {{value.NAME}}, {{env.VAR}} and {{version}}, not "
                        f"{', '.join('{' + r + '}' for r in sorted(roots - set(_READERS)))}")
            bad = True
    if not bad and "when" not in item and item["id"] in PREDICATES:
        _fields_given(doc, at, item, predicate_fields(PREDICATES[item["id"]]), diags)


def _named(text: str) -> list[tuple[str, str]]:
    """The fields a template names, each with its placeholder: ``{algo}`` algo, ``{list.known}`` known
    (a list style joins a field); the readers of a setting or variable (``{flag.tp_size}``) name none."""
    out = []
    for _, field, _, _ in string.Formatter().parse(text):
        if field is None:
            continue
        root, _, name = field.partition(".")
        if root in LIST_STYLES:
            out.append((name, "{" + field + "}"))
        elif root not in _SETTING_READERS and root != "version":
            out.append((root, "{" + field + "}"))
    return out


def _fields_given(doc: Document, at: tuple[Any, ...], item: dict[str, Any], given: Fields,
                  diags: Diagnostics) -> None:
    """C019 at a text that names a field it is never given, which would print as written.

    What each text is given (rules/message.py): a check's texts, the fields of the predicate's
    hits; the message and fix, those and the texts of the broken check (each check then defines
    every such text the message and fix print); an item's text, the item's own fields.
    """
    checks: dict[str, dict[str, Any]] = item.get("checks") or {}
    check_texts = {name for texts in checks.values() for name in texts}
    rid = item["id"]
    for path, text in templates_of(item):
        kind = path[0]
        allowed = (given.item | resolved_item_fields() if kind == "items"
                   else given.hit if kind == "checks" else given.hit | check_texts)
        for name, shown in _named(text):
            if name not in allowed:
                diags.error(doc.pos(at + path), "C019",
                            f"rule '{rid}': {path[-1]}: {shown} names a field the predicate never passes "
                            f"(it would print as written)", _given_hint(name, allowed, kind))
            elif kind in TEMPLATE_KEYS and name in check_texts - given.hit:
                lacking = sorted(c for c, texts in checks.items() if name not in texts)
                if lacking:
                    diags.error(doc.pos(at + path), "C019",
                                f"rule '{rid}': {path[-1]}: {shown} is a text of the broken check, and "
                                f"check{'s' if len(lacking) > 1 else ''} {', '.join(lacking)} "
                                f"{'have' if len(lacking) > 1 else 'has'} none (it would print as written)",
                                f"add {name}: to {'each of them' if len(lacking) > 1 else 'it'}")


def _given_hint(name: str, allowed: frozenset[str] | set[str], kind: str) -> str:
    from generator.load.schema import suggest

    found = suggest(name, sorted(allowed))
    where = "an item's text prints the item's own fields" if kind == "items" else \
        "a check's text prints the predicate's fields" if kind == "checks" else \
        "the message and fix print the predicate's fields and the broken check's texts"
    known = ", ".join(sorted(allowed)) or "none"
    return (f"did you mean '{found}'? " if found else "") + f"{where} ({known}), and the readers"


def _hint(word: str, candidates: set[str]) -> str | None:
    """did-you-mean among the predicates no rule has claimed yet."""
    from generator.load.schema import suggest

    found = suggest(word, sorted(candidates))
    return f"did you mean '{found}'?" if found else None
