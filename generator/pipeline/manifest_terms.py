"""Fixes in the operator's own terms: a flag a manifest key wrote is named by that key.

SGLang's rules (catalogs/rules.yaml) speak of flags: ``write --tool-call-parser qwen``.
When the service got that flag from a manifest key (``parsers.tool_call``, ``parallel.tp``,
``port``, ...; :data:`generator.load.schema_docs.DOCS` names the key of each dest), the fix
is rewritten to the key: ``write `parsers.tool_call: qwen```. A flag written under
``args:`` keeps its flag spelling, which is what the operator wrote there.

Only a whole option string is rewritten (not ``--tp-size`` inside ``--tp-size-x``), with
its value when the next word is one the flag takes (a choice, a number, a switch's
true/false), else as the bare key. A fix whose flag is followed by anything else is left
as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace

from generator.errors import Diagnostic
from generator.load.schema_docs import DOCS
from generator.plan.argv import ServiceArgv
from generator.plan.placement import Placement
from generator.sglang.catalog import Action

_MODEL, _SERVICE = "model.", "host.services."
# Words that may follow a flag's name without being its value: the bare key is written.
_AFTER_NAME = frozenset({"or", "and", "to", "with", "without", "on", "off", "in", "from", "for", "is", "are",
                         "when", "if", "then", "unset", "set", "(", ")", ",", ";", ":", "."})


def _keys() -> dict[str, tuple[str, tuple[str, ...]]]:
    """dest -> (``model`` or ``service``, the key's path), for every documented key that sets a flag."""
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for path, doc in DOCS.items():
        if not doc.flag or "<" in path:
            continue
        if path.startswith(_SERVICE):
            out.setdefault(doc.flag, ("service", tuple(path[len(_SERVICE):].split("."))))
        elif path.startswith(_MODEL):
            out.setdefault(doc.flag, ("model", tuple(path[len(_MODEL):].split("."))))
    return out


KEYS = _keys()


def written_by_keys(p: Placement, argv: ServiceArgv) -> dict[str, tuple[str, Action]]:
    """Option string -> (manifest key, action) of each flag of ARGV that a manifest key wrote.

    A flag counts when its position is exactly where its key's value is written (the model's
    or the service's), so the same flag under ``args:`` never does."""
    out: dict[str, tuple[str, Action]] = {}
    for group in argv.groups:
        found = KEYS.get(group.action.dest)
        if found is None:
            continue
        owner, path = found
        where = (p.model if owner == "model" else p.service).pos(*path)
        if where == group.pos and where.line:
            for option in group.action.option_strings:
                out[option] = (".".join(path), group.action)
    return out


def _takes(action: Action, word: str) -> bool:
    """Whether WORD reads as a value of ACTION (so ``flag word`` becomes ``key: word``)."""
    word = word.rstrip(".,;:)")
    if action.choices:
        return word in {str(c) for c in action.choices}
    if action.nargs == 0:
        return word in ("true", "false")
    if action.type in ("int", "float"):
        return re.fullmatch(r"-?\d+(\.\d+)?", word) is not None
    return False


def in_manifest_terms(text: str, flags: Mapping[str, tuple[str, Action]]) -> str:
    """TEXT with each whole option string of FLAGS named by its manifest key."""
    if not flags or "--" not in text:
        return text
    pattern = re.compile(r"(?<![\w-])(" + "|".join(re.escape(f) for f in sorted(flags, key=len, reverse=True))
                         + r")(?![\w-])(?: (\S+))?")

    def swap(found: re.Match[str]) -> str:
        key, action = flags[found.group(1)]
        word = found.group(2)
        if word is not None and _takes(action, word):
            value = word.rstrip(".,;:)")
            return f"`{key}: {value}`" + word[len(value):]
        if word is None or word in _AFTER_NAME or word[0] in ",;:.()" or word.startswith("--"):
            return f"`{key}`" + (f" {word}" if word is not None else "")
        return found.group(0)  # a shape this does not know: the flag stays

    return pattern.sub(swap, text)


def rewrite_fixes(diagnostics: Iterable[Diagnostic], flags: Mapping[str, tuple[str, Action]],
                  files: Iterable[str]) -> list[Diagnostic]:
    """The DIAGNOSTICS positioned in FILES (the service's model and host files) with their
    fixes in manifest terms; others as they are."""
    where = set(files)
    out = []
    for d in diagnostics:
        if d.hint and d.pos.path in where:
            hint = in_manifest_terms(d.hint, flags)
            if hint != d.hint:
                d = replace(d, hint=hint)
        out.append(d)
    return out
