"""``gen import``: turn a model-card command or an old unit's ExecStart into a model manifest.

The command is split (:mod:`generator.importer.cmdline`), its program recognised
(``python -m sglang.launch_server``, ``python3 -m ...``, ``sglang serve``, optionally
behind ``VAR=value``/``env``/``nohup``/``exec`` prefixes), and its flags grouped into
arguments the way argparse would group them, using the pin's catalog for how many
values each flag takes. The flags then go through the same checks as a rendered
service (:func:`generator.sglang.flags.check_args`), so every misspelling, abbreviation,
foreign spelling, removed flag, bad choice or bad value is a positioned diagnostic.

Only when nothing is an error is a manifest produced: flags that map to a structured
manifest field become that field (model path -> ``weights.path``, tp -> ``parallel.tp``,
speculative flags -> ``speculative.*``, parsers, memory fraction, served name,
``trust_remote_code``, dtype, context length), the rest stay under ``args:`` by their
canonical name, and every normalization is written as a comment above its line.

What a command cannot say is not invented: ``weights.size_gb`` (and ``weights.path``
when the command names a Hugging Face repo instead of a folder) are printed as
``null`` with a ``REQUIRED`` comment unless given on the command line; ``gen check``
refuses the manifest until they are filled in.

Codes (family I): see :mod:`generator.importer.cmdline` for I001-I004; I005 not an SGLang
launch command, I006 stray word (SGLang takes no positional arguments), I007 a value the
operator must fill in (warning), I008 dropped because gen sets it per host or service
(warning: ``--host``, ``--port``, ``CUDA_VISIBLE_DEVICES``). A value after a switch is
F006, as for a manifest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from generator.emit.secrets import is_secret_action, is_secret_env_name
from generator.sglang.catalog import Action, Catalog, load_flag_tables
from generator.importer.cmdline import Word, split_command
from generator import systemd
from generator.errors import Diagnostic, Diagnostics, Position, Severity
from generator.sglang.flags import Arg, ArgValue, CheckedArg, check_args
from generator.sglang.rules import evaluate, load_rules, rules_path, settings_from_words

_PYTHON = re.compile(r"^(?:.*/)?python(?:3(?:\.\d+)?)?$")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")  # argparse reads these as values
_PREFIX_WORDS = {"nohup": "nohup", "exec": "exec", "env": "env"}
# Python options that may stand before "-m" (those taking a value take the next word).
_PY_SWITCHES = {"-u", "-O", "-OO", "-B", "-s", "-S", "-E", "-I", "-q"}
_PY_VALUED = {"-X", "-W"}
_SAFE_PLAIN = re.compile(r"^[A-Za-z0-9_/][A-Za-z0-9_./@+-]*$")
_YAML_SPECIAL = re.compile(
    r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
    r"|null|Null|NULL|~|[-+]?(?:\d[\d_]*)?(?:\.\d*)?(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+|0o?[0-7]+"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|\d+(?::\d+)+)$")
# Manifest fields set from one SGLang dest (the first dest of each setting's group).
_STRUCTURED: dict[str, tuple[str, ...]] = {
    "model_path": ("weights", "path"),
    "served_model_name": ("served_model_name",),
    "trust_remote_code": ("trust_remote_code",),
    "dtype": ("dtype",),
    "context_length": ("context_length",),
    "tp_size": ("parallel", "tp"),
    "pp_size": ("parallel", "pp"),
    "dp_size": ("parallel", "dp"),
    "ep_size": ("parallel", "ep"),
    "enable_dp_attention": ("parallel", "dp_attention"),
    "mem_fraction_static": ("memory", "mem_fraction_static"),
    "speculative_algorithm": ("speculative", "algorithm"),
    "speculative_draft_model_path": ("speculative", "draft_model_path"),
    "speculative_num_steps": ("speculative", "num_steps"),
    "speculative_eagle_topk": ("speculative", "eagle_topk"),
    "speculative_num_draft_tokens": ("speculative", "num_draft_tokens"),
    "reasoning_parser": ("parsers", "reasoning"),
    "tool_call_parser": ("parsers", "tool_call"),
}
_INT_FIELDS = {"context_length", "tp", "pp", "dp", "ep", "num_steps", "eagle_topk",
               "num_draft_tokens"}
_SET_BY_GEN = {"host": "the service's 'listen:' in hosts/<host>.yaml",
               "port": "the service's 'port:' in hosts/<host>.yaml"}
_SECTION_ORDER = ("name", "description", "weights", "served_model_name", "dtype",
                  "trust_remote_code", "context_length", "parallel", "speculative", "parsers",
                  "memory", "args", "env")


@dataclass(frozen=True)
class ImportResult:
    """Findings, and the manifest text (None when any finding is an error)."""

    diagnostics: tuple[Diagnostic, ...]
    manifest: str | None

    @property
    def ok(self) -> bool:
        """True when no finding is an error."""
        return not any(d.is_error for d in self.diagnostics)


@dataclass
class _Entry:
    """One manifest value with the notes to write above it."""

    value: Any
    notes: list[str] = field(default_factory=list)


def _looks_like_option(word: str) -> bool:
    return word.startswith("-") and len(word) > 1 and not _NEGATIVE_NUMBER.match(word)


def _program(words: Sequence[Word], diags: Diagnostics,
             notes: list[str]) -> tuple[int, list[Word]] | None:
    """Index of the first SGLang flag, and the ``VAR=value`` words before the program."""
    env: list[Word] = []
    i = 0
    while i < len(words):
        w = words[i].text
        if _ENV_ASSIGN.match(w):
            env.append(words[i])
        elif w in _PREFIX_WORDS:
            notes.append(f"'{w}' before the command dropped: systemd runs the server")
        else:
            break
        i += 1
    if i == len(words):
        diags.error(words[-1].pos if words else Position("<command>"), "I005",
                    "no command found: expected `python -m sglang.launch_server ...` or "
                    "`sglang serve ...`")
        return None
    first = words[i]
    name = PurePosixPath(first.text).name
    j = i + 1
    while j < len(words) and (words[j].text in _PY_SWITCHES or words[j].text in _PY_VALUED):
        j += 2 if words[j].text in _PY_VALUED else 1
    # Any interpreter path counts (a venv's bin/python, /opt/sglang/bin/py3...) when it runs
    # the launcher module.
    if j + 1 < len(words) and words[j].text == "-m" and words[j + 1].text == "sglang.launch_server":
        notes.append(f"'{' '.join(w.text for w in words[i:j + 2])}' dropped: the service "
                     "runs the host's own sglang.python")
        return j + 2, env
    if _PYTHON.match(first.text):
        diags.error(first.pos, "I005",
                    f"'{first.text}' does not run `-m sglang.launch_server`; gen imports SGLang "
                    "server commands only")
        return None
    if name == "sglang" and i + 1 < len(words) and words[i + 1].text == "serve":
        notes.append(f"'{first.text} serve' dropped: the service runs the host's own "
                     "`sglang.python -m sglang.launch_server`, which takes the same flags")
        return i + 2, env
    if _looks_like_option(first.text):
        notes.append("flags without a program: read as `python -m sglang.launch_server` flags")
        return i, env
    diags.error(first.pos, "I005",
                f"'{first.text}' is not an SGLang launch command: expected "
                "`python -m sglang.launch_server ...` or `sglang serve ...`")
    return None


def _lookup(catalog: Catalog, name: str) -> Action | None:
    """The action argparse would pick for ``name`` (exact, unique prefix, dashed), else None."""
    action = catalog.by_option(name)
    if action is not None:
        return action
    for probe in dict.fromkeys((name, "--" + name[2:].replace("_", "-"))):
        action = catalog.by_option(probe)
        if action is not None:
            return action
        tuples = catalog.prefix_tuples(probe)
        if len(tuples) == 1:
            return tuples[0][0]
    return None


def group_args(catalog: Catalog, words: Sequence[Word], diags: Diagnostics) -> list[Arg]:
    """Group flag words into Args as argparse would: each flag takes as many words as it needs."""
    args: list[Arg] = []
    i, n = 0, len(words)
    while i < n:
        w = words[i]
        if not _looks_like_option(w.text) or w.text == "--":
            diags.error(w.pos, "I006", f"unexpected word '{w.text}': SGLang's parser takes no "
                        "positional arguments (it would exit with 'unrecognized arguments')")
            i += 1
            continue
        j = i + 1
        while j < n and not _looks_like_option(words[j].text):
            j += 1
        values = [x.text for x in words[i + 1:j]]
        extra: Sequence[Word] = ()
        if w.text.startswith("--") and "=" in w.text:
            args.append(Arg(w.text, True, w.pos))
            extra = words[i + 1:j]
        else:
            action = _lookup(catalog, w.text)
            nargs = action.nargs if action is not None else "*"
            value: ArgValue
            if nargs == 0:
                value, extra = True, words[i + 1:j]
                for stray in extra:
                    diags.error(stray.pos, "F006",
                                f"'{w.text}' is a switch and takes no value, got '{stray.text}': "
                                f"SGLang's parser would exit with 'unrecognized arguments'")
                extra = ()
            elif nargs in (None, "?"):
                value = values[0] if values else True
                extra = words[i + 2:j] if values else ()
            elif isinstance(nargs, int):
                value, extra = tuple(values[:nargs]), words[i + 1 + nargs:j]
            else:  # "*", "+", or an unknown flag: everything up to the next flag
                value = tuple(values) if values or nargs == "+" else True
                if action is None and len(values) == 1:
                    value = values[0]
            args.append(Arg(w.text, value, w.pos))
        for stray in extra:
            diags.error(stray.pos, "I006", f"unexpected word '{stray.text}' after '{w.text}': "
                        "SGLang's parser would exit with 'unrecognized arguments'")
        i = j
    return args


def _scalar(value: Any) -> str:
    """One YAML scalar: plain when it reads back as the same string, else double-quoted JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if _SAFE_PLAIN.match(text) and not _YAML_SPECIAL.match(text):
        return text
    return json.dumps(text)


