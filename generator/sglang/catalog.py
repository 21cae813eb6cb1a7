"""SGLang flag catalogs: the CLI of one pinned SGLang, loaded from ``catalogs/sglang/<pin>.json``.

A catalog is data captured from the real SGLang parser (see ``catalogs/README.md``); this
module only reads it. Lookups follow argparse exactly, because the server's own
``argparse.ArgumentParser`` (``allow_abbrev`` on) is what finally reads the rendered words.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeVar

from generator.errors import CatalogMissingError, GenError
from generator.load.captured import MAX_CAPTURED_BYTES
from generator.load.files import read_file
from generator.load.pins import is_pin
from generator.load import json_text

CATALOG_FORMAT = 1

# argparse's prefix_chars for every SGLang parser (a plain ArgumentParser()).
_PREFIX_CHARS = "-"


class CatalogFormatError(GenError, ValueError):
    """A catalog file exists but cannot be read as format 1; it must be re-captured."""


def read_data_text(path: Path) -> str:
    """The text of one catalogs/ data file: a regular file only (no symlink, FIFO, device).

    catalogs/ is repo content a pull request controls: a FIFO there hung `gen check`, and a
    symlink read any file of the CI machine. Raises CatalogFormatError (exit 3), never hangs.
    """
    data, problem = read_file(path, str(path), limit=MAX_CAPTURED_BYTES)  # bounded: a PR controls it
    if problem is not None or data is None:
        raise CatalogFormatError(f"{problem}" if problem is not None else f"{path}: cannot be read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogFormatError(f"{path}: not UTF-8: {exc}") from exc


_Companion = TypeVar("_Companion")


def companion_path(catalog_file: Path, kind: str) -> Path:
    """``<pin>.KIND.json`` beside the flag catalog ``<pin>.json`` (env, architectures, devices)."""
    return catalog_file.with_name(catalog_file.name.removesuffix(".json") + f".{kind}.json")


def load_companion(catalog_file: Path, kind: str, parse: Callable[[Any], _Companion],
                   what: str) -> _Companion | None:
    """The companion file ``kind`` of a flag catalog as ``parse`` reads its JSON, or None when
    none was captured. Cached per file content stamp, so a re-captured file is re-read; a file
    ``parse`` refuses (ValueError, KeyError, TypeError, AttributeError: any other shape than
    its probe writes) is a CatalogFormatError saying it is not ``what``."""
    path = companion_path(catalog_file, kind)
    try:
        stamp = path.lstat()
    except OSError:
        return None
    found: _Companion = _load_companion(path, stamp.st_mtime_ns, stamp.st_size, parse, what)
    return found


@functools.lru_cache(maxsize=16)
def _load_companion(path: Path, mtime_ns: int, size: int, parse: Callable[[Any], Any], what: str) -> Any:
    """Parse one version of a companion file; the stamp arguments only key the cache."""
    try:
        return parse(json_text.loads(read_data_text(path)))  # any nesting is a format error
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CatalogFormatError(f"{path}: not {what}: {exc}; re-capture it with `gen sglang snapshot`") from exc


@dataclass(frozen=True)
class Deprecation:
    """SGLang marks an action deprecated; ``replacement`` is its suggested flag, if any."""

    replacement: str | None
    message: str
    fatal: bool = False  # SGLang rejects the flag (parser.error, exit 2) instead of warning


@dataclass(frozen=True)
class Action:
    """One argparse action of the SGLang parser, as captured in the catalog."""

    option_strings: tuple[str, ...]
    canonical: str
    dest: str
    kind: str
    type: str | None
    choices: tuple[str, ...] | None
    nargs: int | str | None
    # A JSON value (lists, dicts) is not hashable; it stays out of hash and equality.
    default: object = field(hash=False)
    help: str = ""
    deprecated: Deprecation | None = None
    # What the action stores without a value of its own (nargs "?" given bare, store_const,
    # SGLang's DeprecatedStore*Action); None when the catalog predates probe 2 or there is none.
    const: object = field(default=None, hash=False, compare=False)

    @property
    def takes_value(self) -> bool:
        """True when the action consumes argument words (nargs other than 0)."""
        return self.nargs != 0

    @property
    def negative(self) -> str | None:
        """The ``--no-x`` spelling of a BooleanOptionalAction, else None."""
        if self.kind != "boolean_optional":
            return None
        neg = "--no-" + self.canonical[2:]
        return neg if neg in self.option_strings else None


def _live_first(dest: str, candidates: list[Action]) -> Action:
    """Of the actions storing ``dest``: the live one, then the one whose canonical name spells it."""
    spelled = "--" + dest.replace("_", "-")
    return min(candidates, key=lambda a: (a.deprecated is not None or a.kind == "deprecated",
                                          a.canonical != spelled))


@dataclass(frozen=True, eq=False)
class Catalog:
    """The CLI of one SGLang pin: every action, with argparse-exact lookups.

    Equal and hashed by identity: one loaded catalog is one object (load_catalog caches it
    per file), so what derives from it alone can be kept per catalog (rules/settings.py).
    """

    pin: str
    version: str
    commit: str | None
    source_file: Path
    actions: tuple[Action, ...]
    allow_abbrev: bool = True  # the parser's own setting, captured as "parser.allow_abbrev"
    # Option string -> action, in catalog order (the parser's own order is not captured).
    _by_option: dict[str, Action] = field(init=False, repr=False, compare=False)
    # Dest -> the action that stores it (see by_dest), chosen once when the catalog is built.
    _by_dest: dict[str, Action] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_option: dict[str, Action] = {}
        by_dest: dict[str, list[Action]] = {}
        for action in self.actions:
            for opt in action.option_strings:
                by_option.setdefault(opt, action)
            by_dest.setdefault(action.dest, []).append(action)
        object.__setattr__(self, "_by_option", by_option)
        object.__setattr__(self, "_by_dest", {dest: _live_first(dest, found) for dest, found in by_dest.items()})

    @property
    def option_strings(self) -> tuple[str, ...]:
        """Every option string of every action (canonical names, aliases, ``--no-x``)."""
        return tuple(self._by_option)

    def by_option(self, opt: str) -> Action | None:
        """The action whose option strings contain ``opt`` exactly (canonical or alias)."""
        return self._by_option.get(opt)

    def by_dest(self, dest: str) -> Action | None:
        """The action that stores ``dest``.

        Several actions can share a dest (a deprecated spelling next to its successor);
        the live one wins, then the one whose canonical name spells the dest.
        """
        return self._by_dest.get(dest)

    def prefix_tuples(self, opt: str) -> list[tuple[Action, str, str | None]]:
        """argparse's ``_get_option_tuples`` for ``opt``: ``(action, option_string, explicit_arg)``.

        Mirrors ``_parse_optional``: returns [] when ``opt`` (or its part before ``=``) is
        itself an option string, since argparse takes an exact match before any prefix.
        One tuple per matching option *string*: two aliases of one action both matching
        still make the prefix ambiguous, exactly as argparse counts them
        (checked against Python 3.11's argparse and CPython main).
        """
        if len(opt) < 2 or opt[0] not in _PREFIX_CHARS or opt == "--":
            return []  # "--" ends the options for argparse; it never reaches prefix matching
        if opt in self._by_option:
            return []
        if "=" in opt and opt.split("=", 1)[0] in self._by_option:
            return []
        result: list[tuple[Action, str, str | None]] = []
        if opt[1] in _PREFIX_CHARS:
            if not self.allow_abbrev:
                return result
            # Long options are only split at "=".
            prefix, sep, explicit = opt.partition("=")
            for option_string, action in self._by_option.items():
                if option_string.startswith(prefix):
                    result.append((action, option_string, explicit if sep else None))
        else:
            # A single-dash word: "-x" may carry its value glued on ("-x4").
            short_prefix, short_explicit = opt[:2], opt[2:]
            for option_string, action in self._by_option.items():
                if option_string == short_prefix:
                    result.append((action, option_string, short_explicit))
                elif option_string.startswith(opt):
                    result.append((action, option_string, None))
        return result

    def prefix_matches(self, opt: str) -> list[Action]:
        """Actions ``opt`` abbreviates, one entry per matching option string (argparse semantics).

        Length 1: a unique abbreviation; more: argparse reports "ambiguous option";
        an exact option string is not a prefix (use ``by_option``).
        """
        return [action for action, _, _ in self.prefix_tuples(opt)]


def catalogs_dir(repo_root: Path) -> Path:
    """The folder holding one ``<pin>.json`` per SGLang pin."""
    return repo_root / "catalogs" / "sglang"


def _version_key(pin: str) -> tuple[int, tuple[int, ...], str]:
    """Sort releases numerically, then source-build pins (which carry no order) by name."""
    match = re.match(r"^(\d+(?:\.\d+)*)", pin)
    if match and not pin.startswith("git-"):
        return (0, tuple(int(p) for p in match.group(1).split(".")), pin)
    return (1, (), pin)


def version_key(version: str) -> tuple[int, ...] | None:
    """Numeric release tuple of a version string ("0.5.9" -> (0, 5, 9)), None when unknown."""
    match = re.match(r"^(\d+(?:\.\d+)*)", version or "")
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def known_pins(repo_root: Path) -> list[str]:
    """Pins with a committed catalog, releases in version order, then source builds."""
    folder = catalogs_dir(repo_root)
    if not folder.is_dir():
        return []
    # What folder.glob("*.json") lists (any entry, in the same order), from one scandir:
    # asked once per host, pathlib's glob cost a twentieth of a host's planning.
    try:
        with os.scandir(folder) as entries:
            stems = [e.name[:-5] for e in entries if e.name.endswith(".json")]
    except OSError:
        return []
    # <pin>.env.json, <pin>.checks.json, ... belong to a pin: a pin never ends in
    # ".<letters>" (load/pins.py), so no such stem is ever taken for a pin of its own.
    pins = [stem for stem in stems if is_pin(stem)]
    return sorted(pins, key=_version_key)


def _capture_howto(pin: str) -> str:
    """How to capture a catalog for ``pin`` (the two ``gen sglang snapshot`` forms)."""
    return (
        f"Capture it from the SGLang that host runs: "
        f"`gen sglang snapshot --python PATH --out catalogs/sglang/{pin}.json` "
        f"or `gen sglang snapshot --host NAME`"
    )


def _missing_message(repo_root: Path, pin: str) -> str:
    """The user message for a pin without a catalog: what exists and how to capture one."""
    known = known_pins(repo_root)
    have = ", ".join(known) if known else "none"
    return (
        f"no SGLang flag catalog for pin '{pin}' "
        f"(expected catalogs/sglang/{pin}.json; committed pins: {have}). "
        + _capture_howto(pin)
    )


def load_catalog(repo_root: Path, pin: str) -> Catalog:
    """Load ``catalogs/sglang/<pin>.json``; raises CatalogMissingError when there is none.

    Cached per file content stamp, so a re-captured catalog is re-read.
    """
    if not is_pin(pin):
        raise CatalogMissingError(
            f"'{pin}' is not an SGLang pin (a release such as 0.5.9, or git-<40 hex>). "
            + _capture_howto("<pin>")
        )
    path = catalogs_dir(repo_root) / f"{pin}.json"
    try:
        stat = path.lstat()  # a symlink is refused by read_data_text, not followed
    except FileNotFoundError:
        raise CatalogMissingError(_missing_message(repo_root, pin)) from None
    return _load_cached(path, pin, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _load_cached(path: Path, pin: str, mtime_ns: int, size: int) -> Catalog:
    """Parse one catalog file; the stamp arguments only key the cache."""
    try:
        data = json_text.loads(read_data_text(path))
    except (OSError, json.JSONDecodeError) as exc:
        raise CatalogFormatError(f"{path}: cannot read SGLang catalog: {exc}") from exc
    return catalog_from_data(data, pin=pin, source_file=path)


def _shape_problem(item: Any) -> str | None:
    """What in one ``actions`` entry does not have the shape a capture writes (None: all).

    A catalog JSON is repository data a pull request can edit (and re-stamp): a wrong type
    there reached the flag checks and crashed them (exit 4) instead of naming the file.
    """
    if not isinstance(item, dict):
        return f"an action is a {type(item).__name__}, not an object"
    strings = item.get("option_strings")
    if not isinstance(strings, list) or not strings or not all(isinstance(o, str) and o for o in strings):
        return "an action's option_strings is not a list of flags"
    shown = strings[0][:100]
    for key in ("canonical", "dest", "kind"):
        if not isinstance(item.get(key), str):
            return f"{shown}: {key} is not text"
    if item["canonical"] not in strings:
        return f"{shown}: canonical {item['canonical'][:100]!r} is not one of its option_strings"
    kinds = {"type": (str, type(None)), "help": (str, type(None)), "choices": (list, type(None)),
             "nargs": (int, str, type(None)), "deprecated": (dict, type(None)), "required": (bool, type(None))}
    for key, allowed in kinds.items():
        if not isinstance(item.get(key), allowed) or isinstance(item.get(key), bool) and bool not in allowed:
            return f"{shown}: {key} is a {type(item.get(key)).__name__}"
    nargs = item.get("nargs")
    if isinstance(nargs, str) and nargs not in ("?", "*", "+", "...", "A...") or \
            isinstance(nargs, int) and not isinstance(nargs, bool) and not 0 <= nargs <= 64:
        return f"{shown}: nargs {nargs!r} is not one argparse takes"
    return None


def action_from_data(item: dict[str, Any]) -> Action:
    """One catalog ``actions`` entry as an Action (ValueError when its shape is not a capture's)."""
    problem = _shape_problem(item)
    if problem is not None:
        raise ValueError(problem)
    dep = item.get("deprecated")
    choices = item.get("choices")
    return Action(
        option_strings=tuple(item["option_strings"]),
        canonical=item["canonical"],
        dest=item["dest"],
        kind=item["kind"],
        type=item.get("type"),
        # The format stores choices as strings already; str() guards a hand-made file.
        choices=None if choices is None else tuple(str(c) for c in choices),
        nargs=item.get("nargs"),
        default=item.get("default"),
        help=item.get("help") or "",
        deprecated=None if dep is None else Deprecation(
            dep.get("replacement"), dep.get("message", ""), bool(dep.get("fatal", False))),
        const=_plain_const(item.get("const")),
    )


def _plain_const(value: Any) -> Any:
    """A captured const; a value JSON could not hold (``{"repr": ...}``) is None."""
    return None if isinstance(value, dict) and set(value) == {"repr"} else value


def catalog_from_data(data: dict[str, Any], pin: str, source_file: Path) -> Catalog:
    """Build a Catalog from parsed JSON; raises CatalogFormatError naming the file."""
    if not isinstance(data, dict) or data.get("format") != CATALOG_FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise CatalogFormatError(
            f"{source_file}: SGLang catalog format {got!r} is not {CATALOG_FORMAT}; re-capture it "
            f"with `gen sglang snapshot`"
        )
    try:
        sglang = data["sglang"]
        parser = data.get("parser") or {}
        if parser.get("prefix_chars", _PREFIX_CHARS) != _PREFIX_CHARS:
            raise CatalogFormatError(
                f"{source_file}: parser prefix_chars {parser['prefix_chars']!r} is not "
                f"{_PREFIX_CHARS!r}; gen only reads SGLang's plain ArgumentParser"
            )
        actions = tuple(action_from_data(item) for item in data["actions"])
        return Catalog(
            pin=pin,
            version=str(sglang.get("version") or pin),
            commit=sglang.get("commit"),
            source_file=source_file,
            actions=actions,
            allow_abbrev=bool(parser.get("allow_abbrev", True)),
        )
    except KeyError as exc:
        raise CatalogFormatError(f"{source_file}: malformed SGLang catalog: missing {exc}") from exc
    except (TypeError, AttributeError, ValueError) as exc:  # a hand-made file: a wrong shape anywhere
        raise CatalogFormatError(f"{source_file}: malformed SGLang catalog: {exc}; re-capture it with "
                                 "`gen sglang snapshot`") from exc


# The curated tables live in tables.py; these names stay importable from here.
from generator.sglang.tables import (  # noqa: E402  (after Catalog: tables imports nothing of it)
    FlagTables, ForeignSpelling, load_flag_tables, tables_dir)

__all__ = ["Action", "Catalog", "CatalogFormatError", "Deprecation", "FlagTables", "ForeignSpelling",
           "known_pins", "load_catalog", "load_flag_tables", "tables_dir", "version_key"]
