"""The snapshot runner (generator/sglang/snapshot.py): local and shell-wrapped probe runs, errors,
atomic writes; and, marked ``sglang``, re-capturing the committed catalogs from real SGLang.

The runner tests import a tiny stand-in ``sglang`` package written into tmp_path
(``standin_sglang_for_runner_tests``), ONLY to drive the runner's success and failure
paths without a 2 GB venv; the real SGLang is exercised by the ``sglang`` tests below.
"""

from __future__ import annotations

import datetime
import json
import os
import shlex
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from generator.live.target import Target
from generator.sglang import snapshot
from generator.errors import GenError
from generator.load.captured import digest_problem, stamp, with_header
from generator.load.process import run_bounded
from generator.sglang.probe import dumps
from generator.sglang.snapshot import SnapshotError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from sglang_env import sglang_python  # tests/ helper, see its docstring

STANDIN_INIT = '"""STAND-IN sglang, written by tests/test_snapshot.py ONLY to test the snapshot runner."""\n'
STANDIN_SERVER_ARGS = '''
"""STAND-IN sglang.srt.server_args for the snapshot runner tests; not SGLang."""
import os


class ServerArgs:
    """Registers a few flags the way SGLang's ServerArgs.add_cli_args does."""

    @staticmethod
    def add_cli_args(parser):
        choices = ["EAGLE", "NEXTN"]
        if os.environ.get("SGLANG_STANDIN_EXTRA_CHOICE"):
            choices.append("EXTRA")
        parser.add_argument("--speculative-algorithm", type=str, choices=choices)
        parser.add_argument("--tp-size", "--tensor-parallel-size", type=int, default=1,
                            help="seed " + str(os.environ.get("PYTHONHASHSEED")))
'''


def today_candidates() -> set[str]:
    """UTC dates around now (a test running across midnight sees either)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return {
        (now + datetime.timedelta(minutes=m)).date().isoformat() for m in (-5, 0, 5)
    }


def make_standin(
    root: Path,
    *,
    prelude: str = "",
    version: str = "0.0.1+standin",
    dist_info: dict[str, str] | None = None,
) -> Path:
    """Write the stand-in package under ``root``; ``prelude`` runs at import of server_args."""
    site = root / "standin_sglang_for_runner_tests"
    pkg = site / "sglang"
    (pkg / "srt").mkdir(parents=True)
    (pkg / "__init__.py").write_text(STANDIN_INIT + f"__version__ = {version!r}\n")
    (pkg / "srt" / "__init__.py").write_text(STANDIN_INIT)
    (pkg / "srt" / "server_args.py").write_text(
        textwrap.dedent(prelude) + STANDIN_SERVER_ARGS
    )
    if dist_info is not None:
        info = site / f"sglang-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: sglang\nVersion: {version}\n"
        )
        for name, text in dist_info.items():
            (info / name).write_text(text)
    return site


@pytest.fixture
def standin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A plain stand-in on PYTHONPATH (no dist-info: a source tree without metadata)."""
    site = make_standin(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(site))
    return site


def test_snapshot_python_reads_the_parser(standin: Path) -> None:
    catalog = snapshot.snapshot_python(sys.executable)
    assert catalog["sglang"] == {
        "version": "0.0.1+standin",
        "commit": None,
        "source": "local",
    }
    assert catalog["captured"]["python"] == ".".join(map(str, sys.version_info[:3]))
    assert catalog["captured"]["date"] in today_candidates()
    by_name = {a["canonical"]: a for a in catalog["actions"]}
    assert sorted(by_name) == ["--help", "--speculative-algorithm", "--tp-size"]
    assert by_name["--tp-size"]["option_strings"] == [
        "--tp-size",
        "--tensor-parallel-size",
    ]
    assert by_name["--speculative-algorithm"]["choices"] == ["EAGLE", "NEXTN"]


