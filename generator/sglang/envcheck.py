"""SGLang environment variables of a service, checked against the pin's environment catalog.

The catalog (``catalogs/sglang/<pin>.env.json``, captured by ``envprobe.py`` from the real
SGLang) lists the typed registry of ``sglang/srt/environ.py``, its deprecation tables and
the variables read ad hoc anywhere in the package, each with SGLang's own parse rule.
Only ``SGLANG_*`` and ``SGL_*`` names are checked; every other variable passes.

A bad value does not make SGLang fail: ``EnvField.get`` warns and uses the default, and
``get_bool_env_var`` reads anything it does not know as false. So a bad value is an error
here because SGLang would silently ignore it.

Codes: errors E001 unknown variable, E002 value SGLang would ignore, E003 not in this pin
(another committed pin has it; with this pin's successor), E006 a deprecated variable
SGLang maps onto a successor of the opposite sense (``DISABLE`` -> ``ENABLE``: the value
now does the opposite); warnings E101 deprecated or renamed by SGLang, E102 the old
``SGL_`` prefix.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from generator.errors import Diagnostics, Position
from generator.sglang.catalog import CatalogFormatError, read_data_text, version_key
from generator.load import json_text
from generator.sglang.sense import holds_in_order, inverted_bool, opposite_sense, same_model, slip, typo_distance

PREFIXES = ("SGLANG_", "SGL_")
_CLASS_OF_TYPE = {"bool": "EnvBool", "int": "EnvInt", "float": "EnvFloat", "str": "EnvStr",
                  "tuple": "EnvTuple", "json": "EnvJSON"}


@dataclass(frozen=True)
class EnvVar:
    """One variable SGLang reads: its type and the parse rules of its readers."""

    name: str
    type: str  # bool | int | float | str | tuple | json
    rules: tuple[str, ...]  # keys into EnvCatalog.parse_rules ("EnvBool", "file.py:function")
    default: Any = None
    registry: bool = False  # declared in sglang/srt/environ.py (else read ad hoc)


@dataclass(frozen=True)
class EnvCatalog:
    """The environment catalog of one pin, indexed for checking."""

    pin: str
    variables: Mapping[str, EnvVar]
    deprecated: Mapping[str, Mapping[str, Any]]  # name -> SGLang's deprecation entry
    aliases: Mapping[str, str]  # deprecated alias -> the registry name that reads it
    parse_rules: Mapping[str, Mapping[str, Any]]
    sgl_prefix: bool  # SGLang maps SGL_X to SGLANG_X (with a warning)


def env_catalog_path(catalog_file: Path, pin: str) -> Path:
    """``<pin>.env.json`` beside the flag catalog ``<pin>.json``."""
    return catalog_file.with_name(f"{pin}.env.json")


def load_env_catalog(path: Path, pin: str) -> EnvCatalog | None:
    """The env catalog at ``path`` (cached on its mtime), or None when there is none."""
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return None
    return _load_cached(path, pin, stamp)


@functools.lru_cache(maxsize=8)
def _load_cached(path: Path, pin: str, _stamp: int) -> EnvCatalog:
    # A catalog JSON is repository data a pull request can edit (and re-stamp): any other shape
    # than the env probe writes is an error naming the file, never a crash of the checks.
    try:
        return _from_data(json_text.loads(read_data_text(path)), pin)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        if isinstance(exc, CatalogFormatError):
            raise
        raise CatalogFormatError(f"{path}: malformed env catalog: {exc}; re-capture it with "
                                 "`gen sglang snapshot`") from exc


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} is a {type(value).__name__}, not text")
    return value


def _from_data(data: dict[str, Any], pin: str) -> EnvCatalog:
    """An EnvCatalog from the env probe's JSON (TypeError/KeyError where its shape differs)."""
    rules = data.get("parse_rules") or {}
    variables: dict[str, EnvVar] = {}
    aliases: dict[str, str] = {}
    for f in data["registry"]["fields"]:
        _text(f["name"], "a registry field's name")
        _text(f["type"], f"{f['name']}: its type")
        rule = f["class"] if f["class"] in rules else _CLASS_OF_TYPE.get(f["type"], "EnvStr")
        variables[f["name"]] = EnvVar(f["name"], f["type"], (rule,), f.get("default"), True)
        if f.get("deprecated_name"):
            aliases[f["deprecated_name"]] = f["name"]
    for v in data["adhoc"]["vars"]:
        if v["name"] is not None:
            _text(v["name"], "an ad-hoc variable's name")
        if v["name"] and v["name"] not in variables:
            # Only a variable every reader parses with a typed helper has a rule to check.
            typed = v["helpers"] and all(r.startswith("get_") for r in v["readers"])
            variables[v["name"]] = EnvVar(v["name"], v["type"] if typed else "str",
                                          tuple(v["helpers"]) if typed else ())
    deprecated = {d["name"]: d for d in data.get("deprecated") or []}
    prefix = any(p.get("from") == "SGL_" for p in data.get("prefix_renames") or [])
    return EnvCatalog(pin, variables, deprecated, aliases, rules, prefix)


