"""Paths and module names written in docs and comments name things that exist.

After a move (issue 9's folders by stage) a comment saying ``generator/rules.py`` sends
a reader nowhere. Every ``generator/...py`` path and every dotted ``generator.x.y`` name
in the project's text must resolve: the file, or the module and then an attribute of it.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SLASHED = re.compile(r"\bgenerator/[\w/]+\.py\b")
DOTTED = re.compile(r"\bgenerator(?:\.\w+)+")
TEXT_FILES = ("README.md", "ARCHITECTURE.md", "pyproject.toml", "catalogs/README.md", "catalogs/rules.yaml")


def _texts() -> list[Path]:
    files = [ROOT / name for name in TEXT_FILES if (ROOT / name).is_file()]
    for folder in ("generator", "tests", "bench", "templates"):
        files += sorted(p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".j2", ".md")
                        and "fixtures" not in p.parts)
    files += sorted(p for p in (ROOT / "scripts").iterdir() if p.is_file())
    return [p for p in files if p != Path(__file__).resolve()]  # its docstring shows stale names


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):
        name = ".".join(parts[:cut])
        rel = ROOT.joinpath(*parts[:cut])
        if rel.with_suffix(".py").is_file() or (rel / "__init__.py").is_file():
            module = importlib.import_module(name)
            rest = parts[cut:]
            return not rest or hasattr(module, rest[0])
    return hasattr(importlib.import_module("generator"), parts[1])


def test_paths_and_module_names_in_text_exist() -> None:
    stale: list[str] = []
    seen = 0
    for path in _texts():
        text = path.read_text(encoding="utf-8", errors="replace")
        for found in SLASHED.findall(text):
            seen += 1
            if not (ROOT / found).is_file():
                stale.append(f"{path.relative_to(ROOT)}: {found}")
        for found in set(DOTTED.findall(text)):
            seen += 1
            if not _resolves(found):
                stale.append(f"{path.relative_to(ROOT)}: {found}")
    assert seen > 50, "the scan found almost nothing: its patterns are broken"
    assert not stale, "names of things that do not exist:\n" + "\n".join(stale)
