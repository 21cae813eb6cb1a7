"""The registry of diagnostic codes: every code gen reports, defined once.

Each code has a family (its letter: Y yaml, S schema, R references, P placement, F flags,
X SGLang's cross-flag rules, C catalogs, I import, K secrets), a severity and a one-line meaning.
:class:`generator.errors.Diagnostics` refuses a code that is not here, so a typo in a
call site fails the first test that reaches it, and ``tests/test_codes.py`` scans the
source for code literals so none ships unregistered. The README's "Diagnostics" table is
generated from this registry (``python -m generator.codes``) and tested against it.

The ``X`` codes are data: each rule of ``catalogs/rules.yaml`` carries its own code,
message and severity beside its versions, so a rule is reviewed in one place. The
registry holds their family only (``X0xx`` and ``X2xx`` errors, ``X1xx`` warnings, checked by
:func:`lookup`), and the rules loader checks each rule's code against it.
"""

from __future__ import annotations

import enum
import re
import sys
from dataclasses import dataclass


class Severity(str, enum.Enum):
    """How bad a diagnostic is; only errors stop a render."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Family:
    """A group of codes sharing a letter (and, for X, a numbering by severity)."""

    letter: str
    name: str
    what: str  # the README's description of the family


@dataclass(frozen=True)
class Code:
    """One registered diagnostic code."""

    code: str
    severity: Severity
    meaning: str

    @property
    def family(self) -> Family:
        """The family the code's letter names."""
        return FAMILIES[self.code[0]]


FAMILIES: dict[str, Family] = {f.letter: f for f in (
    Family("Y", "YAML", "the YAML file itself"),
    Family("S", "schema", "a document against its schema (`load/schema.py`)"),
    Family("R", "references", "references between files and inside an inventory"),
    Family("P", "placement", "GPUs, NUMA, memory, ports, paths; P02x multi-node"),
    Family("F", "flags", "SGLang flags against the pinned catalog; F1xx are warnings"),
    Family("X", "rules", "SGLang's cross-flag rules for the pin, from `catalogs/rules.yaml` "
           "(X0xx and X2xx errors, X1xx warnings; id, versions, message, fix there)"),
    Family("C", "catalogs", "the flag catalog of the host's pin, and the data files under "
           "`catalogs/` (rules.yaml, the flag tables; their YAML and schema problems keep Y/S codes)"),
    Family("E", "environment", "SGLang's variables (`SGLANG_*`, `SGL_*` in `env:`) against the "
           "pin's env catalog `catalogs/sglang/<pin>.env.json`; E1xx are warnings"),
    Family("G", "GPU", "the service's GPUs (`gpus[].compute_cap`, the host's `facts:`, `gen host snapshot`) "
           "against the flags and the pin's device checks, from `catalogs/rules.yaml`; G0xx and G2xx errors, G1xx warnings"),
    Family("M", "model", "the model's checkpoint (`catalogs/models/<model>.json`, `gen model snapshot`) against "
           "the manifest and the flags; M0xx and M2xx errors, M1xx warnings"),
    Family("I", "import", "`gen import`: the command line read"),
    Family("K", "secrets", "secrets written into the inputs, and `secret_args` (`emit/secrets.py`)"),
    Family("O", "output", "`gen check`: `output/` against a fresh render"),
    Family("D", "generated", "`gen check`: the files gen generates into the repository (`schemas/`, `docs/manifests.md`)"),
    Family("A", "rollout", "the rollout strategy: `rollout.yaml` and a model's `rollout:` (`load/rollout.py`, `plan/rollout.py`)"),
)}

E, W = Severity.ERROR, Severity.WARNING

