"""The playbook's preflight reads the argv back from the staged unit (generator/live/onhost.py).

For every unit gen renders, the argv read from the file equals the argv gen meant
(without the program words), so the host's SGLang checks exactly what would run.
"""

from __future__ import annotations

from pathlib import Path

from generator.live.onhost import argv_from_unit
from generator.pipeline.fleet import run

ROOT = Path(__file__).resolve().parents[1]


def test_argv_read_from_every_rendered_unit_is_the_rendered_argv(tmp_path: Path) -> None:
    result = run(ROOT, None)
    assert result.ok
    checked = 0
    for render in result.renders:
        for rs in render.services:
            path = tmp_path / f"{render.host.name}-{rs.placement.service.name}.service"
            path.write_text(next(f.text for f in render.tree.files if f.relpath == rs.unit_path))
            assert argv_from_unit(str(path)) == list(rs.argv.argv[3:]), path.name
            checked += 1
    assert checked >= 4
