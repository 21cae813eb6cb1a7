"""Capture SGLang's CLI as a gen flag catalog (catalogs/README.md, format 1) on stdout.

Runs INSIDE the Python that has SGLang installed, not gen's: standard library only,
no import of the ``generator`` package, and it works when piped on stdin
(``python - --commit HEX < sglang_probe.py``) as well as run as a file. It imports
``sglang.srt.server_args``, builds the parser exactly as SGLang's launcher does
(``ServerArgs.add_cli_args(argparse.ArgumentParser())``) and reads every action.

Output is deterministic (sorted actions, sorted keys, sets sorted) except
``captured.date``. Anything SGLang prints while importing is sent to stderr, so
stdout holds the JSON document alone.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.metadata
import json
import math
import os
import platform
import re
import sys
from collections.abc import Iterator
from typing import Any

FORMAT_VERSION = 1
PROBE_VERSION = 2
TOOL = "gen sglang snapshot"

# argparse's own action classes; anything else is SGLang's (or another library's).
_ARGPARSE_KINDS: dict[type, str] = {
    argparse._StoreAction: "store",
    argparse._StoreTrueAction: "store_true",
    argparse._StoreFalseAction: "store_false",
    argparse._StoreConstAction: "store_const",
    argparse._AppendAction: "append",
    argparse._AppendConstAction: "append_const",
    argparse._CountAction: "count",
    argparse._HelpAction: "help",
    argparse._VersionAction: "version",
    argparse.BooleanOptionalAction: "boolean_optional",
}
_PLAIN_TYPES: dict[Any, str] = {int: "int", float: "float", str: "str", bool: "bool"}

# Help text that marks the flag itself deprecated: "Deprecated. Use ...",
# "(Deprecated, use ...)", "(Deprecated: use ...)". Help that merely mentions some
# other deprecated thing ("Replaces the deprecated --grpc-mode") must not match, so
# only a leading marker counts, or "<this flag> is deprecated" (see _marked_deprecated).
_LEADING_DEPRECATED = re.compile(r"^\W*deprecated\b", re.IGNORECASE)
_FLAG_TOKEN = re.compile(r"--[A-Za-z0-9][A-Za-z0-9_-]*")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def action_kind(action: argparse.Action) -> str:
    """The catalog ``kind`` of an action: argparse's own name, ``deprecated``, or ``other:<Class>``.

    SGLang's deprecated-action classes (``DeprecatedAction`` in 0.5.9;
    ``DeprecatedAction``, ``DeprecatedStoreTrueAction``, ``DeprecatedStoreConstAction``,
    ``DeprecatedAliasStoreAction`` from 0.5.15) are recognised by class name, since
    their module moved between versions.
    """
    cls = type(action)
    if _is_deprecated_class(cls):
        return "deprecated"
    kind = _ARGPARSE_KINDS.get(cls)
    if kind is not None:
        return kind
    return f"other:{cls.__name__}"


def _is_deprecated_class(cls: type) -> bool:
    return any(
        base.__name__.startswith("Deprecated") and base.__name__.endswith("Action")
        for base in cls.__mro__
        if base.__module__ != "argparse"
    )


def callable_name(func: Any) -> str:
    """A stable dotted name for a type function: ``<module>.<qualname>``, never an address."""
    inner = getattr(
        func, "func", None
    )  # functools.partial keeps the wrapped function here
    if inner is not None and type(func).__name__ == "partial":
        return f"functools.partial({callable_name(inner)})"
    module = getattr(func, "__module__", None) or type(func).__module__
    qualname = getattr(func, "__qualname__", None) or type(func).__qualname__
    return f"{module}.{qualname}"


def type_name(func: Any) -> str | None:
    """The catalog ``type``: null, int/float/str/bool, or ``callable:<module>.<qualname>``."""
    if func is None:
        return None
    plain = _PLAIN_TYPES.get(func)
    if plain is not None:
        return plain
    return f"callable:{callable_name(func)}"


def json_value(value: Any) -> Any:
    """``value`` as JSON data; anything JSON cannot hold exactly becomes ``{"repr": ...}``."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)  # plain int, even for an IntEnum member
    if isinstance(value, float):
        return value if math.isfinite(value) else {"repr": repr(value)}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: json_value(v) for k, v in sorted(value.items())}
    return {"repr": _stable_repr(value)}