_CODES: tuple[Code, ...] = (
    Code("Y001", E, "malformed YAML that no code of Y020-Y028 names (the parser's message, at its position), "
         "or a value Python cannot construct"),
    Code("Y002", E, "a key appears twice in one mapping"),
    Code("Y003", E, "nesting deeper than 64 levels (checked before composing; also an alias inside its own anchor)"),
    Code("Y004", E, "a YAML merge key (`<<`), which gen does not support"),
    Code("Y005", E, "a mapping key that is not a plain scalar, or an unsupported node"),
    Code("Y006", E, "the file is empty"),
    Code("Y007", E, "the file is not UTF-8 text (UTF-16/UTF-32 named as such)"),
    Code("Y008", E, "the file cannot be read (the system's reason: permission denied, ...)"),
    Code("Y009", E, "not a regular file: a symlink (named with its target), FIFO, socket, device or folder"),
    Code("Y010", E, "too large: a file over 256 KiB, a scalar over 64 KiB, a folder over 10,000 files"),
    Code("Y011", E, "a YAML tag outside the core schema (`!!python/object`, `!!binary`, `!foo`)"),
    Code("Y012", E, "a second YAML document in one file"),
    Code("Y013", E, "more than 5,000 values once aliases are expanded (billion laughs)"),
    Code("Y014", E, "\"and K more\": the findings of a file past the first 50"),
    Code("Y015", E, "a file name that is not printable text (control characters, not UTF-8)"),
    Code("Y017", E, "a file name no Windows checkout can hold: a device name such as `CON` or `nul.x` (templates/)"),
    Code("Y018", W, "an entry of hosts/ or models/ gen does not read: hidden, an editor's backup, a folder, "
         "not named *.yaml or *.yml"),
    Code("Y016", E, "a template include, import or extends that is not a constant name of `templates/`, "
         "is circular, or nests deeper than 8"),
    Code("Y020", E, "a tab in a line's indentation (YAML indents with spaces only)"),
    Code("Y021", E, "a line whose indentation matches no level above it (a one-space dedent, a line indented "
         "past the value above, a key at a list's `-` column, a list item among keys)"),
    Code("Y022", E, "a quote that is not closed on its line (named where it opens)"),
    Code("Y023", E, "no space after a key's colon (`path:/a` is one word to YAML)"),
    Code("Y024", E, "a colon and a space inside an unquoted value (`a: b: c`)"),
    Code("Y025", E, "a value that starts with a character YAML reserves (`@`, a backtick, `%`, `*`) unquoted"),
    Code("Y026", E, "a `[` or `{` that is not closed, or flow items without a comma"),
    Code("Y027", E, "a key without its colon"),
    Code("Y028", E, "text after a complete value (after a closing quote or bracket)"),
    Code("S000", E, "a schema rule without a dedicated message (names the cerberus rule)"),
    Code("S001", E, "unknown key (with a did-you-mean)"),
    Code("S002", E, "wrong type, or null where a value is required"),
    Code("S003", E, "a required key is missing"),
    Code("S004", E, "a value outside the allowed ones"),
    Code("S005", E, "a number out of range, or a list or string too short"),
    Code("S006", E, "a relative or not normalized path (`..`, `.`, `//`, trailing `/`)"),
    Code("S007", E, "an invalid model, host or service name (`systemd.name_problem`: `[A-Za-z0-9_.-]`, no `..`, nothing YAML reads as a boolean, number or date, no Windows device name such as `CON`)"),
    Code("S008", E, "control, invisible (format, separator) or noncharacter Unicode in a key or value"),
    Code("S009", E, "a key or value that does not match its pattern"),
    Code("S010", E, "a path that cannot be written into a unit file"),
    Code("S011", E, "NaN, infinity or an integer beyond 64 bits, in any field"),
    Code("S012", E, "not an IP address, or a CPU list systemd would drop (reversed range, CPU > 8191)"),
    Code("S020", E, "an `ack:` of a code that cannot be acknowledged: an error, or a finding about acks"),
    Code("S021", E, "an `ack:` of a code gen never reports (with a did-you-mean)"),
    Code("S022", W, "an `ack:` that matches no warning of its file (checked when every host is processed; names the files that do report the code)"),
    Code("S023", E, "the same code acknowledged twice in one file"),
    Code("R001", E, "a service name defined twice on one host"),
    Code("R002", E, "a service names a model with no `models/<name>.yaml`"),
    Code("R003", E, "a document's name differs from its file name"),
    Code("R004", E, "a GPU index or PCI bus id appears twice in an inventory"),
    Code("R005", E, "a GPU on a NUMA node the inventory does not list"),
    Code("R006", E, "a VM is given a GPU that is not in the inventory"),
    Code("R007", E, "the repository has no `hosts/` folder"),
    Code("R008", E, "the SGLang install is under a home folder the service user cannot read"),
    Code("R009", E, "`H.yaml` and `H.yml` side by side: one would shadow the other"),
    Code("R010", W, "a listener beyond loopback without an API key"),
    Code("R011", E, "two inventories reach the same ssh address and port without both declaring `ssh.shared_with`"),
    Code("R012", E, "two inventories sharing one machine render the same service (same unit and files)"),
    Code("R013", E, "two files of `hosts/`, `models/` or `templates/` whose names differ only in case "
         "(one file on a case-insensitive checkout)"),
    Code("R014", E, "two services of one host whose names differ only in case (their units and files)"),
    Code("R015", E, "two multi-node models whose Ansible groups are one (`-` and `.` become `_`)"),
    Code("R016", E, "a host named like an Ansible inventory group (`all`, `ungrouped`, `sglang_hosts`, "
         "`gen_group_*`, `gen_rollout_*`)"),
    Code("R017", E, "two inventories whose `network.address` is one machine (every spelling of one "
         "address), without both declaring `ssh.shared_with`"),
    Code("R040", E, "a GPU gives neither `memory_mib` nor `memory_gb`"),
    Code("R041", E, "a GPU's `memory_gb` and `memory_mib` disagree (by more than 10%)"),
    Code("R042", E, "`facts.topology` is not a link matrix of inventory GPUs (square, each GPU once, X on the diagonal)"),
    Code("P001", E, "a GPU index that is not in the host's inventory"),
    Code("P002", E, "a GPU that is passed through to a VM"),
    Code("P003", E, "a GPU already used by another service, or listed twice"),
    Code("P004", E, "the service lists a GPU count other than the model's parallelism needs"),
    Code("P005", E, "a TP group crosses NUMA nodes"),
    Code("P006", E, "not enough free GPUs for the service"),
    Code("P007", E, "a port already used by another service"),
    Code("P008", E, "a path on a retired volume"),
    Code("P009", E, "weights outside the host's model root"),
    Code("P012", E, "GPU indexes disagree with PCI bus order"),
    Code("P013", E, "SGLang's own `--numa-node` disagrees with the GPUs' NUMA nodes"),
    Code("P020", E, "a multi-node model runs on a host its `multinode.hosts` does not list"),
    Code("P021", E, "a multi-node model runs twice on one host"),
    Code("P022", E, "a multi-node host (or rank 0) without a network section"),
    Code("P023", E, "a multi-node peer's inventory is missing or has errors"),
    Code("P024", E, "a host listed in `multinode.hosts` runs no service of that model"),
    Code("P025", E, "a host listed twice in `multinode.hosts`"),
    Code("P026", E, "a service port equals the multi-node `--dist-init-addr` port"),
    Code("P027", E, "the nodes of a multi-node model run different SGLang pins"),
    Code("P028", E, "the nodes of a multi-node model pass different flags"),
    Code("P029", E, "the nodes of a multi-node model run with different environments"),
    Code("P030", E, "the weights leave no KV cache: SGLang refuses to start (names the fraction that works)"),
    Code("P031", E, "the KV cache holds fewer tokens than one request at the context length"),
    Code("P032", W, "less is left for CUDA graphs and activations than SGLang's default rule keeps"),
    Code("P033", W, "mem_fraction_static at or above 0.95"),
    Code("P034", E, "what SGLang allocates after the KV pool (request table; 0.5.9: the draft) does not fit: CUDA OOM at launch"),
    Code("P035", E, "parallel.pp above 1 for an architecture whose SGLang class takes no pp_proxy_tensors: SGLang asserts at start"),
    Code("P040", W, "a TP group crosses the CPU interconnect (SYS in the link matrix) while better-joined free GPUs exist"),
    Code("F001", E, "unknown flag for the pin (foreign spellings explained)"),
    Code("F002", E, "an ambiguous flag prefix"),
    Code("F003", E, "a value outside the flag's choices"),
    Code("F004", E, "a value of the wrong type"),
    Code("F005", E, "the wrong number of values (nargs)"),
    Code("F006", E, "a value given to a switch, also as `--switch=VALUE` (SGLang refuses it whatever the value)"),
    Code("F007", E, "a flag removed or renamed in this pin"),
    Code("F008", E, "a flag given twice with different values"),
    Code("F009", E, "a flag that makes SGLang print its help and exit"),
    Code("F010", E, "a deprecated flag this pin refuses"),
    Code("F101", W, "an abbreviated flag (rendered in full)"),
    Code("F102", W, "an alias of a flag (rendered under its first name)"),
    Code("F103", W, "an underscore spelling of a flag"),
    Code("F104", W, "a deprecated flag"),
    Code("F105", W, "`weights.quantization` names a `--quantization` choice but is informational: no flag is rendered"),
    Code("F106", W, "a flag given twice with the same value (the second is left out)"),
    Code("C001", E, "no committed catalog for the host's SGLang pin (says how to capture one)"),
    Code("C040", E, "a model snapshot `catalogs/models/<model>.json` that is not JSON (at the parser's position)"),
    Code("C041", E, "a model snapshot of another format, or named after another model"),
    Code("C010", E, "a rule of `catalogs/rules.yaml` without a predicate"),
    Code("C011", E, "a predicate without a rule in `catalogs/rules.yaml`"),
    Code("C012", E, "a rule id or code used twice in `catalogs/rules.yaml`"),
    Code("C013", E, "a rule's code does not fit its severity (X0xx and X2xx errors, X1xx warnings)"),
    Code("C014", E, "a version range that is not \"all\" or comma-joined bounds"),
    Code("C015", E, "a pattern of `catalogs/env-known.yaml` that is not a regular expression"),
    Code("C016", E, "a captured file of `catalogs/` (`*.json`) whose content does not match the digest its "
         "capture recorded: edited after the capture"),
    Code("C017", E, "a captured file of `catalogs/` (`*.json`) without its capture header (`captured` with "
         "`tool` and `sha256`)"),
    Code("C019", E, "a text of `catalogs/rules.yaml` naming a field it is never given: one its predicate never "
         "passes, or a text of the broken check that one of the rule's checks lacks (it would print as written)"),
    Code("C030", E, "a malformed `when:` condition of a declarative rule in `catalogs/rules.yaml`"),
    Code("C031", E, "a rule of `catalogs/rules.yaml` with both a `when:` condition and a predicate"),
    Code("C032", E, "a text of `catalogs/rules.yaml` (message, fix, checks) that is not a template of named "
         "placeholders: a format spec, a conversion other than !r, an index, an attribute walk, or a placeholder that is not "
         "a name or reader.NAME"),
    Code("E001", E, "an SGLang variable this pin does not read (with a did-you-mean)"),
    Code("E002", E, "a value SGLang would silently ignore (its own parse rule for the variable)"),
    Code("E003", E, "an SGLang variable this pin does not read but another committed pin does"),
    Code("E004", E, "an `env:` variable gen sets itself, read from the rendered unit: its `Environment=` (HOME, TRITON_CACHE_DIR, ...), what systemd sets for a setting gen renders (User=, CacheDirectory=, LoadCredential=, ...), the GPUs and NICs gen writes"),
    Code("E005", E, "a value the variable's reader does not understand (catalogs/env-known.yaml)"),
    Code("E006", E, "a deprecated variable SGLang maps onto a successor of the opposite sense (DISABLE -> ENABLE): its value now does the opposite"),
    Code("E101", W, "a variable SGLang lists as deprecated or renamed (its own message)"),
    Code("E102", W, "the old `SGL_` prefix, which SGLang reads as `SGLANG_` with a warning"),
    Code("E103", W, "a non-SGLang variable its reader has renamed (catalogs/env-known.yaml)"),
    Code("M001", E, "a checkpoint file gen does not read: a symlink, FIFO or device, too large, or a safetensors "
         "header length past 100 MB (`gen model snapshot`)"),
    Code("M002", E, "a checkpoint file that is not what its name says: config.json or the index not JSON (at "
         "the parser's position) or not an object, a malformed index or safetensors header"),
    Code("M003", E, "an incomplete checkpoint: a shard missing, cut short or lacking tensors the index names, "
         "an index total_size the shards do not hold, no weights at all"),
    Code("M010", E, "`weights.size_gb` disagrees with the snapshot's index total_size (or is missing without a snapshot)"),
    Code("M011", E, "`weights.shards` disagrees with the snapshot's shard count"),
    Code("M012", E, "`weights.params_b` disagrees with the snapshot's parameter count"),
    Code("I001", E, "an unterminated quote"),
    Code("I002", E, "a variable, a command substitution (`$(...)`, backquotes), an arithmetic expansion, a `~` the shell expands, or a systemd specifier gen cannot expand"),
    Code("I003", W, "a line that does not continue the one before with a backslash"),
    Code("I004", W, "a shell operator or redirection: the rest of the line is ignored"),
    Code("I005", E, "not an SGLang launch command"),
    Code("I006", E, "an unexpected word (SGLang's parser takes no positional arguments)"),
    Code("I007", W, "a value to fill in: weights path or size unknown from a command"),
    Code("I008", W, "a flag dropped because gen sets it from the inventory"),
    Code("I009", E, "an option of `env` before the program that a unit cannot carry (`-C`, `-S`, signals); `-i` and `-u NAME` are dropped, said so"),
    Code("I010", W, "an unquoted `*`, `?`, `[` or `{a,b}` a shell would expand (imported as written)"),
    Code("I011", E, "shell text that is no word of a command: an unquoted `(` or `)` (a subshell or a syntax error), a byte beyond ASCII in `$'...'`"),
    Code("K001", E, "a flag that carries a secret (by its catalog names or help) in `args:` or an imported command"),
    Code("K002", E, "an environment variable named like a secret in `env:` (the list in `generator/secrecy.py`: HF_TOKEN, AZURE_OPENAI_KEY, GITHUB_PAT, *_API_KEY, *_TOKEN, ...)"),
    Code("K003", E, "`secret_args`: not a value-taking flag, also given in `args:`, or `--config` given beside it"),
    Code("K004", E, "`secret_args` on a pin whose SGLang has no `--config`"),
    Code("K005", E, "a credential inside a value (`env:` or a flag's): a URL's `user:password@` or token user (any scheme), a token of a published format (`hf_`, `ghp_`, `AKIA`...), an Authorization header"),
    Code("O001", E, "a file of `output/` a render would change (a diagnostic in `--format json`/`sarif`)"),
    Code("O002", E, "an entry of `output/` gen neither renders nor owns (a file, folder or link beside the rendered "
         "ones): gen never writes or removes it"),
    Code("O003", E, "a host folder of `output/` with no inventory in `hosts/` and no `.gen-managed` list"),
    Code("O004", E, "an entry of `ansible/` gen ansible does not write (group_vars/, host_vars/, plugins, "
         "ansible.cfg, ...), or an `ansible.cfg` at the repository's root beside `ansible/`: Ansible would read it too"),
    Code("O020", E, "a file of `ansible/` that `gen ansible` would change (a diagnostic in `--format json`/`sarif`)"),
    Code("D001", E, "a generated schema, `docs/manifests.md`, `docs/rules.md` or `docs/tables.md` is missing or not current"),
    Code("D002", E, "a rule of `catalogs/rules.yaml` that differs from the committed `docs/rules.md`: each change "
         "printed (new, gone, or its lines before and after)"),
    Code("D003", E, "an entry of a curated table (`catalogs/env-known.yaml`, `renames.yaml`, `foreign-flags.yaml`, "
         "`choice-synonyms.yaml`) that differs from the committed `docs/tables.md`: each change printed"),
    Code("A001", E, "a rollout size (`batch`, `max_unavailable`) written as text that is not a percentage from "
                    "'1%' to '100%' (a number of hosts is bounded by the schema)"),
    Code("A002", W, "`canary` takes every host its play rolls out: no batch follows, so nothing is proven first"),
    Code("A003", W, "`rollout:` in a multi-node model: its ranks always restart together, as one unit"),
    Code("A004", W, "services of one model on one host restart together, more than its `max_unavailable`"),
)