def _yaml_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    return _scalar(value)


def _notes_for(diags: Sequence[Diagnostic], pos: Position) -> list[str]:
    """The normalization warnings recorded for the flag written at ``pos``."""
    return [f"{d.code}: {d.message}" for d in diags if d.pos == pos and not d.is_error]


def _flag_value(group: CheckedArg) -> Any:
    """The manifest value of one checked flag: its words after the option string."""
    words = group.words
    if not words:
        return False
    if group.action.nargs == 0:
        return True
    if "=" in words[0] and len(words) == 1:  # "--x=-v": a value starting with "-"
        return words[0].split("=", 1)[1]
    values = list(words[1:])
    if group.action.nargs in (None, "?") and len(values) == 1:
        return _typed(group.action, values[0])
    return [_typed(group.action, v) for v in values]


def _typed(action: Action, word: str) -> Any:
    """A value word as the YAML type that renders back to the same word."""
    try:
        if action.type == "int":
            return int(word)
        if action.type == "float":
            number = float(word)
            return number if repr(number) == word else word
    except ValueError:
        pass
    return word


def _field_value(path: tuple[str, ...], action: Action, group: CheckedArg) -> Any | None:
    """The typed value for a structured field, or None when it must stay a free-form flag."""
    value = _flag_value(group)
    if path[-1] in ("trust_remote_code", "dp_attention"):
        return True if value is True else None
    if path[-1] in _INT_FIELDS:
        try:
            return int(group.words[1]) if len(group.words) == 2 else None
        except ValueError:
            return None  # 0.5.23 reads "128k" for a context length: keep SGLang's own spelling
    if path[-1] == "mem_fraction_static":
        try:
            return float(group.words[1]) if len(group.words) == 2 else None
        except ValueError:
            return None
    if path[-1] in ("path", "draft_model_path") and not str(value).startswith("/"):
        return None  # the schema wants a local folder; a repo id stays visible elsewhere
    return value if isinstance(value, str) else None


