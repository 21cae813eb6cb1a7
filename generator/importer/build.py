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
refused (K001/K002/K005) and its value never printed (the collector hides it: :mod:`generator.secrecy`). The YAML text is written by
:mod:`generator.importer.yaml_text`.

Codes (family I): see :mod:`generator.importer.cmdline` for I001-I004; I005 not an SGLang
launch command, I006 stray word (SGLang takes no positional arguments), I007 a value the
operator must fill in (warning), I008 dropped because gen sets it per host or service
(warning: ``--host``, ``--port``, ``CUDA_VISIBLE_DEVICES``); K001/K002 a secret flag or
variable (no manifest). A value after a switch is F006, as for a manifest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from generator.emit.secrets import env_secret_fix, env_secret_problem, is_secret_action
from generator import systemd
from generator.errors import Diagnostic, Diagnostics, Position, Severity
from generator.importer.cmdline import Word, split_command
from generator.importer.grouping import group_args, looks_like_option, lookup
from generator.importer.program import find_program
from generator.importer.selfcheck import check_printed, gen_variables
from generator.secrecy import credential_in, credentials, is_secret_env_name, is_secret_flag_name
from generator.importer.yaml_text import Entry, comment, emit
from generator.load.checks import normalized_path
from generator.plan.services import GEN_VARIABLES
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
                  "trust_remote_code", "context_length", "parallel", "multinode", "speculative", "parsers",
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
    if path[-1] in ("path", "draft_model_path"):
        # the schema wants a normalized local folder: a repo id or a '..' path is REQUIRED instead
        normal = normalized_path(value) if isinstance(value, str) else None
        return normal if normal != "/" else None  # the root folder holds no model
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
    if isinstance(value, str) and normalized_path(value) == "/":
        return (f"REQUIRED: '{value}' is the root folder, not a model's; write the folder under the host's "
                f"model_root ({root}) that holds it", f"{what} '{value}' is the root folder: fill in the model's")
    if isinstance(value, str) and value.startswith("/"):  # a '..' gen cannot resolve without the disk
        return (f"REQUIRED: '{value}' holds '..', which gen check refuses (the folder before it may be a "
                f"symlink on the host); write the real folder it means, under the host's model_root ({root})",
                f"{what} '{value}' holds '..': fill in the real absolute folder")
    if isinstance(value, str) and _HF_REPO.fullmatch(value) and not value.startswith(("./", "../")):
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
    nodes: dict[str, tuple[Any, Position, str]] = field(default_factory=dict)  # dest -> (value, where, as written)

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
    if g.action.dest in _NODE_DESTS:
        _node_flag(m, g, shown, diags)
        return
    if g.action.dest == "config" and str(_flag_value(g)).startswith("${CREDENTIALS_DIRECTORY}/"):
        diags.warning(g.pos, "I008", f"'{shown}' dropped: gen passes it itself for the service's `secret_args:` "
                      "(list the secret flags there; their values stay in the host's credential file)")
        m.header.append(f"'{shown}' dropped: gen's own --config for `secret_args:` (list the secret flags there)")
        return
    value = _field_value(field_path, g.action, g) if field_path else None
    if field_path and field_path[0] == "speculative" and not speculative:
        field_path = value = None  # without an algorithm there is no speculative section to hold it
    if field_path and value is not None:
        written_value = _flag_value(g)
        if field_path[-1] in ("path", "draft_model_path") and value != written_value:
            notes = [*notes, f"normalized from '{written_value}': gen check wants a path without '//', '.' "
                     "or a trailing '/'"]
        m.put(field_path, Entry(value, [*notes, f"from '{shown}'"], g.pos))
        return
    if field_path in (("weights", "path"), ("speculative", "draft_model_path")):
        comment, message = _required_path(_flag_value(g), model_root, g.words[0])
        m.put(field_path, Entry(None, [*notes, comment], g.pos, required=True))
        diags.warning(g.pos, "I007", message)
        return
    key = (g.action.canonical if g.words and g.words[0] != g.action.negative
           else g.action.negative or g.action.canonical)
    as_written = written.get(g.pos)
    if not notes and as_written is not None and as_written != key:
        notes = [f"written as '{as_written}'"]
    m.args[key] = Entry(_flag_value(g), notes, g.pos)