REGISTRY: dict[str, Code] = {}
for _c in _CODES:
    # A code defined twice would make its meaning ambiguous: refuse at import.
    if _c.code in REGISTRY or _c.code[0] not in FAMILIES or not re.fullmatch(r"[A-Z]\d{3}", _c.code):
        raise AssertionError(f"bad or duplicate code in the registry: {_c.code}")
    REGISTRY[_c.code] = _c
del _c

_RULE_CODE = re.compile(r"[XGM]([012])\d\d")


def rule_code_severity(code: str) -> Severity | None:
    """The severity a rule code of catalogs/rules.yaml implies (``X`` flag rules, ``G`` GPU rules, ``M`` model rules:
    x0xx and x2xx error, x1xx warning), None if not one."""
    match = _RULE_CODE.fullmatch(code)
    if not match:
        return None
    return Severity.WARNING if match.group(1) == "1" else Severity.ERROR


def lookup(code: str) -> Code | None:
    """The registered code; an ``X`` rule code is valid by its form (its text is in rules.yaml)."""
    found = REGISTRY.get(code)
    if found is not None:
        return found
    severity = rule_code_severity(code)
    if severity is not None:
        return Code(code, severity, "a rule of catalogs/rules.yaml (X: SGLang's cross-flag rules, G: GPU rules, M: model rules)")
    return None


def check(code: str, severity: Severity) -> None:
    """Refuse an unregistered code, or one recorded with another severity than registered."""
    found = lookup(code)
    if found is None:
        raise ValueError(f"diagnostic code {code!r} is not registered in generator/codes.py")
    if found.severity is not severity:
        raise ValueError(f"diagnostic code {code} is registered as {found.severity.value}, "
                         f"recorded as {severity.value}")


def readme_table() -> str:
    """The README's tables: the families, then one row per registered code."""
    lines = ["| family | what |", "|---|---|"]
    for family in FAMILIES.values():
        lines.append(f"| `{family.letter}` {family.name} | {family.what} |")
    lines += ["", "| code | severity | meaning |", "|---|---|---|"]
    lines += [f"| `{c.code}` | {c.severity.value} | {c.meaning} |" for c in _CODES]
    lines.append("| `X0xx`, `X2xx` / `X1xx` | error / warning | one per rule of `catalogs/rules.yaml` |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m generator.codes: print the README table
    sys.stdout.write(readme_table())
