"""templates/ read like models/ (generator/emit/templates.py): regular files, bounded, includes known.

The issue's finding: ``templates/x.j2 -> /proc/self/environ`` plus ``{% include "x.j2" %}``
put the CI job's environment into ``gen diff`` and ``output/``, and the render cache keyed
the link by its name. Each test plants one thing in a copy of the example repo.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from generator.cli.main import main
from generator.emit.templates import MAX_INCLUDE_DEPTH, MAX_TEMPLATE_BYTES, MAX_TEMPLATES, load_templates

SECRET = "CI_TOKEN_gen_test_7f3a"


def _gen(*args: str, cache: Path | None = None) -> Result:
    env = {"GEN_RENDER_CACHE": str(cache) if cache else "off", "GEN_TEST_SECRET": SECRET}
    return CliRunner().invoke(main, list(args), env=env)


def _include(repo: Path, name: str, where: str = "hardening.j2") -> None:
    tpl = repo / "templates" / where
    tpl.write_text(tpl.read_text() + f'# {{% include "{name}" %}}\n')


def _codes(repo: Path) -> list[tuple[str, str]]:
    return [(d.pos.path, d.code) for d in load_templates(repo)[1]]


@pytest.mark.parametrize("target", ["/proc/self/environ", "../hosts/llm-two.yaml", "sglang.env.j2"])
def test_a_linked_template_is_refused_and_never_read(repo_copy: Path, target: str) -> None:
    os.symlink(target, repo_copy / "templates" / "x.j2")
    _include(repo_copy, "x.j2")
    for command in ("diff", "check", "render"):
        result = _gen(command, *(["--all"] if command == "render" else []), "--root", str(repo_copy))
        assert result.exit_code == 1, result.output
        assert SECRET not in result.output + result.stderr
        assert f"templates/x.j2: error[Y009]: is a symbolic link (to '{target}')" in result.stderr
    assert not [p for p in (repo_copy / "output").rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]


def test_a_linked_folder_a_fifo_a_device_and_a_subfolder_are_refused(repo_copy: Path, tmp_path: Path) -> None:
    os.mkfifo(repo_copy / "templates" / "fifo.j2")
    os.symlink("/dev/zero", repo_copy / "templates" / "zero.j2")
    (repo_copy / "templates" / "sub").mkdir()
    assert _codes(repo_copy) == [("templates/fifo.j2", "Y009"), ("templates/sub", "Y009"),
                                 ("templates/zero.j2", "Y009")]
    moved = tmp_path / "elsewhere"
    (repo_copy / "templates").rename(moved)
    os.symlink(moved, repo_copy / "templates")
    assert _codes(repo_copy) == [("templates/", "Y009")]


def test_size_count_encoding_and_names_are_bounded(repo_copy: Path) -> None:
    folder = repo_copy / "templates"
    with open(folder / "big.j2", "wb") as handle:
        handle.truncate(MAX_TEMPLATE_BYTES + 1)
    (folder / "latin1.j2").write_bytes(b"caf\xe9")
    (folder / "bad\nname.j2").write_text("x")
    assert sorted(_codes(repo_copy)) == [("templates/bad\\nname.j2", "Y015"), ("templates/big.j2", "Y010"),
                                         ("templates/latin1.j2", "Y007")]
    [named] = [d for d in load_templates(repo_copy)[1] if d.code == "Y015"]
    assert named.message == "a template name is letters, digits, '_', '.' and '-', printable text: rename it"
    for i in range(MAX_TEMPLATES):
        (folder / f"extra{i}.j2").write_text("x")
    assert _codes(repo_copy) == [("templates/", "Y010")]


@pytest.mark.parametrize("statement, message", [
    ('{% include name %}', "not a constant string"),
    ('{% include ["a.j2", "b.j2"] %}', "not a constant string"),
    ('{% include "../hosts/llm-two.yaml" %}', "is not a template of templates/"),
    ('{% include "/proc/self/environ" %}', "is not a template of templates/"),
    ('{% import "nope.j2" as n %}', "is not a template of templates/"),
    ('{% from "nope.j2" import m %}', "is not a template of templates/"),
    ('{% include "hardening.j2" %}', "in a circle (hardening.j2 -> hardening.j2)"),
    ('{% include "sglang.service.j2" %}', "in a circle (hardening.j2 -> sglang.service.j2 -> hardening.j2)"),
])
def test_includes_are_constant_known_and_not_circular(repo_copy: Path, statement: str, message: str) -> None:
    tpl = repo_copy / "templates" / "hardening.j2"
    lines = tpl.read_text().count("\n")
    tpl.write_text(tpl.read_text() + statement + "\n")
    problems = load_templates(repo_copy)[1]
    assert [d.code for d in problems] == ["Y016"], problems
    assert message in problems[0].message
    if "sglang.service.j2 ->" not in message:  # a circle is reported where the walk closes it
        assert (problems[0].pos.path, problems[0].pos.line) == ("templates/hardening.j2", lines + 1)
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 1 and "error[Y016]" in result.stderr and "Traceback" not in result.output


def test_include_chains_are_bounded(repo_copy: Path) -> None:
    folder = repo_copy / "templates"
    for i in range(MAX_INCLUDE_DEPTH + 1):
        folder.joinpath(f"c{i}.j2").write_text(f'{{% include "c{i + 1}.j2" %}}' if i < MAX_INCLUDE_DEPTH else "end")
    problems = load_templates(repo_copy)[1]
    assert [(d.pos.path, d.code) for d in problems] == [("templates/c0.j2", "Y016")]
    assert "at most 8" in problems[0].message
    folder.joinpath("c0.j2").write_text("start")  # one shorter: fine
    assert load_templates(repo_copy)[1] == []


def test_the_render_cache_keys_what_jinja_reads(repo_copy: Path, tmp_path: Path) -> None:
    """The same names with other text must miss: gen check then says output/ is stale."""
    cache = tmp_path / "cache"
    assert _gen("render", "--all", "--root", str(repo_copy), cache=cache).exit_code == 0
    assert _gen("check", "--root", str(repo_copy), cache=cache).exit_code == 0
    tpl = repo_copy / "templates" / "hardening.j2"
    stat = tpl.stat()
    tpl.write_text(tpl.read_text().replace("NoNewPrivileges=yes", "NoNewPrivileges=no "))
    os.utime(tpl, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same mtime
    result = _gen("check", "--root", str(repo_copy), cache=cache)
    assert result.exit_code == 1 and "would be updated" in result.stderr


def test_the_example_templates_load_clean() -> None:
    root = Path(__file__).resolve().parent.parent
    templates, problems = load_templates(root)
    assert problems == [] and templates is not None
    assert [name for name, _ in templates.texts] == ["hardening.j2", "sglang-wait-ready.py.j2",
                                                     "sglang.env.j2", "sglang.service.j2"]