def _stable_repr(value: Any) -> str:
    # Default object reprs carry a memory address, which would change every capture.
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))


def choices_list(choices: Any) -> list[Any] | None:
    """The catalog ``choices``: JSON values in SGLang's order; unordered containers sorted."""
    if choices is None:
        return None
    if isinstance(choices, (set, frozenset)):
        return sorted(
            (json_value(c) for c in choices), key=lambda c: (type(c).__name__, repr(c))
        )
    if isinstance(choices, dict):
        return [json_value(c) for c in choices]  # argparse tests `in`, i.e. the keys
    return [json_value(c) for c in choices]


def canonical_option(action: argparse.Action, prefix_chars: str = "-") -> str:
    """argparse's own first name: the first long option string, else the first one, else dest."""
    longs = [
        s
        for s in action.option_strings
        if len(s) > 1 and s[0] in prefix_chars and s[1] in prefix_chars
    ]
    if longs:
        return longs[0]
    if action.option_strings:
        return action.option_strings[0]
    return action.dest


def _replacement(
    texts: list[str], own: set[str], canonical_of: dict[str, str]
) -> str | None:
    """The first flag named in ``texts`` that exists in this parser and is not this action."""
    for text in texts:
        for token in _FLAG_TOKEN.findall(text):
            token = token.rstrip("-_")
            if token in own:
                continue
            if token in canonical_of:
                return canonical_of[token]
    return None


def _marked_deprecated(action: argparse.Action) -> bool:
    # Python 3.13 added add_argument(..., deprecated=True); SGLang may use it one day.
    if getattr(action, "deprecated", False) is True:
        return True
    text = action.help if isinstance(action.help, str) else ""
    if _LEADING_DEPRECATED.search(text):
        return True
    return any(
        re.search(re.escape(opt) + r"\b[^.]*\bis deprecated\b", text, re.IGNORECASE)
        for opt in action.option_strings
    )


def deprecation(
    action: argparse.Action, canonical_of: dict[str, str]
) -> dict[str, Any] | None:
    """The catalog ``deprecated`` entry, or None when SGLang does not mark the flag deprecated.

    Deprecated-action classes always count; they may carry ``new_flag`` (0.5.15+) and
    ``error_message`` (then SGLang rejects the flag: ``fatal``). A plain action counts
    when its help text says the flag itself is deprecated, or when argparse itself
    marks it (``deprecated=True``, Python 3.13+). ``replacement`` is the
    canonical name of the first other flag of this parser named in ``new_flag``, the
    error message or the help, or null when none can be derived (e.g.
    ``--cuda-graph-backend-{decode,prefill}=disabled`` names no single flag).
    """
    by_class = _is_deprecated_class(type(action))
    if not by_class and not _marked_deprecated(action):
        return None
    help_text = action.help if isinstance(action.help, str) else ""
    new_flag = getattr(action, "new_flag", None) if by_class else None
    error_message = getattr(action, "error_message", None) if by_class else None
    texts = [
        t for t in (new_flag, error_message, help_text) if isinstance(t, str) and t
    ]
    message = (
        error_message or help_text or (f"Use {new_flag} instead." if new_flag else "")
    )
    if not message:
        message = f"{canonical_option(action)} is deprecated."
    return {
        "replacement": _replacement(texts, set(action.option_strings), canonical_of),
        "message": message,
        "fatal": bool(error_message),
    }


def read_action(
    action: argparse.Action, canonical_of: dict[str, str], prefix_chars: str = "-"
) -> dict[str, Any]:
    """One catalog entry for one argparse action (see catalogs/README.md for each key)."""
    nargs = action.nargs
    return {
        "option_strings": list(action.option_strings),
        "canonical": canonical_option(action, prefix_chars),
        "dest": action.dest,
        "kind": action_kind(action),
        "type": type_name(action.type),
        "choices": choices_list(action.choices),
        "nargs": nargs
        if nargs is None or isinstance(nargs, (int, str))
        else _stable_repr(nargs),
        "default": json_value(action.default),
        "required": bool(action.required),
        "help": action.help if isinstance(action.help, str) else None,
        "deprecated": deprecation(action, canonical_of),
        # what the action stores without a value of its own (SGLang's DeprecatedStoreConstAction
        # keeps it as const_value)
        "const": json_value(getattr(action, "const_value", action.const)),
    }