# SGLang's converters a variable's parse rule names: a word they refuse is E002.
_CONVERTERS: dict[str, Callable[[str], Any]] = {"int": int, "float": float, "json.loads": json_text.loads}


def bad_value(var: EnvVar, value: str, rules: Mapping[str, Mapping[str, Any]]) -> str | None:
    """Why SGLang would not use ``value`` for ``var`` (its own parse rule), or None."""
    for key in var.rules:
        rule = rules.get(key) or {}
        word = value.strip() if rule.get("strip") else value
        if rule.get("case_insensitive"):
            word = word.lower()
        words = list(rule.get("true") or []) + list(rule.get("false") or [])
        converter = rule.get("converter")
        ok = True
        if words:
            ok = word in words
        elif converter in ("int", "float", "json.loads"):
            try:
                _CONVERTERS[converter](word)
            except ValueError:
                ok = False
        if ok:
            continue
        reader = key.rsplit("/", 1)[-1] if ":" in key else key
        accepts = f"accepts {'/'.join(words)}" + (" in any case" if rule.get("case_insensitive") else "") \
            if words else f"reads it with {converter}()"
        if rule.get("on_invalid") == "false":
            outcome = "and reads anything else as false"
        else:
            outcome = f"and otherwise warns and uses the default ({_shown(var.default)})"
        return f"{reader} {accepts}, {outcome}"
    return None


def _shown(default: Any) -> str:
    if isinstance(default, dict) and "expr" in default:
        return str(default["expr"])
    return json.dumps(default)


def check_env(env_catalog: EnvCatalog, others: Sequence[EnvCatalog],
              env: Sequence[tuple[str, str, Position]], diags: Diagnostics) -> None:
    """Check every SGLANG_/SGL_ variable of ``env`` (name, value, where written)."""
    for name, value, pos in env:
        if name.startswith(PREFIXES):
            _check_one(env_catalog, others, name, str(value), pos, diags)


def _check_one(cat: EnvCatalog, others: Sequence[EnvCatalog], name: str, value: str,
               pos: Position, diags: Diagnostics) -> None:
    pin = cat.pin
    dep = cat.deprecated.get(name)
    if dep is not None:
        new = dep.get("replacement") or dep.get("replacement_flag")
        renamed = dep.get("replacement")
        if isinstance(renamed, str) and opposite_sense(name, renamed):
            _inverted_successor(pin, name, value, renamed, "copies its value unchanged to" if dep.get("via") ==
                                "_print_deprecated_env" and not dep.get("transform") else "reads it as", pos, diags)
            return
        said = f" (SGLang: {dep['message']})" if dep.get("message") else ""
        use = f"; use {new}" if new else ""
        diags.warning(pos, "E101", f"'{name}' is deprecated in SGLang {pin}{use}{said}",
                      f"did you mean '{new}'?" if new else None)
        return
    if name in cat.aliases:
        new = cat.aliases[name]
        if opposite_sense(name, new):
            _inverted_successor(pin, name, value, new, "reads it as", pos, diags)
            return
        diags.warning(pos, "E101", f"'{name}' is a deprecated alias of '{new}' in SGLang {pin}",
                      f"did you mean '{new}'?")
        name = new
    var = cat.variables.get(name)
    if var is None and name.startswith("SGL_") and cat.sgl_prefix:
        new = "SGLANG_" + name[len("SGL_"):]
        if new in cat.variables:
            diags.warning(pos, "E102", f"'{name}': SGLang {pin} reads the old SGL_ prefix as "
                          f"'{new}' and warns; write '{new}'", f"did you mean '{new}'?")
            var = cat.variables[new]
    if var is None:
        _unknown(cat, others, name, pos, diags, value)
        return
    why = bad_value(var, value, cat.parse_rules)
    if why is not None:
        diags.error(pos, "E002", f"'{name}={value}' would be silently ignored by SGLang {pin}: "
                    f"it is a {var.type}, and {why}")