# The node flags of a multi-node deployment: gen renders them from the manifest's `multinode:`
# (its hosts in rank order and the rendezvous port) and each host's inventory.
_NODE_DESTS = ("nnodes", "node_rank", "dist_init_addr")


def _node_flag(m: _Manifest, g: CheckedArg, shown: str, diags: Diagnostics) -> None:
    """``--nnodes``/``--node-rank``/``--dist-init-addr``: dropped; :func:`_multinode` writes what they meant."""
    diags.warning(g.pos, "I008", f"'{shown}' dropped: gen sets it on each node from the manifest's `multinode:` "
                  "(hosts in rank order, port) and the hosts' `network:`")
    m.header.append(f"'{shown}' dropped: gen renders it from `multinode:` on every node")
    m.nodes[g.action.dest] = (_flag_value(g), g.pos, shown)


def _multinode(m: _Manifest) -> None:
    """The ``multinode:`` section a command for more than one node needs: its hosts (REQUIRED)
    and the rendezvous port (from ``--dist-init-addr``, else REQUIRED)."""
    nnodes = m.nodes.get("nnodes")
    if nnodes is None or not isinstance(nnodes[0], int) or nnodes[0] < 2:
        return  # one node: the flags said nothing gen does not render itself
    m.doc["multinode"] = {"hosts": Entry(None, [
        f"REQUIRED: the inventory names of the {nnodes[0]} hosts, rank 0 first (e.g. [gpu-a, gpu-b]); each "
        "runs a service of this model and has a `network:` section"], nnodes[1], required=True)}
    addr = m.nodes.get("dist_init_addr")
    port = addr[0].rsplit(":", 1)[1] if addr and isinstance(addr[0], str) and ":" in addr[0] else ""
    if addr is not None and port.isdigit():
        m.doc["multinode"]["port"] = Entry(int(port), [
            f"from '{addr[2]}' (rank 0's address comes from the first host's `network.address`)"], addr[1])
    else:
        m.doc["multinode"]["port"] = Entry(None, ["REQUIRED: the rendezvous port on rank 0 (SGLang's "
                                                  "--dist-init-addr HOST:PORT)"], required=True)


def _weights_and_name(m: _Manifest, groups: Sequence[CheckedArg], diags: Diagnostics, source: str,
                      name: str | None, size_gb: float | None) -> None:
    """What a command cannot say (REQUIRED), and the manifest's name."""
    if "path" not in m.doc.setdefault("weights", {}):
        m.put(("weights", "path"), Entry(None, ["REQUIRED: the command names no model path"], required=True))
        diags.warning(Position(source), "I007", "the command has no --model-path: fill in weights.path")
    if size_gb is not None:
        m.put(("weights", "size_gb"), Entry(size_gb, ["from `gen import --size-gb`"]))
    else:
        m.put(("weights", "size_gb"), Entry(None, [
            "REQUIRED: size of the weights on disk in GB (`du -s --block-size=1G <path>`); a "
            "command does not say it, and gen check refuses the manifest until it is set"], required=True))
        diags.warning(Position(source), "I007", "weights.size_gb is unknown from a command: "
                      "fill it in, or pass --size-gb")
    served = m.doc.get("served_model_name")
    written_path = next((str(_flag_value(g)) for g in groups if g.action.dest == "model_path"), None)
    if name is not None:
        m.doc["name"] = Entry(name, [])
    else:
        m.doc["name"] = Entry(_slug(served.value if served else written_path or ""), [
            "from the served name or the model folder; choose another with `gen import --name`"])


