"""The playbook's preflight reads argv and environment back from the staged files (generator/live/onhost.py).

For every unit gen renders, the argv read from the file equals the argv gen meant
(without the program words), and the environment read from the unit and its env file
equals what the real systemd parses, so the host's SGLang checks exactly what would run.
"""

from __future__ import annotations

from pathlib import Path

from systemd_unquote import env_file_readback, split_quoted, systemd_load

from generator.live.onhost import (argv_from_unit, environment_from_unit, expand_specifiers, read_env_file,
                                   unit_environment)
from generator.pipeline.fleet import run
from generator.systemd import env_file_line

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


def test_environment_read_from_every_rendered_unit_is_what_systemd_reads(tmp_path: Path) -> None:
    """Environment= as the real systemd parses it; the env file as systemd's env-file.c reads it."""
    result = run(ROOT, None)
    assert result.ok
    checked = 0
    for render in result.renders:
        files = {f.relpath: f.text for f in render.tree.files}
        for rs in render.services:
            name = rs.placement.service.unit
            unit = tmp_path / name
            unit.write_text(files[rs.unit_path])
            assignments, env_files = unit_environment(str(unit))
            parsed = systemd_load(name, files[rs.unit_path], system_units=True)
            # systemd --test dumps the values with the specifiers expanded, as the process gets them.
            assert [f"{k}={expand_specifiers(v)}" for k, v in assignments] == \
                [w for line in parsed.environment for w in split_quoted(line)], name
            assert env_files[0] == "/" + rs.env_path
            staged = tmp_path / f"{render.host.name}-{rs.placement.service.name}.env"
            staged.write_text(files[rs.env_path])
            expected, errors = env_file_readback(files[rs.env_path])
            mine = read_env_file(str(staged))
            assert errors == "" and {k: expected[k] for k in mine} == mine and mine, name
            env, notes = environment_from_unit(str(unit), {"/" + rs.env_path: str(staged)})
            assert {k: env[k] for k in mine} == mine  # the staged file wins over Environment=
            assert env["HOME"] == f"/var/lib/{name.removesuffix('.service')}"  # %S expanded
            assert all("not read by preflight" in n for n in notes)
            checked += 1
    assert checked >= 4


def test_env_file_quoting_reads_back_as_systemd_reads_it(tmp_path: Path) -> None:
    values = {"A": 'x "q" \\ `b` $HOME', "B": "  padded  ", "C": "tab\there", "D": "#not a comment", "E": ""}
    text = "".join(f"{env_file_line(k, v)}\n" for k, v in values.items()) + "# comment\n; also\n"
    path = tmp_path / "x.env"
    path.write_text(text)
    assert read_env_file(str(path)) == values
    # The oracle expands $VAR and drops empty values (an environment.d generator): compare without them.
    plain = {k: v.replace(" $HOME", "") for k, v in values.items() if v}
    expected, errors = env_file_readback("".join(f"{env_file_line(k, v)}\n" for k, v in plain.items()))
    assert errors == "" and {k: expected[k] for k in plain} == plain
