"""Files gen generates into the repository itself: the editor schemas, the manifest and rules references.

``gen schema --write`` writes them; :func:`check_generated` is the small hook ``gen check``
calls: each such file the repository commits must equal what gen generates now (D001).
A repository that commits none of them (a deployment repo without the docs) is not
asked to.
"""

from __future__ import annotations

from pathlib import Path

from generator.errors import Diagnostic, Position


def generated_files(root: Path) -> dict[str, str]:
    """Repository path -> the text gen generates for it."""
    from generator.cli.manifest_docs import DOCS_FILE, manifest_docs  # loads catalogs: only when asked
    from generator.load.schema_json import SCHEMA_FILES, schema_text

    files = {path: schema_text(kind) for kind, path in SCHEMA_FILES.items()}
    files[DOCS_FILE] = manifest_docs(root)
    rules = _rules_docs(root)
    if rules is not None:
        files[RULES_DOCS_FILE] = rules
    return files


RULES_DOCS_FILE = "docs/rules.md"


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
        try:
            current = (root / path).read_text(encoding="utf-8")
        except FileNotFoundError:
            current = None
        except (OSError, UnicodeDecodeError) as exc:
            out.append(Diagnostic(Position(path), "D001", f"{path} cannot be read: {exc}"))
            continue
        if current != text:
            state = "is missing" if current is None else "is not current"
            out.append(Diagnostic(Position(path), "D001", f"{path} {state}", hint="run `gen schema --write`"))
    return out
