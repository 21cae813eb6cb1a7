"""``gen import`` reads the interpreter's options before ``-m`` as the real CPython does.

generator/importer/program.py decides whether ``python <options> -m sglang.launch_server ...``
runs SGLang's launcher, and where SGLang's own flags begin. The oracle is the real
interpreter this suite runs on: a venv made in tmp_path holds a recorder stand-in named
``sglang.launch_server`` (the real SGLang is not needed to see what CPython runs), which
writes the words it was given to a file. For each command line, either gen finds the launcher
and its remaining words are exactly the recorder's, or gen says I005 and the recorder did
not run.
"""

from __future__ import annotations

import json
import subprocess
import venv
from pathlib import Path

import pytest

from generator.errors import Diagnostics, Position
from generator.importer.cmdline import Word
from generator.importer.program import find_program

OPTIONS = [
    "-u", "-um", "-uB", "-Bu", "-msglang.launch_server", "-Xdev", "-X dev", "-W ignore", "-Wignore",
    "-W ignore -u", "-u -W ignore", "-Wignore::DeprecationWarning", "-OO", "-O -O", "-bb", "-E", "-I",
    "-s", "-q", "-v", "-R", "-Xfrozen_modules=off", "--check-hash-based-pycs never", "-X utf8 -u",
    "-B -X importtime", "-d", "-i", "-x",
    # not the launcher, or not run at all:
    "-mu", "-c pass", "-h", "-V", "--version", "-m sglang", "-m sglang.launch_server_x", "-Q", "-",
    "--check-hash-based-pycs=never", "-uc pass", "-W", "-m",
]


@pytest.fixture(scope="module")
def recorder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A venv whose site-packages hold the recorder stand-in for ``sglang.launch_server``."""
    root = tmp_path_factory.mktemp("py-options")
    env_dir, record = root / "venv", root / "argv.json"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env_dir)
    python = env_dir / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    package = Path(site) / "sglang"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "launch_server.py").write_text(
        "# Recorder stand-in for SGLang's launcher: writes the words it was given, runs nothing.\n"
        "import json, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n", encoding="utf-8")
    return python, record


def _words(text: str) -> list[Word]:
    return [Word(t, Position("<command>", 1, 1)) for t in text.split()]


def _cpython_runs(python: Path, record: Path, options: str, cwd: Path) -> list[str] | None:
    record.unlink(missing_ok=True)
    tail = " -m sglang.launch_server" if not options.startswith("-m") and "-msglang" not in options else ""
    argv = [str(python), *options.split(), *tail.split(), "--model-path", "/m", "--tp", "2"]
    subprocess.run(argv, capture_output=True, cwd=cwd, timeout=60, check=False, stdin=subprocess.DEVNULL,
                   env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
    return json.loads(record.read_text(encoding="utf-8")) if record.exists() else None


@pytest.mark.parametrize("options", OPTIONS)
def test_gen_finds_the_launcher_where_cpython_runs_it(options: str, recorder: tuple[Path, Path],
                                                      tmp_path: Path) -> None:
    python, record = recorder
    ran = _cpython_runs(python, record, options, tmp_path)
    tail = " -m sglang.launch_server" if not options.startswith("-m") and "-msglang" not in options else ""
    words = _words(f"python {options}{tail} --model-path /m --tp 2")
    diags = Diagnostics()
    found = find_program(words, diags, [])
    if ran is None:
        assert found is None and {d.code for d in diags.items} == {"I005"}, (options, diags.items)
    else:
        assert found is not None and not diags.items, (options, diags.items)
        assert [w.text for w in words[found[0]:]] == ran


def test_the_table_holds_both_answers(recorder: tuple[Path, Path], tmp_path: Path) -> None:
    """The cases above are not all of one kind: CPython runs the launcher for some, not others."""
    python, record = recorder
    runs = [_cpython_runs(python, record, o, tmp_path) is not None for o in OPTIONS]
    assert 20 < sum(runs) < len(OPTIONS) - 8


def test_dash_s_is_dropped_with_the_other_options() -> None:
    """-S turns the site folder off, so this venv's CPython would not find the launcher; the
    unit runs the host's own sglang.python without it, so gen drops it like the others, said so."""
    notes: list[str] = []
    words = _words("python -S -m sglang.launch_server --tp 2")
    found = find_program(words, Diagnostics(), notes)
    assert found is not None and [w.text for w in words[found[0]:]] == ["--tp", "2"]
    assert notes == ["'python -S -m sglang.launch_server' dropped: the service runs the host's own sglang.python"]