def _environment(m: _Manifest, env: Sequence[Word], diags: Diagnostics, owned: Mapping[str, str]) -> None:
    """``VAR=value`` words and a unit's Environment=: a secret is refused, what gen sets itself
    (``owned``: HOME, the cache folders, the GPUs, ...) dropped and said so, the rest kept."""
    entries: dict[str, Entry] = {}
    for w in env:
        key, _, val = w.text.partition("=")
        problem = env_secret_problem(key, val)
        if problem is not None:
            code, what = problem
            diags.error(w.pos, code, f"{what}: a manifest must not hold it", env_secret_fix(key, "<service>"))
        elif key in owned:
            diags.warning(w.pos, "I008", f"'{w.text}' dropped: gen sets {key} itself ({owned[key]})")
            m.header.append(f"'{w.text}' dropped: gen sets {key} itself ({owned[key]})")
        else:
            entries[key] = Entry(val, [f"from '{w.text}'"], w.pos)
    if entries:
        m.doc["env"] = entries


@dataclass(frozen=True)
class Printed:
    """The manifest text, and by line number where each value came from (for the self-check)."""

    text: str
    name: str
    written: dict[int, tuple[tuple[str, ...], Entry]]


def build_manifest(catalog: Catalog, groups: Sequence[CheckedArg], env: Sequence[Word],
                   warnings: Sequence[Diagnostic], diags: Diagnostics, *, source: str,
                   header_notes: Sequence[str], name: str | None = None,
                   size_gb: float | None = None, written: dict[Position, str] | None = None,
                   model_root: str | None = None, owned: Mapping[str, str] | None = None) -> Printed:
    """The manifest for checked flags; records I007/I008 warnings and K001/K002/K005 in ``diags``."""
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
    _multinode(m)
    if m.args:
        m.doc["args"] = m.args
    owned = dict(owned or {})
    if "multinode" in m.doc:  # gen writes the nodes' interface into the environment file
        owned.update({v: f"gen, from each host's `network.interface` ({GEN_VARIABLES[v]})"
                      for v in ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")})
    _environment(m, env, diags, owned)
    lines = [comment(f"Imported by `gen import` from {source}, flags checked against SGLang "
                     f"{catalog.pin} (catalogs/sglang/{catalog.pin}.json).")]
    lines += [comment(note) for note in m.header]
    lines.append("")
    lines_of: dict[int, tuple[tuple[str, ...], Entry]] = {}
    for key in _SECTION_ORDER:
        if key in m.doc:
            emit(lines, key, m.doc[key], 0, quote_values=key == "env", written=lines_of)
    return Printed("\n".join(lines) + "\n", str(m.doc["name"].value), lines_of)


# What a REQUIRED null is checked with (gen check refuses the null itself, which the REQUIRED
# comment already says): a value of the right type that raises no other finding.
_STANDINS = {("weights", "size_gb"): "1", ("weights", "path"): "/srv/import-standin/weights",
             ("speculative", "draft_model_path"): "/srv/import-standin/draft",
             ("multinode", "hosts"): "[import-check, import-check-2]", ("multinode", "port"): "50000"}


def _self_check(root: Path, catalog: Catalog, printed: Printed, diags: Diagnostics, source: str) -> None:
    """What gen check says about the printed manifest, at the command words its values came from."""
    standins: dict[int, str] = {}
    for number, (path, entry) in printed.written.items():
        if entry.required and path in _STANDINS:
            line = printed.text.split("\n")[number - 1]
            standins[number] = line[: len(line) - len("null")] + _STANDINS[path]
    weights = next((e.value for p, e in printed.written.values() if p == ("weights", "path")), None)
    for d in check_printed(root, catalog, printed.name, printed.text, standins,
                           weights if isinstance(weights, str) else _STANDINS[("weights", "path")]):
        if not d.is_error or (d.code == "S002" and d.pos.line in standins):
            continue  # warnings: the command's own (reported above); a REQUIRED null: its comment says it
        origin = printed.written.get(d.pos.line)
        where = origin[1].pos if origin is not None and origin[1].pos is not None else Position(source)
        key = ".".join(origin[0]) if origin is not None else None
        text = f"gen check would refuse the manifest's {key!r}: {d.message}" if key else \
            f"gen check would refuse the manifest: {d.message}"
        diags.error(where, d.code, text, d.hint)


def _repo_root(catalog: Catalog, root: Path | None) -> Path:
    """The repository whose pipeline checks the imported manifest: ``root``, else the catalog's.

    Its templates need not exist: the manifest is then checked without a render (loader,
    schema, flags, rules), never left unchecked (a repository of catalogs/ alone printed
    ``path: "/x\\n/y"`` and a 5,000-digit ``tp`` with exit 0).
    """
    return root if root is not None else catalog.source_file.resolve().parents[2]


def _check_credentials(groups: Sequence[CheckedArg], diags: Diagnostics) -> None:
    """K005 for a flag value that holds a credential (a URL's password, a token): as gen check
    refuses it in ``args:``, a manifest must not get it either."""
    for g in groups:
        if is_secret_action(g.action):
            continue  # K001 says more
        for word in g.words[1:] or ([g.words[0].partition("=")[2]] if g.words else []):
            found = credential_in(word)
            if found is not None:
                diags.error(g.pos, "K005", f"the value of {g.action.canonical} holds {found}: a manifest must not "
                            "hold it", "take the credential out of the value; give it to the server another way "
                            "(a secret variable: `secret_env: true` on the service)")
                break


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
        action = lookup(catalog, flag) if looks_like_option(flag, catalog) else None
        secret = is_secret_action(action) if action is not None else is_secret_flag_name(flag)  # unknown: by its name
        if not looks_like_option(flag, catalog) or not secret:
            continue
        if eq:
            values.append(inline)
        elif k + 1 < len(words):
            values.append(words[k + 1].text)  # even one that starts with '-': SGLang refuses it, gen quotes it
    values += [w.text.partition("=")[2] for w in env if is_secret_env_name(w.text.partition("=")[0])]
    # a credential inside any word (a URL's password, a token): hidden wherever a message quotes it
    values += [c for w in [*words, *env] for c in credentials(w.text)]
    return values


def import_command(text: str, source: str, catalog: Catalog, others: Sequence[Catalog] = (), *,
                   name: str | None = None, size_gb: float | None = None,
                   model_root: str | None = None, root: Path | None = None) -> ImportResult:
    """Check one command (or unit file) against ``catalog`` and build its manifest.

    ``model_root`` (the host's ``storage.model_root``, with ``--host``) makes the REQUIRED
    comment of a Hugging Face repo id name the folder to download into. ``root`` is the
    repository whose templates tell which variables gen sets itself and whose pipeline
    checks the printed manifest (default: the catalog's repository).
    """
    diags = Diagnostics()
    command = split_command(text, source, diags)
    diags.hide(_secret_values(catalog, command.words, command.unit_env))
    notes: list[str] = []
    found = find_program(command.words, diags, notes)
    if found is None:
        return ImportResult(tuple(diags.sorted()), None)
    start, env = found
    diags.hide(_secret_values(catalog, (), env))
    args = group_args(catalog, command.words[start:], diags)
    groups = check_args(catalog, args, diags, others)
    _check_credentials(groups, diags)
    _check_rules(catalog, groups, [*command.unit_env, *env], diags, source)
    if diags.has_errors:
        return ImportResult(tuple(diags.sorted()), None)
    warnings = list(diags.items)
    repo = _repo_root(catalog, root)
    owned = gen_variables(repo, catalog.pin, catalog.by_option("--config") is not None)
    in_file = ", ".join(sorted(n for n, why in owned.items() if why.startswith("gen, in the environment file")))
    notes[:0] = [f"the unit also reads EnvironmentFile={path} (on its host, not here): add its variables to env:, "
                 f"but not gen's own ({in_file})" for path in command.env_files]
    printed = build_manifest(catalog, groups, [*command.unit_env, *env], warnings, diags,
                             source=source, header_notes=notes, name=name, size_gb=size_gb,
                             written={a.pos: a.name for a in args}, model_root=model_root, owned=owned)
    if not diags.has_errors:
        _self_check(repo, catalog, printed, diags, source)
    # K001/K002/K005 (a secret), and what gen check would refuse: then no manifest either
    return ImportResult(tuple(diags.sorted()), None if diags.has_errors else printed.text)
