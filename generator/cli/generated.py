"""Files gen generates into the repository itself: the editor schemas, the manifest and rules references.

``gen schema --write`` writes them; :func:`check_generated` is the small hook ``gen check``
calls: each such file the repository commits must equal what gen generates now (D001).
A repository that commits none of them (a deployment repo without the docs) is not
asked to.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from generator.errors import Diagnostic, Position
from generator.load.files import read_file

MAX_GENERATED_BYTES = 4 * 1024 * 1024  # the largest generated file, docs/manifests.md, is ~60 KB


def generated_files(root: Path) -> dict[str, str]:
    """Repository path -> the text gen generates for it."""
    from generator.cli.manifest_docs import DOCS_FILE, manifest_docs  # loads catalogs: only when asked
    from generator.cli.schema_pins import schema_file_text
    from generator.load.schema_json import SCHEMA_FILES

    schemas = {path: schema_file_text(kind, root) for kind, path in SCHEMA_FILES.items()}
    files = {path: text for path, text in schemas.items() if text is not None}  # None: a catalog is edited
    files[DOCS_FILE] = manifest_docs(root)
    rules = _rules_docs(root)
    if rules is not None:
        files[RULES_DOCS_FILE] = rules
    from generator.cli.tables_docs import tables_docs  # reads the tables: only when asked

    tables = tables_docs(root)
    if tables is not None:
        files[TABLES_DOCS_FILE] = tables
    return files


RULES_DOCS_FILE = "docs/rules.md"
TABLES_DOCS_FILE = "docs/tables.md"  # cli/tables_docs.py


def _rules_docs(root: Path) -> str | None:
    """docs/rules.md, or None when the repository has no rules file of its own or it is broken
    (gen check reports a broken rules file with its positions; the page waits for the fix)."""
    from generator.cli.rules_docs import rules_docs
    from generator.sglang.datafiles import DataFileError

    if not (root / "catalogs" / "rules.yaml").is_file():
        return None
    try:
        return rules_docs(root)
    except DataFileError:
        return None


def check_generated(root: Path) -> list[Diagnostic]:
    """A D001 error for each committed generated file that is not current."""
    out: list[Diagnostic] = []
    if not any((root / p).exists() for p in ("schemas", "docs/manifests.md", RULES_DOCS_FILE)):
        return out
    for path, text in generated_files(root).items():
        # Read like every other repository file: a regular file only, bounded. A pull request
        # can commit docs/manifests.md as a link to /dev/zero, which gen check read forever.
        data, problem = read_file(root / path, path, limit=max(MAX_GENERATED_BYTES, 2 * len(text)))
        if problem is not None and problem.code == "Y008" and not (root / path).exists():
            current = None
        elif problem is not None or data is None:
            reason = problem.message if problem is not None else "cannot be read"
            out.append(Diagnostic(Position(path), "D001", f"{path} {reason}",
                                  hint="remove it, then run `gen schema --write`"))
            continue
        else:
            current = data.decode("utf-8", "replace")
        if current != text:
            state = "is missing" if current is None else "is not current"
            out.append(Diagnostic(Position(path), "D001", f"{path} {state}", hint="run `gen schema --write`"))
            if path == RULES_DOCS_FILE and current is not None:
                out += section_changes(path, current, text)
            elif path == TABLES_DOCS_FILE and current is not None:
                out += section_changes(path, current, text, code="D003", source=_table_of)
    return out


def _table_of(heading: str) -> str:
    """The table a section of docs/tables.md comes from (``env-known.yaml variables: X``)."""
    return "catalogs/" + heading.split(" ", 1)[0].split(":", 1)[0]


# docs/rules.md is the committed page every rule change must show in: gen check prints each
# rule that differs from it (D002), so neither CI's log nor the review can miss a rule turned
# off, narrowed or reworded in catalogs/rules.yaml.
_SHOWN = 160  # characters of a changed line shown on each side
# changed lines named per rule: the committed page is repository text, and one section of a
# hand-made 4 MiB page made one message of megabytes
_SHOWN_LINES = 12


def _sections(text: str) -> dict[str, tuple[int, list[str]]]:
    """The ``## `` sections of a generated page: heading -> (its line, its other lines)."""
    out: dict[str, tuple[int, list[str]]] = {}
    heading: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            heading = line[3:].strip()
            out[heading] = (number, [])
        elif heading is not None and line.strip():
            out[heading][1].append(line)
    return out


def _short(line: str) -> str:
    line = line.removeprefix("- ")
    return line if len(line) <= _SHOWN else line[:_SHOWN] + "..."


def section_changes(path: str, committed: str, generated: str, code: str = "D002",
                    source: Callable[[str], str] = lambda _heading: "catalogs/rules.yaml") -> list[Diagnostic]:
    """``code`` (D002: a rule; D003: an entry of a table) for each section of ``generated``
    that differs from the committed page: new, gone, or its changed lines, old -> new, at the
    committed section's line; ``source`` names the file a section comes from."""
    old, new = _sections(committed), _sections(generated)
    out: list[Diagnostic] = []
    for heading in sorted(set(old) | set(new)):
        if heading not in old:
            out.append(Diagnostic(Position(path), code, f"{heading} is new in {source(heading)} (not in the "
                                  f"committed {path})", hint="review it, then run `gen schema --write`"))
            continue
        line, before = old[heading]
        if heading not in new:
            out.append(Diagnostic(Position(path, line, 1), code, f"{heading} is gone from {source(heading)} "
                                  f"(the committed {path} has it)", hint="review it, then run `gen schema --write`"))
            continue
        after = new[heading][1]
        if before == after:
            continue
        kept_before, kept_after = set(before), set(after)
        gone = [x for x in before if x not in kept_after]
        came = [x for x in after if x not in kept_before]
        shown = [f'was "{_short(x)}"' for x in gone] + [f'now "{_short(x)}"' for x in came]
        more = len(shown) - _SHOWN_LINES
        changes = "; ".join(shown[:_SHOWN_LINES]) + (f"; and {more} more changed line(s)" if more > 0 else "")
        out.append(Diagnostic(Position(path, line, 1), code, f"{heading} changed: {changes}",
                              hint="review it, then run `gen schema --write`"))
    return out