def test_local_probe_drops_sglang_variables_and_fixes_the_hash_seed(
    standin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SGLANG_STANDIN_EXTRA_CHOICE", "1")
    monkeypatch.setenv("PYTHONHASHSEED", "random")
    by_name = {
        a["canonical"]: a for a in snapshot.snapshot_python(sys.executable)["actions"]
    }
    assert by_name["--speculative-algorithm"]["choices"] == ["EAGLE", "NEXTN"]
    assert by_name["--tp-size"]["help"] == "seed 0"


def test_output_printed_while_importing_does_not_corrupt_the_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prelude = """
        import os, sys
        print("banner from print")
        os.write(1, b"banner written to fd 1\\n")
        sys.stdout.flush()
    """
    monkeypatch.setenv("PYTHONPATH", str(make_standin(tmp_path, prelude=prelude)))
    catalog = snapshot.snapshot_python(sys.executable)
    assert len(catalog["actions"]) == 3


def test_import_failure_is_a_snapshot_error_with_the_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prelude = """
        import sys
        for i in range(100):
            print(f"warning line {i}", file=sys.stderr)
        raise ImportError("standin: libcuda.so.1 not found")
    """
    monkeypatch.setenv("PYTHONPATH", str(make_standin(tmp_path, prelude=prelude)))
    with pytest.raises(SnapshotError) as exc:
        snapshot.snapshot_python(sys.executable)
    message = str(exc.value)
    assert "exit status 1" in message
    assert (
        "sglang_probe: cannot read SGLang's CLI: ImportError: standin: libcuda.so.1 not found"
        in message
    )
    assert "earlier lines" in message and "warning line 0\n" not in message
    assert isinstance(exc.value, GenError) and isinstance(exc.value, RuntimeError)


def test_missing_interpreter(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "python"
    with pytest.raises(SnapshotError, match=f"cannot run .*{missing}"):
        snapshot.snapshot_python(str(missing))


def test_output_that_is_not_json() -> None:
    with pytest.raises(SnapshotError, match="printed no catalog JSON.*'hello"):
        snapshot.run_probe([sys.executable, "-c", "print('hello')"])


def test_json_that_is_not_a_catalog() -> None:
    with pytest.raises(
        SnapshotError, match="format is 2, not 1; no sglang.version; no actions"
    ):
        snapshot.run_probe([sys.executable, "-c", "print('{\"format\": 2}')"])


def test_a_hung_probe_times_out() -> None:
    start = time.monotonic()
    with pytest.raises(SnapshotError, match="did not finish within 1 s"):
        snapshot.run_probe(
            [sys.executable, "-c", "import time; time.sleep(60)"], timeout=1
        )
    assert time.monotonic() - start < 30


def test_a_probe_that_prints_without_end_is_stopped_at_the_bound() -> None:
    """A probe's stdout was read whole (capture_output): an interpreter printing without end
    filled the controller's memory. It is stopped past PROBE_STDOUT_MOST and nothing is kept."""
    start = time.monotonic()
    endless = "import sys\nwhile True: sys.stdout.buffer.write(b'x' * 65536)"
    with pytest.raises(SnapshotError, match=r"printed more than 32 MiB on stdout .* it was stopped"):
        snapshot.run_probe([sys.executable, "-c", endless], timeout=120)
    assert time.monotonic() - start < 60


def test_endless_stderr_keeps_only_its_tail_and_a_stdin_never_read_does_not_block() -> None:
    chatty = ("import sys\nfor i in range(200000): print('warning line', i, file=sys.stderr)\n"
              "print('last words', file=sys.stderr); sys.exit(3)")
    with pytest.raises(SnapshotError) as exc:  # 4 MB of stdin the program never reads
        snapshot.run_probe([sys.executable, "-c", chatty], stdin=b"y" * (4 << 20), timeout=120)
    message = str(exc.value)
    assert "exit status 3" in message and message.rstrip().endswith("last words"), message[-300:]
    assert len(message) < 10_000


def test_run_bounded_returns_what_was_printed_and_the_status() -> None:
    done = run_bounded([sys.executable, "-c", "import sys; d = sys.stdin.read(); print(d.upper()); sys.exit(5)"],
                       stdin=b"abc", timeout=60, env=None, limit=100)
    assert (done.returncode, done.stdout, done.overflowed, done.timed_out) == (5, b"ABC\n", False, False)
    cut = run_bounded([sys.executable, "-c", "print('x' * 1000)"], stdin=None, timeout=60, env=None, limit=10)
    assert cut.overflowed and cut.stdout == b"x" * 10


def test_index_install_is_pypi_and_vcs_install_has_its_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = make_standin(tmp_path / "a", version="1.2.3", dist_info={})
    monkeypatch.setenv("PYTHONPATH", str(site))
    assert snapshot.snapshot_python(sys.executable)["sglang"] == {
        "version": "1.2.3",
        "commit": None,
        "source": "pypi",
    }

    commit = "0123456789abcdef0123456789abcdef01234567"
    direct_url = {
        "url": "https://example.invalid/sglang.git",
        "vcs_info": {"vcs": "git", "commit_id": commit},
    }
    site = make_standin(
        tmp_path / "b",
        version="1.2.4",
        dist_info={"direct_url.json": json.dumps(direct_url)},
    )
    monkeypatch.setenv("PYTHONPATH", str(site))
    catalog = snapshot.snapshot_python(sys.executable)
    assert catalog["sglang"] == {"version": "1.2.4", "commit": commit, "source": "git"}
    assert snapshot.catalog_pin(catalog) == f"git-{commit}"


def test_commit_passed_in_is_recorded(standin: Path) -> None:
    commit = "89abcdef0123456789abcdef0123456789abcdef"
    catalog = snapshot.snapshot_python(sys.executable, commit=commit)
    assert (
        catalog["sglang"]["commit"] == commit and catalog["sglang"]["source"] == "git"
    )
    assert snapshot.catalog_path(catalog, Path("/repo")) == Path(
        f"/repo/catalogs/sglang/git-{commit}.json"
    )
    with pytest.raises(SnapshotError, match="not a full git commit hash"):
        snapshot.snapshot_python(sys.executable, commit="HEAD")


def test_ssh_command_construction() -> None:
    prefix = Target("llm-two.lan", "root", 2222, ssh_args=("-F", "/tmp/ssh config")).ssh_argv()
    assert prefix == [
        "ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-l", "root", "-p", "2222",
        "-F", "/tmp/ssh config", "--", "llm-two.lan",
    ]
    commit = "0123456789abcdef0123456789abcdef01234567"
    assert snapshot.remote_probe_command(
        prefix, "/root/sglang main/.venv/bin/python", commit
    ) == [
        *prefix,
        f"PYTHONHASHSEED=0 '/root/sglang main/.venv/bin/python' - --commit {commit}",
    ]
    assert snapshot.remote_probe_command(["ssh", "h"], "/usr/bin/python3") == [
        "ssh",
        "h",
        "PYTHONHASHSEED=0 /usr/bin/python3 -",
    ]
    assert snapshot.remote_commit_command(
        ["ssh", "h"], "/root/sglang-main; rm -rf /"
    ) == ["ssh", "h", "git -C '/root/sglang-main; rm -rf /' rev-parse HEAD"]


def git(*args: str, cwd: Path) -> str:
    """Run git in ``cwd`` with a fixed identity; return its stdout."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def test_remote_snapshot_through_a_shell_reads_the_source_commit(
    standin: Path, tmp_path: Path
) -> None:
    # `sh -c CMD` runs the command string exactly as sshd hands it to the login shell,
    # so this drives the real remote code path on this machine.
    source = tmp_path / "sglang-main"
    source.mkdir()
    git("init", "-q", cwd=source)
    (source / "README").write_text("source checkout\n")
    git("add", "README", cwd=source)
    git("commit", "-q", "-m", "one", cwd=source)
    head = git("rev-parse", "HEAD", cwd=source).strip()
    catalog = snapshot.snapshot_remote(
        ["sh", "-c"], sys.executable, source_dir=str(source)
    )
    assert catalog["sglang"] == {
        "version": "0.0.1+standin",
        "commit": head,
        "source": "git",
    }
    assert {a["canonical"] for a in catalog["actions"]} == {
        "--help",
        "--speculative-algorithm",
        "--tp-size",
    }
    # Without a source dir there is no commit, and the probe still arrives on stdin.
    assert (
        snapshot.snapshot_remote(["sh", "-c"], sys.executable)["sglang"]["commit"]
        is None
    )


def test_remote_commit_of_a_folder_that_is_no_checkout(tmp_path: Path) -> None:
    with pytest.raises(
        SnapshotError,
        match=r"(?s)SGLang source commit of .*exit status 128.*not a git repository",
    ):
        snapshot.remote_commit(["sh", "-c"], str(tmp_path))


def test_remote_probe_failure_names_the_command(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError) as exc:
        snapshot.snapshot_remote(["sh", "-c"], str(tmp_path / "missing-python"))
    assert f"via {shlex.join(['sh', '-c'])}" in str(exc.value)
    assert "exit status 127" in str(exc.value)


def test_write_catalog_is_atomic_and_canonical(standin: Path, tmp_path: Path) -> None:
    catalog = snapshot.snapshot_python(sys.executable)
    out = tmp_path / "repo" / "catalogs" / "sglang" / "x.json"
    assert snapshot.write_catalog(catalog, out) == out
    text = out.read_text(encoding="utf-8")
    # The probe's canonical text with the capture digest in its header (load/captured.py).
    assert text == stamp(dumps(with_header(catalog)))
    assert digest_problem(text.encode()) is None
    assert out.stat().st_mode & 0o777 == 0o644
    changed = {**catalog, "captured": {**catalog["captured"], "date": "2000-01-01"}}
    snapshot.write_catalog(changed, out)
    assert json.loads(out.read_text())["captured"]["date"] == "2000-01-01"
    assert sorted(p.name for p in out.parent.iterdir()) == [
        "x.json"
    ]  # no temp file left


def test_write_catalog_failure_is_a_snapshot_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(SnapshotError, match="cannot write the catalog"):
        snapshot.write_catalog({"format": 1}, blocker / "x.json")


def test_two_captures_differ_only_in_date(standin: Path) -> None:
    first = snapshot.snapshot_python(sys.executable)
    second = snapshot.snapshot_python(sys.executable)
    second["captured"]["date"] = "1999-12-31"
    assert snapshot.without_date(first) == snapshot.without_date(second)
    assert second["captured"]["date"] == "1999-12-31"  # without_date copies
    second["actions"][0]["help"] = "changed"
    assert snapshot.without_date(first) != snapshot.without_date(second)


def committed(version: str) -> dict:
    """The committed catalog of a release."""
    return json.loads(
        (ROOT / "catalogs" / "sglang" / f"{version}.json").read_text(encoding="utf-8")
    )


def test_committed_catalogs_hold_the_known_sglang_facts() -> None:
    old, new = committed("0.5.9"), committed("0.5.23")
    old_by = {o: a for a in old["actions"] for o in a["option_strings"]}
    new_by = {o: a for a in new["actions"] for o in a["option_strings"]}
    # Counts as measured (sglang.md counts without --help).
    assert sum(a["kind"] != "help" for a in old["actions"]) == 331
    assert sum(a["kind"] != "help" for a in new["actions"]) == 531
    assert old_by["--speculative-num-draft-tokens"]["type"] == "int"
    assert (
        "--num-speculative-tokens" not in old_by
        and "--num-speculative-tokens" not in new_by
    )
    assert old_by["--tp-size"]["option_strings"] == [
        "--tensor-parallel-size",
        "--tp-size",
    ]
    assert old_by["--tp-size"]["dest"] == "tensor_parallel_size"
    assert (
        new_by["--tp-size"]["canonical"] == "--tp-size"
        and new_by["--tp-size"]["dest"] == "tp_size"
    )
    assert old_by["--speculative-algorithm"]["choices"] == [
        "EAGLE",
        "EAGLE3",
        "NEXTN",
        "STANDALONE",
        "NGRAM",
    ]
    assert new_by["--speculative-algorithm"]["choices"] is None  # free text from 0.5.15
    assert "qwen3" not in old_by["--tool-call-parser"]["choices"]
    assert "qwen3_coder" in old_by["--tool-call-parser"]["choices"]
    assert "qwen3" in old_by["--reasoning-parser"]["choices"]
    assert "--cuda-graph-max-bs" in old_by and "--cuda-graph-max-bs" not in new_by
    assert new_by["--enable-dp-attention"]["kind"] == "deprecated"
    assert (
        new_by["--enable-dp-attention"]["deprecated"]["replacement"] == "--attn-dp-size"
    )
    assert (
        old_by["--hybrid-kvcache-ratio"]["deprecated"]["replacement"]
        == "--swa-full-tokens-ratio"
    )
    assert (
        old["parser"]["allow_abbrev"] is True and new["parser"]["allow_abbrev"] is True
    )


@pytest.mark.sglang
@pytest.mark.parametrize("version", ["0.5.9", "0.5.23"])
def test_recapture_from_real_sglang_equals_the_committed_catalog(version: str) -> None:
    python = sglang_python(
        version
    )  # builds the cached venv if needed; fails, never skips
    catalog = snapshot.snapshot_python(python)
    assert catalog["captured"]["date"] in today_candidates()
    assert catalog["sglang"]["version"] == version
    assert snapshot.without_date(catalog) == snapshot.without_date(committed(version))


# ----- what the probed interpreter prints is data, not a path (issue 22 item 5) -----

HOSTILE_VERSIONS = ["../../escaped", "/tmp/absolute", "0.5.9/../../x", "0.5.9.env", "0.5.9.checks",
                    "0.5.9.devices", "..", ".", "", "0.5.9\n", "0.5.9 ", "C:\\x", "0" * 100]


@pytest.mark.parametrize("version", HOSTILE_VERSIONS)
def test_a_version_that_is_no_pin_never_names_a_file(version: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`gen sglang snapshot` built catalogs/sglang/<version>.json from what the interpreter
    printed: `../..` and absolute paths wrote outside catalogs/, `0.5.9.env` over the env catalog."""
    from click.testing import CliRunner

    from generator.cli.main import main

    monkeypatch.setenv("PYTHONPATH", str(make_standin(tmp_path / "site", version=version)))
    repo = tmp_path / "deep" / "repo"
    (repo / "catalogs" / "sglang").mkdir(parents=True)
    before = sorted(p for p in tmp_path.rglob("*") if "site" not in p.parts)
    catalog = snapshot.snapshot_python(sys.executable)
    with pytest.raises(SnapshotError, match="not a pin gen files a catalog under"):
        snapshot.catalog_path(catalog, repo)
    result = CliRunner().invoke(main, ["sglang", "snapshot", "--python", sys.executable, "--root", str(repo)])
    assert result.exit_code == 1, result.output
    assert "\n" not in result.stderr.strip()  # the printed version is escaped, one line
    assert sorted(p for p in tmp_path.rglob("*") if "site" not in p.parts) == before  # nothing written


@pytest.mark.parametrize("commit", ["../../x", "A" * 40, "a" * 39, ["a" * 40]])
def test_a_commit_that_is_no_hash_never_names_a_file(commit: object, tmp_path: Path) -> None:
    catalog = {"sglang": {"version": "0.5.9", "commit": commit}}
    with pytest.raises(SnapshotError, match="not a pin"):
        snapshot.catalog_path(catalog, tmp_path)


@pytest.mark.parametrize("linked", ["catalogs", "catalogs/sglang", "file"])
def test_a_linked_catalogs_folder_is_never_written_through(linked: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A pull request's `catalogs/sglang -> ~/.config/...` took the capture and its env catalog
    out of the repository: every write stays under the repository's own folders (item 5)."""
    from click.testing import CliRunner

    from generator.cli.main import main

    monkeypatch.setenv("PYTHONPATH", str(make_standin(tmp_path / "site", version="0.5.9")))
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    (elsewhere / "sglang").mkdir(parents=True)
    repo.mkdir()
    if linked == "catalogs":
        (repo / "catalogs").symlink_to(elsewhere)
    elif linked == "catalogs/sglang":
        (repo / "catalogs").mkdir()
        (repo / "catalogs" / "sglang").symlink_to(elsewhere / "sglang")
    else:
        (repo / "catalogs").mkdir()
        (repo / "catalogs" / "sglang").write_text("")
    result = CliRunner().invoke(main, ["sglang", "snapshot", "--python", sys.executable, "--root", str(repo)])
    assert result.exit_code == 1, result.output
    assert ("is a symbolic link" if linked != "file" else "is a file where gen needs a folder") in result.stderr
    assert list((elsewhere / "sglang").iterdir()) == []  # nothing written through the link


def test_a_version_that_is_a_pin_is_filed_in_the_catalogs_folder(tmp_path: Path) -> None:
    for version in ("0.5.9", "0.4.0.post2", "0.5.9rc1", "0.0.1+standin"):
        path = snapshot.catalog_path({"sglang": {"version": version, "commit": None}}, tmp_path)
        assert path == tmp_path / "catalogs" / "sglang" / f"{version}.json"
    commit = "0123456789abcdef0123456789abcdef01234567"
    assert snapshot.catalog_path({"sglang": {"version": "x", "commit": commit}}, tmp_path).name == f"git-{commit}.json"


def test_with_out_the_operator_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from generator.cli.main import main

    monkeypatch.setenv("PYTHONPATH", str(make_standin(tmp_path / "site", version="../weird")))
    out = tmp_path / "chosen.json"
    result = CliRunner().invoke(main, ["sglang", "snapshot", "--python", sys.executable, "--out", str(out)])
    assert out.exists()  # the flag catalog is written where asked (the stand-in has no env probe)
    assert "pin (none: not a pin)" in result.output