def _inverted_successor(pin: str, name: str, value: str, new: str, how: str, pos: Position,
                        diags: Diagnostics) -> None:
    """E006: SGLang maps a deprecated variable onto a successor that means the opposite."""
    flip = inverted_bool(value)
    fix = f"write {new}={flip} instead" if flip is not None else f"write {new} with the opposite value instead"
    diags.error(pos, "E006", f"'{name}' is deprecated in SGLang {pin}, which {how} '{new}'; the two names "
                f"mean opposite things, so '{name}={value}' does the opposite of what it says: {fix}",
                f"did you mean '{new}={flip}'?" if flip is not None else f"did you mean '{new}'?")


def _unknown(cat: EnvCatalog, others: Sequence[EnvCatalog], name: str, pos: Position,
             diags: Diagnostics, value: str = "") -> None:
    """E003 when another pin reads it (with this pin's successor, if that pin named one),
    else E001 with the names of this pin it could be a misspelling of."""
    here = version_key(cat.pin)
    for other in others:
        if name in other.variables or name in other.deprecated:
            there = version_key(other.pin)
            newer = here is not None and there is not None and there > here
            when = "appears in" if newer else "exists in"
            if name not in other.variables:
                when = "is deprecated in"
            text = (f"'{name}' is not read by SGLang {cat.pin} (it {when} SGLang {other.pin}): "
                    f"SGLang {cat.pin} would ignore it")
            new = (other.deprecated.get(name) or {}).get("replacement") or other.aliases.get(name)
            hint = None
            if new and new in cat.variables:
                if opposite_sense(name, new):
                    flip = inverted_bool(value)
                    text += (f"; its successor '{new}' means the opposite: write {new}={flip}" if flip is not None
                             else f"; its successor '{new}' means the opposite: write it with the opposite value")
                    hint = f"did you mean '{new}={flip}'?" if flip is not None else f"did you mean '{new}'?"
                else:
                    text += f"; use '{new}'"
                    hint = f"did you mean '{new}'?"
            diags.error(pos, "E003", text, hint)
            return
    close = close_names(name, cat.variables)
    hint = None
    if not close:  # a misspelling of a variable only another pin reads: say which
        for other in others:
            near = close_names(name, other.variables)
            if near:
                diags.error(pos, "E001", f"unknown SGLang variable '{name}' for SGLang {cat.pin}: SGLang would "
                            f"ignore it; the closest name, '{near[0]}', is read by SGLang {other.pin} only",
                            f"did you mean '{near[0]}' (SGLang {other.pin})?")
                return
    if close:
        shown = [f"'{c}' (the opposite sense: invert the value)" if opposite_sense(name, c) else f"'{c}'"
                 for c in close]
        hint = "did you mean " + " or ".join(shown) + "?"
    diags.error(pos, "E001", f"unknown SGLang variable '{name}' for SGLang {cat.pin}: SGLang "
                f"would ignore it (no reader of it in the package's source)", hint)


