"""Fixes in the operator's own terms: a flag a manifest key wrote is named by that key.

SGLang's rules (catalogs/rules.yaml) speak of flags: ``write --tool-call-parser qwen``.
When the service got that flag from a manifest key (``parsers.tool_call``, ``parallel.tp``,
``port``, ...; :data:`generator.load.schema_docs.DOCS` names the key of each dest), the fix
is rewritten to the key: ``write `parsers.tool_call: qwen```. So is a flag the service does
not pass at all when a manifest key sets it (``set `speculative.eagle_topk```): that key is
where the operator writes it. A flag written under ``args:`` keeps its flag spelling, which
is what the operator wrote there. The pin's dest is matched to the key's through the flag
tables' dest groups (0.5.9 calls ``parallel.tp``'s flag ``tensor_parallel_size``).

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
from generator.sglang.catalog import Action, Catalog, FlagTables

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
# Flags whose value gen derives from a key rather than copying it (``multinode.hosts`` gives
# --node-rank and --nnodes): named by that key only when it wrote them, never as "set it there".
_DERIVED = frozenset({"nnodes", "node_rank", "dist_init_addr"})


def _key_of(dest: str, tables: FlagTables) -> tuple[str, tuple[str, ...]] | None:
    """The manifest key of a pin's dest (through its dest group), or None."""
    for name in tables.dest_names(dest):
        if name in KEYS:
            return KEYS[name]
    return None


def written_by_keys(p: Placement, argv: ServiceArgv, catalog: Catalog,
                    tables: FlagTables) -> dict[str, tuple[str, Action]]:
    """Option string -> (manifest key, action) of each flag of the pin a manifest key speaks for.

    A flag of ARGV counts when its position is exactly where its key's value is written (the
    model's or the service's), so the same flag under ``args:`` never does. A flag ARGV does
    not pass counts when a key sets it (not one gen derives, :data:`_DERIVED`), unless flags
    of that key's section are written under ``args:`` (``--speculative-eagle-topk`` there: the
    operator writes that section as flags, and ``speculative:`` would need its algorithm too)."""
    out: dict[str, tuple[str, Action]] = {}
    passed = set()
    as_flags = set()  # sections (``speculative``) some of whose flags ARGV has from args:
    for group in argv.groups:
        passed.add(group.action.dest)
        found = _key_of(group.action.dest, tables)
        if found is None:
            continue
        owner, path = found
        where = (p.model if owner == "model" else p.service).pos(*path)
        if where == group.pos and where.line:
            for option in group.action.option_strings:
                out[option] = (".".join(path), group.action)
        elif len(path) > 1:
            as_flags.add(path[0])
    for name, (_, path) in KEYS.items():
        if name in _DERIVED or path[0] in as_flags:
            continue
        for dest in tables.dest_names(name):
            action = catalog.by_dest(dest)
            if action is not None and dest not in passed:
                for option in action.option_strings:
                    out.setdefault(option, (".".join(path), action))
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