def _slug(text: str) -> str:
    """A manifest name from a served name or a path: lowercase, [a-z0-9._-] only."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", PurePosixPath(text.rstrip("/")).name.lower()).strip("-._")
    slug = re.sub(r"\.{2,}", ".", slug)[: systemd.NAME_MAX].strip("-.")
    # The one name check of gen (systemd.name_problem), so the manifest written loads.
    return slug if slug and systemd.name_problem(slug) is None else "imported-model"


def build_manifest(catalog: Catalog, groups: Sequence[CheckedArg], env: Sequence[Word],
                   warnings: Sequence[Diagnostic], diags: Diagnostics, *, source: str,
                   header_notes: Sequence[str], name: str | None = None,
                   size_gb: float | None = None,
                   written: dict[Position, str] | None = None) -> str:
    """The manifest text for checked flags; records I007/I008 warnings in ``diags``."""
    tables = load_flag_tables(catalog.source_file)
    header_notes = list(header_notes)
    dest_field: dict[str, tuple[str, ...]] = {}
    for dest, path in _STRUCTURED.items():
        for alias in tables.dest_names(dest):
            dest_field[alias] = path
    doc: dict[str, Any] = {}
    args: dict[str, _Entry] = {}

    def put(path: tuple[str, ...], entry: _Entry) -> None:
        node = doc
        for step in path[:-1]:
            node = node.setdefault(step, {})
        node[path[-1]] = entry

    speculative = any(dest_field.get(g.action.dest) == ("speculative", "algorithm") for g in groups)
    for g in groups:
        notes = _notes_for(warnings, g.pos)
        field_path = dest_field.get(g.action.dest)
        if g.action.dest in _SET_BY_GEN:
            diags.warning(g.pos, "I008", f"'{' '.join(g.words)}' dropped: gen sets it from "
                          f"{_SET_BY_GEN[g.action.dest]}")
            header_notes.append(f"'{' '.join(g.words)}' dropped: set it as "
                                f"{_SET_BY_GEN[g.action.dest]}")
            continue
        value = _field_value(field_path, g.action, g) if field_path else None
        if field_path and field_path[0] == "speculative" and not speculative:
            value = None  # without an algorithm there is no speculative section to hold it
        if field_path and value is not None:
            put(field_path, _Entry(value, [*notes, f"from '{' '.join(g.words)}'"]))
            continue
        if field_path is not None and field_path[-1] == "path" and field_path[0] == "weights":
            put(field_path, _Entry(None, [*notes, f"REQUIRED: '{_flag_value(g)}' is not an absolute "
                                           "path (a Hugging Face repo id?); download the weights "
                                           "under the host's model_root and write that folder"]))
            diags.warning(g.pos, "I007", f"model path '{_flag_value(g)}' is not a local folder: "
                          "fill in weights.path with the absolute path of the downloaded weights")
            continue
        if is_secret_action(g.action):  # never copy a key into a manifest (or echo it)
            diags.error(g.pos, "K001", f"{g.action.canonical} carries a secret: a manifest must not hold it",
                        f"leave it out; list it in the service's `secret_args: [{g.action.canonical}]` and put"
                        f" `{g.action.canonical.removeprefix('--')}: VALUE` in /etc/credstore/sglang-<service>.yaml"
                        " on the host (root, mode 0600)")
            continue
        key = (g.action.canonical if g.words and g.words[0] != g.action.negative
               else g.action.negative or g.action.canonical)
        as_written = (written or {}).get(g.pos)
        if not notes and as_written is not None and as_written != key:
            notes = [f"written as '{as_written}'"]
        args[key] = _Entry(_flag_value(g), notes)
    weights = doc.setdefault("weights", {})
    if "path" not in weights:
        put(("weights", "path"), _Entry(None, ["REQUIRED: the command names no model path"]))
        diags.warning(Position(source), "I007", "the command has no --model-path: fill in weights.path")
    if size_gb is not None:
        put(("weights", "size_gb"), _Entry(size_gb, ["from `gen import --size-gb`"]))
    else:
        put(("weights", "size_gb"), _Entry(None, [
            "REQUIRED: size of the weights on disk in GB (`du -s --block-size=1G <path>`); a "
            "command does not say it, and gen check refuses the manifest until it is set"]))
        diags.warning(Position(source), "I007", "weights.size_gb is unknown from a command: "
                      "fill it in, or pass --size-gb")
    served = doc.get("served_model_name")
    written_path = next((str(_flag_value(g)) for g in groups if g.action.dest == "model_path"), None)
    if name is not None:
        doc["name"] = _Entry(name, [])
    else:
        doc["name"] = _Entry(_slug(served.value if served else written_path or ""), [
            "from the served name or the model folder; choose another with `gen import --name`"])
    if args:
        doc["args"] = args
    env_entries: dict[str, _Entry] = {}
    for w in env:
        key, _, val = w.text.partition("=")
        if key == "CUDA_VISIBLE_DEVICES":
            diags.warning(w.pos, "I008", f"'{w.text}' dropped: gen assigns GPUs from the host "
                          "inventory (services[].gpus)")
            header_notes.append(f"'{w.text}' dropped: gen assigns the GPUs")
            continue
        if is_secret_env_name(key):
            diags.error(w.pos, "K002", f"{key} holds a secret: a manifest must not hold it",
                        f"leave it out; set `secret_env: true` on the service and put {key}=VALUE in"
                        " /etc/sglang/secrets/<service>.env on the host (root, mode 0600)")
            continue
        env_entries[key] = _Entry(val, [f"from '{w.text}'"])
    if env_entries:
        doc["env"] = env_entries
    lines = [f"# Imported by `gen import` from {source}, flags checked against SGLang "
             f"{catalog.pin} (catalogs/sglang/{catalog.pin}.json)."]
    lines += [f"# {note}" for note in header_notes]
    lines.append("")
    for key in _SECTION_ORDER:
        if key in doc:
            _emit(lines, key, doc[key], 0, quote_values=key == "env")
    return "\n".join(lines) + "\n"


def _emit(lines: list[str], key: str, node: Any, depth: int, quote_values: bool = False) -> None:
    """Append ``key: value`` (or a nested block) with its notes as comments above it."""
    pad = "  " * depth
    if isinstance(node, dict):
        lines.append(f"{pad}{key}:")
        for sub, child in node.items():
            _emit(lines, sub, child, depth + 1, quote_values)
        return
    for note in node.notes:
        lines.append(f"{pad}# {note}")
    value = json.dumps(str(node.value)) if quote_values else _yaml_value(node.value)
    lines.append(f"{pad}{key}: {value}")  # keys are field names, flags or env names: plain


def _check_rules(catalog: Catalog, groups: Sequence[CheckedArg], env: Sequence[Word],
                 diags: Diagnostics, source: str) -> None:
    """SGLang's cross-flag rules (catalogs/rules.yaml): all of them need only flags and env."""
    settings = settings_from_words(
        catalog, [(g.action, g.words, g.pos) for g in groups],
        {w.text.partition("=")[0]: w.text.partition("=")[2] for w in env},
        {w.text.partition("=")[0]: w.pos for w in env})
    for finding in evaluate(settings, load_rules(rules_path(catalog))):
        record = diags.error if finding.rule.severity is Severity.ERROR else diags.warning
        record(finding.pos or Position(source), finding.rule.code, finding.message, finding.fix)


def import_command(text: str, source: str, catalog: Catalog, others: Sequence[Catalog] = (), *,
                   name: str | None = None, size_gb: float | None = None) -> ImportResult:
    """Check one command (or unit file) against ``catalog`` and build its manifest."""
    diags = Diagnostics()
    command = split_command(text, source, diags)
    notes: list[str] = []
    found = _program(command.words, diags, notes)
    if found is None:
        return ImportResult(tuple(diags.sorted()), None)
    start, env = found
    args = group_args(catalog, command.words[start:], diags)
    groups = check_args(catalog, args, diags, others)
    _check_rules(catalog, groups, [*command.unit_env, *env], diags, source)
    if diags.has_errors:
        return ImportResult(tuple(diags.sorted()), None)
    warnings = list(diags.items)
    manifest = build_manifest(catalog, groups, [*command.unit_env, *env], warnings, diags,
                              source=source, header_notes=notes, name=name, size_gb=size_gb,
                              written={a.pos: a.name for a in args})
    return ImportResult(tuple(diags.sorted()), None if diags.has_errors else manifest)  # K001/K002