def read_parser(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """The ``parser`` facts and the sorted ``actions`` list of a catalog, from any parser."""
    canonical_of: dict[str, str] = {}
    for action in parser._actions:
        for opt in action.option_strings:
            canonical_of[opt] = canonical_option(action, parser.prefix_chars)
    actions = [
        read_action(a, canonical_of, parser.prefix_chars) for a in parser._actions
    ]
    actions.sort(key=lambda entry: entry["canonical"])
    return {
        "parser": {
            "allow_abbrev": bool(parser.allow_abbrev),
            "prefix_chars": parser.prefix_chars,
        },
        "actions": actions,
    }


def sglang_info(commit: str | None) -> dict[str, Any]:
    """Version, commit and install source of the SGLang importable here.

    ``source``: ``git`` when a commit is known (passed in, or recorded by pip for a
    VCS install), ``pypi`` for an index install (no direct_url.json), ``local`` for a
    path or editable install without a known commit.
    """
    try:
        dist = importlib.metadata.distribution("sglang")
        version = dist.version
        direct_url_text = dist.read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        import sglang  # a source checkout on sys.path without metadata

        version = str(getattr(sglang, "__version__", "unknown"))
        direct_url_text = "{}"
    direct_url = json.loads(direct_url_text) if direct_url_text else None
    if commit is None and direct_url:
        commit = direct_url.get("vcs_info", {}).get("commit_id")
    if commit is not None:
        source = "git"
    elif direct_url is None:
        source = "pypi"
    else:
        source = "local"
    return {"version": version, "commit": commit, "source": source}


def build_catalog(
    parser: argparse.ArgumentParser, sglang: dict[str, Any], date: str
) -> dict[str, Any]:
    """The whole catalog document for ``parser``, as described in catalogs/README.md."""
    read = read_parser(parser)
    return {
        "format": FORMAT_VERSION,
        "sglang": sglang,
        "captured": {
            "tool": TOOL,
            "probe": PROBE_VERSION,
            "python": platform.python_version(),
            "date": date,
        },
        "parser": read["parser"],
        "actions": read["actions"],
    }


def dumps(catalog: dict[str, Any]) -> str:
    """The catalog's canonical text: indent=1, sorted keys, final newline."""
    # ASCII only: the text crosses pipes and ssh whatever their locale, and stays byte-stable.
    return (
        json.dumps(
            catalog, indent=1, sort_keys=True, ensure_ascii=True, allow_nan=False
        )
        + "\n"
    )


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send everything written to stdout (Python and file descriptor 1) to stderr meanwhile."""
    sys.stdout.flush()
    saved_fd = os.dup(1)
    saved_stream = sys.stdout
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved_fd, 1)
        os.close(saved_fd)
        sys.stdout = saved_stream


def sglang_parser() -> argparse.ArgumentParser:
    """SGLang's launch parser, built the way ``sglang.launch_server`` builds it."""
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Print the catalog of the SGLang importable by this Python; exit 1 when it cannot."""
    cli = argparse.ArgumentParser(
        prog="sglang_probe", description=__doc__.splitlines()[0]
    )
    cli.add_argument("--commit", help="git commit of a source install (40 hex digits)")
    args = cli.parse_args(argv)
    if args.commit is not None and not _COMMIT.fullmatch(args.commit):
        cli.error(f"--commit must be 40 lowercase hex digits, got {args.commit!r}")
    try:
        with stdout_to_stderr():
            parser = sglang_parser()
            info = sglang_info(args.commit)
    except Exception as exc:  # noqa: BLE001  (any import failure: one clear line plus traceback)
        import traceback

        traceback.print_exc()
        print(
            f"sglang_probe: cannot read SGLang's CLI: {type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
        return 1
    date = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    sys.stdout.write(dumps(build_catalog(parser, info, date)))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
