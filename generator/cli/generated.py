"""Files gen generates into the repository itself: the editor schemas and the manifest reference.

``gen schema --write`` writes them; :func:`check_generated` is the small hook ``gen check``
calls: each such file the repository commits must equal what gen generates now (D001).
A repository that commits none of them (a deployment repo without the docs) is not
asked to.
"""

from __future__ import annotations

from pathlib import Path

from generator.errors import Diagnostic, Position
from generator.load.files import read_file

MAX_GENERATED_BYTES = 4 * 1024 * 1024  # the largest generated file, docs/manifests.md, is ~60 KB


def generated_files(root: Path) -> dict[str, str]:
    """Repository path -> the text gen generates for it."""
    from generator.cli.manifest_docs import DOCS_FILE, manifest_docs  # loads catalogs: only when asked
    from generator.load.schema_json import SCHEMA_FILES, schema_text

    files = {path: schema_text(kind) for kind, path in SCHEMA_FILES.items()}
    files[DOCS_FILE] = manifest_docs(root)
    return files


def check_generated(root: Path) -> list[Diagnostic]:
    """A D001 error for each committed generated file that is not current."""
    out: list[Diagnostic] = []
    if not any((root / p).exists() for p in ("schemas", "docs/manifests.md")):
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
    return out
