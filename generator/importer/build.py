"""``gen import``: turn a model-card command or an old unit's ExecStart into a model manifest.

The command is split (:mod:`generator.importer.cmdline`), its program recognised
(:mod:`generator.importer.program`: ``python -m sglang.launch_server``, ``sglang serve``,
optionally behind ``VAR=value``/``env``/``nohup``/``exec`` prefixes), and its flags grouped
into arguments the way argparse would group them (:mod:`generator.importer.grouping`),
using the pin's catalog for how many values each flag takes. The flags then go through the same checks as a rendered
service (:func:`generator.sglang.flags.check_args`), so every misspelling, abbreviation,
foreign spelling, removed flag, bad choice or bad value is a positioned diagnostic.

Only when nothing is an error is a manifest produced: flags that map to a structured
manifest field become that field (model path -> ``weights.path``, tp -> ``parallel.tp``,
speculative flags -> ``speculative.*``, parsers, memory fraction, served name,
``trust_remote_code``, dtype, context length), the rest stay under ``args:`` by their
canonical name, and every normalization is written as a comment above its line.

What a command cannot say is not invented: ``weights.size_gb`` (and ``weights.path`` or
``speculative.draft_model_path`` when the command names a Hugging Face repo id instead of
a folder) are printed as ``null`` with a ``REQUIRED`` comment (naming the folder under
the model root to download into) unless given on the command line; ``gen check``
refuses the manifest until they are filled in. A secret (``--api-key``, ``HF_TOKEN``) is
refused (K001/K002) and its value never printed (:mod:`generator.importer.secrets`). The YAML text is written by
:mod:`generator.importer.yaml_text`.

Codes (family I): see :mod:`generator.importer.cmdline` for I001-I004; I005 not an SGLang
launch command, I006 stray word (SGLang takes no positional arguments), I007 a value the
operator must fill in (warning), I008 dropped because gen sets it per host or service
(warning: ``--host``, ``--port``, ``CUDA_VISIBLE_DEVICES``); K001/K002 a secret flag or
variable (no manifest). A value after a switch is F006, as for a manifest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from generator.emit.secrets import is_secret_action, is_secret_env_name
from generator import systemd
from generator.errors import Diagnostic, Diagnostics, Position, Severity
from generator.importer.cmdline import Word, split_command
from generator.importer.grouping import group_args, looks_like_option, lookup
from generator.importer.program import find_program
from generator.importer.secrets import is_secret_dest, redact
from generator.importer.yaml_text import Entry, comment, emit
from generator.sglang.catalog import Action, Catalog, load_flag_tables
from generator.sglang.flags import CheckedArg, check_args
from generator.sglang.rules import evaluate, load_rules, rules_path, settings_from_words

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


_HF_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


def _required_path(value: Any, model_root: str | None, what: str) -> tuple[str, str]:
    """The REQUIRED comment and the I007 message for a path that is no local folder."""
    root = model_root or "<model_root>"
    if isinstance(value, str) and _HF_REPO.match(value) and not value.startswith(("./", "../")):
        local = f"{root}/{value.rsplit('/', 1)[1]}"
        return (f"REQUIRED: '{value}' is a Hugging Face repo id, not a local folder; download it under "
                f"the host's model_root (`huggingface-cli download {value} --local-dir {local}`) and "
                f"write that absolute path here, e.g. {local}",
                f"{what} '{value}' is a Hugging Face repo id: download it under the model root and "
                f"fill in the absolute local path")
    return (f"REQUIRED: '{value}' is not an absolute path; write the folder under the host's "
            f"model_root ({root}) that holds it",
            f"{what} '{value}' is not a local folder: fill in its absolute path under the model root")


@dataclass
class _Manifest:
    """The manifest being built: nested sections of Entries, free-form args, header notes."""

    doc: dict[str, Any] = field(default_factory=dict)
    args: dict[str, Entry] = field(default_factory=dict)
    header: list[str] = field(default_factory=list)

    def put(self, path: tuple[str, ...], entry: Entry) -> None:
        """Set the entry at a nested field path, creating its sections."""
        node = self.doc
        for step in path[:-1]:
            node = node.setdefault(step, {})
        node[path[-1]] = entry


def _dest_fields(catalog: Catalog) -> dict[str, tuple[str, ...]]:
    """SGLang dest (every pin's name for it) -> the structured manifest field it fills."""
    tables = load_flag_tables(catalog.source_file)
    return {alias: path for dest, path in _STRUCTURED.items() for alias in tables.dest_names(dest)}


def _place(m: _Manifest, g: CheckedArg, field_path: tuple[str, ...] | None, speculative: bool,
           notes: list[str], diags: Diagnostics, written: dict[Position, str],
           model_root: str | None) -> None:
    """Put one checked flag where it belongs: a structured field, a REQUIRED path, or ``args``."""
    shown = " ".join(g.words)
    if is_secret_action(g.action):  # never copy a key into a manifest (or echo it)
        diags.error(g.pos, "K001", f"{g.action.canonical} carries a secret: a manifest must not hold it",
                    f"leave it out; list it in the service's `secret_args: [{g.action.canonical}]` and put"
                    f" `{g.action.canonical.removeprefix('--')}: VALUE` in /etc/credstore/sglang-<service>.yaml"
                    " on the host (root, mode 0600)")
        return
    if g.action.dest in _SET_BY_GEN:
        diags.warning(g.pos, "I008", f"'{shown}' dropped: gen sets it from {_SET_BY_GEN[g.action.dest]}")
        m.header.append(f"'{shown}' dropped: set it as {_SET_BY_GEN[g.action.dest]}")
        return
    value = _field_value(field_path, g.action, g) if field_path else None
    if field_path and field_path[0] == "speculative" and not speculative:
        field_path = value = None  # without an algorithm there is no speculative section to hold it
    if field_path and value is not None:
        m.put(field_path, Entry(value, [*notes, f"from '{shown}'"]))
        return
    if field_path in (("weights", "path"), ("speculative", "draft_model_path")):
        comment, message = _required_path(_flag_value(g), model_root, g.words[0])
        m.put(field_path, Entry(None, [*notes, comment]))
        diags.warning(g.pos, "I007", message)
        return
    key = (g.action.canonical if g.words and g.words[0] != g.action.negative
           else g.action.negative or g.action.canonical)
    as_written = written.get(g.pos)
    if not notes and as_written is not None and as_written != key:
        notes = [f"written as '{as_written}'"]
    m.args[key] = Entry(_flag_value(g), notes)


def _weights_and_name(m: _Manifest, groups: Sequence[CheckedArg], diags: Diagnostics, source: str,
                      name: str | None, size_gb: float | None) -> None:
    """What a command cannot say (REQUIRED), and the manifest's name."""
    if "path" not in m.doc.setdefault("weights", {}):
        m.put(("weights", "path"), Entry(None, ["REQUIRED: the command names no model path"]))
        diags.warning(Position(source), "I007", "the command has no --model-path: fill in weights.path")
    if size_gb is not None:
        m.put(("weights", "size_gb"), Entry(size_gb, ["from `gen import --size-gb`"]))
    else:
        m.put(("weights", "size_gb"), Entry(None, [
            "REQUIRED: size of the weights on disk in GB (`du -s --block-size=1G <path>`); a "
            "command does not say it, and gen check refuses the manifest until it is set"]))
        diags.warning(Position(source), "I007", "weights.size_gb is unknown from a command: "
                      "fill it in, or pass --size-gb")
    served = m.doc.get("served_model_name")
    written_path = next((str(_flag_value(g)) for g in groups if g.action.dest == "model_path"), None)
    if name is not None:
        m.doc["name"] = Entry(name, [])
    else:
        m.doc["name"] = Entry(_slug(served.value if served else written_path or ""), [
            "from the served name or the model folder; choose another with `gen import --name`"])


def _environment(m: _Manifest, env: Sequence[Word], diags: Diagnostics) -> None:
    """``VAR=value`` words and a unit's Environment=: kept, but GPUs are gen's and a secret is refused."""
    entries: dict[str, Entry] = {}
    for w in env:
        key, _, val = w.text.partition("=")
        if key == "CUDA_VISIBLE_DEVICES":
            diags.warning(w.pos, "I008", f"'{w.text}' dropped: gen assigns GPUs from the host "
                          "inventory (services[].gpus)")
            m.header.append(f"'{w.text}' dropped: gen assigns the GPUs")
        elif is_secret_env_name(key):
            diags.error(w.pos, "K002", f"{key} holds a secret: a manifest must not hold it",
                        f"leave it out; set `secret_env: true` on the service and put {key}=VALUE in"
                        " /etc/sglang/secrets/<service>.env on the host (root, mode 0600)")
        else:
            entries[key] = Entry(val, [f"from '{w.text}'"])
    if entries:
        m.doc["env"] = entries


def build_manifest(catalog: Catalog, groups: Sequence[CheckedArg], env: Sequence[Word],
                   warnings: Sequence[Diagnostic], diags: Diagnostics, *, source: str,
                   header_notes: Sequence[str], name: str | None = None,
                   size_gb: float | None = None,
                   written: dict[Position, str] | None = None, model_root: str | None = None) -> str:
    """The manifest text for checked flags; records I007/I008 warnings and K001/K002 in ``diags``."""
    dest_field = _dest_fields(catalog)
    m = _Manifest(header=list(header_notes))
    kept = {g.pos for g in groups}
    # A flag left out because an earlier one already gave it the same value (F106): said once, on top.
    m.header += [f"{d.code}: {d.message}" for d in warnings if d.code == "F106" and d.pos not in kept]
    speculative = any(dest_field.get(g.action.dest) == ("speculative", "algorithm") for g in groups)
    for g in groups:
        _place(m, g, dest_field.get(g.action.dest), speculative, _notes_for(warnings, g.pos), diags,
               written or {}, model_root)
    _weights_and_name(m, groups, diags, source, name, size_gb)
    if m.args:
        m.doc["args"] = m.args
    _environment(m, env, diags)
    lines = [comment(f"Imported by `gen import` from {source}, flags checked against SGLang "
                     f"{catalog.pin} (catalogs/sglang/{catalog.pin}.json).")]
    lines += [comment(note) for note in m.header]
    lines.append("")
    for key in _SECTION_ORDER:
        if key in m.doc:
            emit(lines, key, m.doc[key], 0, quote_values=key == "env")
    return "\n".join(lines) + "\n"


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


def _secret_values(catalog: Catalog, words: Sequence[Word], env: Sequence[Word]) -> list[str]:
    """Every value a secret flag or variable was given, to keep out of every message."""
    values: list[str] = []
    for k, w in enumerate(words):
        flag, eq, inline = w.text.partition("=")
        action = lookup(catalog, flag) if looks_like_option(flag) else None
        secret = is_secret_action(action) if action is not None else \
            is_secret_dest(flag.lstrip("-").replace("-", "_"))  # an unknown flag: by its name
        if not looks_like_option(flag) or not secret:
            continue
        if eq:
            values.append(inline)
        elif k + 1 < len(words) and not looks_like_option(words[k + 1].text):
            values.append(words[k + 1].text)
    values += [w.text.partition("=")[2] for w in env if is_secret_env_name(w.text.partition("=")[0])]
    return values


def import_command(text: str, source: str, catalog: Catalog, others: Sequence[Catalog] = (), *,
                   name: str | None = None, size_gb: float | None = None,
                   model_root: str | None = None) -> ImportResult:
    """Check one command (or unit file) against ``catalog`` and build its manifest.

    ``model_root`` (the host's ``storage.model_root``, with ``--host``) makes the REQUIRED
    comment of a Hugging Face repo id name the folder to download into.
    """
    diags = Diagnostics()
    command = split_command(text, source, diags)
    secrets = _secret_values(catalog, command.words, command.unit_env)
    notes: list[str] = []
    found = find_program(command.words, diags, notes)
    if found is None:
        return ImportResult(tuple(redact(diags.sorted(), secrets)), None)
    start, env = found
    secrets += _secret_values(catalog, (), env)
    args = group_args(catalog, command.words[start:], diags)
    groups = check_args(catalog, args, diags, others)
    _check_rules(catalog, groups, [*command.unit_env, *env], diags, source)
    if diags.has_errors:
        return ImportResult(tuple(redact(diags.sorted(), secrets)), None)
    warnings = list(diags.items)
    manifest = build_manifest(catalog, groups, [*command.unit_env, *env], warnings, diags,
                              source=source, header_notes=notes, name=name, size_gb=size_gb,
                              written={a.pos: a.name for a in args}, model_root=model_root)
    # K001/K002 (a secret) are errors found while building: then no manifest either
    return ImportResult(tuple(redact(diags.sorted(), secrets)), None if diags.has_errors else manifest)
