"""Tests for generator/emit/render.py's template environment, kept across renders of one process:
a changed template or partial is read again (jinja2's auto_reload), the sandbox stays, and the
unit template's context.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.emit.render import render_template
from generator.errors import TemplateError


def _write(path: Path, text: str, bump: int) -> None:
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + bump * 10**9))  # a later mtime, for sure


def test_a_changed_template_or_partial_is_read_again(tmp_path: Path) -> None:
    _write(tmp_path / "main.j2", "main {{ x }} {% include 'part.j2' %}", 1)
    _write(tmp_path / "part.j2", "part one", 1)
    assert render_template(tmp_path, "main.j2", {"x": 1}) == "main 1 part one"
    assert render_template(tmp_path, "main.j2", {"x": 2}) == "main 2 part one"
    _write(tmp_path / "part.j2", "part two", 2)  # only the included file changes
    assert render_template(tmp_path, "main.j2", {"x": 3}) == "main 3 part two"
    _write(tmp_path / "main.j2", "new {{ x }}", 3)
    assert render_template(tmp_path, "main.j2", {"x": 4}) == "new 4"


def test_a_removed_template_is_not_found(tmp_path: Path) -> None:
    _write(tmp_path / "gone.j2", "here", 1)
    assert render_template(tmp_path, "gone.j2", {}) == "here"
    (tmp_path / "gone.j2").unlink()
    with pytest.raises(TemplateError, match="templates/gone.j2: template not found"):
        render_template(tmp_path, "gone.j2", {})


def test_the_sandbox_still_refuses_internals(tmp_path: Path) -> None:
    """The environment kept across renders is the immutable sandbox (issue 10's attack)."""
    _write(tmp_path / "evil.j2", "{{ cycler.__init__.__globals__ }}", 1)
    with pytest.raises(TemplateError):
        render_template(tmp_path, "evil.j2", {})
    _write(tmp_path / "list.j2", "{{ items.append(1) }}", 1)
    with pytest.raises(TemplateError):
        render_template(tmp_path, "list.j2", {"items": []})


def test_the_unit_context_carries_what_the_template_used_to_assemble() -> None:
    """description, cpus and numa_node are the placement's own values (golden output unchanged);
    a placement without NUMA nodes leaves numa_node undefined rather than inventing one."""
    import dataclasses

    from generator.emit.render import _context, home_install_paths
    from generator.pipeline.fleet import run
    from generator.plan.services import PlannedService

    root = Path(__file__).resolve().parent.parent
    result = run(root, ["llm-two"])
    [host_render] = result.renders
    svc = host_render.services[0]
    p = svc.placement
    planned = PlannedService(p, svc.argv, svc.environment)
    ctx = _context(host_render.host, host_render.catalog, planned, home_install_paths(host_render.host))
    assert ctx["description"] == f"SGLang {p.service.name}: {p.model.name} on GPUs {p.cuda_visible_devices}"
    assert ctx["cpus"] == p.cpus and p.cpus and ctx["numa_node"] == p.numa_nodes[0]
    bare = PlannedService(dataclasses.replace(p, numa_nodes=()), svc.argv, svc.environment)
    assert "numa_node" not in _context(host_render.host, host_render.catalog, bare, [])
