"""Tests for generator/emit/render.py's templating: the texts read_templates read, sandboxed and bounded.

Jinja is handed the texts of templates/ (emit/templates.py), never a path: a changed file is a
new set of texts, and what renders is exactly what was read. A render is bounded in CPU,
memory, recursion and output size: templates are code from the repository (issue 22 item 2).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.emit.render import MAX_RENDERED_BYTES, render_template
from generator.emit.templates import Templates
from generator.errors import TemplateError


@pytest.fixture(autouse=True)
def _fresh_budget() -> None:
    """Each test is a run of its own: the renders' CPU budget is per run."""
    from generator.emit.render import reset_budget

    reset_budget()


def _templates(**texts: str) -> Templates:
    return Templates(tuple(sorted((name.replace("_", ".", 1), text) for name, text in texts.items())))


def test_a_changed_template_or_partial_is_a_new_set_of_texts() -> None:
    first = _templates(main_j2="main {{ x }} {% include 'part.j2' %}", part_j2="part one")
    assert render_template(first, "main.j2", {"x": 1}) == "main 1 part one"
    second = _templates(main_j2="main {{ x }} {% include 'part.j2' %}", part_j2="part two")
    assert second.digest != first.digest
    assert render_template(second, "main.j2", {"x": 3}) == "main 3 part two"
    assert render_template(first, "main.j2", {"x": 2}) == "main 2 part one"  # each set renders its own


def test_a_missing_template_is_not_found_and_no_file_is_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gone.j2").write_text("on disk, never read")
    with pytest.raises(TemplateError, match="templates/gone.j2: template not found"):
        render_template(_templates(main_j2="x"), "gone.j2", {})


def test_the_sandbox_still_refuses_internals() -> None:
    """The environment kept across renders is the immutable sandbox (issue 10's attack)."""
    with pytest.raises(TemplateError):
        render_template(_templates(evil_j2="{{ cycler.__init__.__globals__ }}"), "evil.j2", {})
    with pytest.raises(TemplateError):
        render_template(_templates(list_j2="{{ items.append(1) }}"), "list.j2", {"items": []})


@pytest.mark.parametrize("text, words", [
    # loops of loops: 10**10 iterations, a hang of gen check (was: killed by the CI timeout)
    ("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}", "CPU"),
    ("{% for a in 'x' * 99999 %}{% for b in 'y' * 99999 %}{{ '' }}{% endfor %}{% endfor %}", "CPU"),
    # gigabytes from one call (was: minutes of swapping)
    ("{{ 'x'.ljust(3000000000) | length }}", "memory"),
    ("{{ ('x' * 2000000000) | length }}", "memory"),
    # a macro calling itself (was: RecursionError, exit 4)
    ("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", "calls itself"),
    # one rendered file of 20 MB
    ("{{ 'x' * 20000000 }}", "a rendered file holds"),
])
def test_a_render_is_bounded(text: str, words: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.emit import render

    monkeypatch.setattr(render, "RENDER_CPU_SECONDS", 0.5)  # the bound, not its size, is tested
    with pytest.raises(TemplateError, match=words):
        render_template(_templates(bomb_j2=text), "bomb.j2", {})
    # ...and the next render of this process is unaffected (limits put back)
    assert render_template(_templates(ok_j2="{{ 'ok' * 3 }}"), "ok.j2", {}) == "okokok"
    assert len(bytearray(200 * 1024 * 1024)) == 200 * 1024 * 1024  # memory limit lifted


def test_a_large_but_sane_file_renders() -> None:
    text = render_template(_templates(big_j2="{{ 'x' * n }}"), "big.j2", {"n": MAX_RENDERED_BYTES})
    assert len(text) == MAX_RENDERED_BYTES


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


def test_the_pin_line_names_the_commit_of_a_source_build() -> None:
    """A catalog captured from a git checkout of SGLang carries its commit: every generated file
    says which one, as the version alone does not tell two builds of one release apart."""
    import dataclasses

    from generator.emit.render import header
    from generator.pipeline.fleet import run

    [host_render] = run(Path(__file__).resolve().parent.parent, ["llm-two"]).renders
    host, catalog = host_render.host, host_render.catalog
    built = dataclasses.replace(catalog, commit="4f1e2d3")
    pin = f"against catalogs/sglang/{catalog.pin}.json"
    assert f"# SGLang: {catalog.version} (commit 4f1e2d3), flags checked {pin}\n" in header(host, ["m"], built)
    assert f"# SGLang: {catalog.version}, flags checked {pin}\n" in header(host, ["m"], dataclasses.replace(catalog, commit=None))


def test_the_runs_renders_share_one_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each file's 5 s is not the bound of the run: 3,000 files of 4.9 s each were hours of CI."""
    from generator.emit import render

    monkeypatch.setattr(render, "RUN_CPU_SECONDS", 0.6)
    slow = _templates(slow_j2="{% for a in range(1000) %}{% for b in range(200) %}{% endfor %}{% endfor %}x")
    with pytest.raises(TemplateError, match="the run's renders"):
        for _ in range(200):
            render_template(slow, "slow.j2", {})
    render.reset_budget()  # the next run starts afresh
    assert render_template(slow, "slow.j2", {}) == "x"