def close_names(name: str, names: Iterable[str], n: int = 3) -> list[str]:
    """Names ``name`` may be a misspelling of, best first: the same words run together or
    split (``SPECV2``/``SPEC_V2``) alone; else the names a typing slip away (sense.slip:
    ``..._DIRR``) or of the opposite sense (``DISABLE``/``ENABLE``), the closest only; else the names that
    hold all of its words in order with one or two more (a word left out:
    ``SGLANG_ENABLE_INFERENCE`` -> ``SGLANG_ENABLE_TORCH_INFERENCE_MODE``), fewest first.
    Never one that carries other numbers (``..._V2`` is not ``..._V3``), and never a
    neighbour by likeness alone (``..._THREAD_SIZE`` is not ``..._QUEUE_SIZE``)."""
    known = [k for k in names if same_model(name, k)]
    squash = name.replace("_", "").upper()
    same = [k for k in known if k.replace("_", "").upper() == squash]
    if same:
        return same[:n]
    near: dict[str, int] = {}
    for k in known:
        edits = slip(name.upper(), k.upper())
        if edits is not None:
            near[k] = edits
        elif opposite_sense(name, k):  # the same setting said the other way round (DISABLE/ENABLE)
            near[k] = typo_distance(squash, k.replace("_", "").upper())
    if near:
        best = min(near.values())
        return sorted(k for k, edits in near.items() if edits == best)[:n]
    words = [w for w in name.upper().split("_") if w]
    held: list[tuple[int, str]] = []
    for k in known:
        theirs = [w for w in k.upper().split("_") if w]
        if 0 < len(theirs) - len(words) <= 2 and holds_in_order(theirs, words):
            held.append((len(theirs) - len(words), k))
    return [k for _, k in sorted(held)][:n]


def _ruled_names(catalog_file: Path, pin: str) -> set[str]:
    """Variables a cross-flag rule of this pin explains itself (SGLANG_ENABLE_SPEC_V2):
    the rule's message says more than "not read", so this check leaves them to it."""
    from generator.sglang.rules import load_rules
    from generator.sglang.tables import tables_dir

    version = version_key(pin)
    names: set[str] = set()
    for rule in load_rules(tables_dir(catalog_file) / "rules.yaml"):
        if rule.versions.contains(version):
            names.update(w.strip("'\",.:;()") for w in rule.message.split() if w.startswith(PREFIXES))
    return names


def check_service_env(catalog_file: Path, pin: str, other_pins: Sequence[str], placement: Any,
                      diags: Diagnostics) -> None:
    """Check the variables a service's model and service manifests set (:func:`check_env_written`)."""
    check_env_written(catalog_file, pin, other_pins,
                      [(name, value, owner.pos("env", name, key=True))
                       for owner in (placement.model, placement.service) for name, value in owner.env], diags)


def check_env_written(catalog_file: Path, pin: str, other_pins: Sequence[str],
                      written: Sequence[tuple[str, str, Position]], diags: Diagnostics) -> None:
    """Check variables (name, value, where written) as ``gen check`` does: the reviewed table
    for CUDA/NCCL/TORCH/HF names, and SGLANG_/SGL_ names against the pin's env catalog.

    Used for a service's ``env:`` and for the environment words of ``gen import``. Nothing
    is checked against SGLang when the pin has no env catalog (one captured before them).
    """
    from generator.sglang import envknown

    known = [w for w in written if w[0].startswith(envknown.PREFIXES)]
    if known:
        envknown.check_known(envknown.load_table(envknown.table_path(catalog_file)), known, diags)
    # Most services set no SGLang variable: then no catalog is read at all.
    if not any(name.startswith(PREFIXES) for name, _, _ in written):
        return
    cat = load_env_catalog(env_catalog_path(catalog_file, pin), pin)
    if cat is None:
        return
    ruled = _ruled_names(catalog_file, pin)
    mine = [(name, str(value), pos) for name, value, pos in written if name.startswith(PREFIXES) and name not in ruled]
    if not mine:
        return
    others = [c for c in (load_env_catalog(env_catalog_path(catalog_file, p), p)
                          for p in other_pins if p != pin) if c is not None]
    check_env(cat, others, mine, diags)
