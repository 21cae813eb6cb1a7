"""The REAL SGLang 0.5.9 on a real systemd host, reached over real SSH.

The container (scripts/test-host) gets this machine's CPU venv of SGLang 0.5.9
(scripts/sglang-venv) bind-mounted read-only at /opt/sglang-0.5.9, plus the base
Python the venv's ``bin/python`` links to, at its own path. Nothing about SGLang is a
stand-in here; only the model weights (fake safetensors with a tiny Llama config) and the
source checkout's content (a one-file git repo made on this machine, so its commit is
known without asking the host) are.

* ``gen sglang snapshot --host`` over ssh must reproduce catalogs/sglang/0.5.9.json
  (apart from captured.date), and record the checkout's commit when the inventory names
  a ``source_dir``.
* ``gen preflight --host`` over ssh: the rendered argv passes SGLang's parser and
  ServerArgs validation; a drafter still named ``layers.0.*`` fails the midlayer check;
  incident 1 (``--num-speculative-tokens``) and incident 2 (top-k without
  ``--speculative-num-steps``) fail with SGLang's own errors. gen refuses to render the
  incidents itself, so those argvs are the rendered one edited, sent by the same
  ``preflight_host`` the command uses.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sglang_env import sglang_python

from generator.live.plan import HostPlan
from generator.live.preflight import PreflightReport, preflight_host
from generator.live.target import target_for
from generator.sglang.snapshot import without_date

from .deploy import (
    DRAFT_DIR,
    HOST,
    ROOT,
    fixture_repo,
    push,
    render_plan,
    standin_model_files,
    write_ssh_config,
)
from .host import TestHost, boot_test_host, free_port, ssh, stop_test_host
from .standins.fake_model import write_eagle3_draft

pytestmark = pytest.mark.live

VERSION = "0.5.9"
VENV_ON_HOST = f"/opt/sglang-{VERSION}"  # outside /root: the service user must read it (R008)
PYTHON_ON_HOST = f"{VENV_ON_HOST}/bin/python"
SOURCE_DIR = "/opt/standin-sglang-source"
LAYERS0_DRAFT = f"{DRAFT_DIR}-layers0"
COMMITTED = ROOT / "catalogs" / "sglang" / f"{VERSION}.json"
# One SGLang import in the container takes a few seconds; a minute means something hangs.
STEP_TIMEOUT_S = 120


@dataclass(frozen=True)
class RealSglangHost:
    """A booted container with the real SGLang, and the deployment repo that describes it."""

    host: TestHost
    repo: Path
    ssh_config: Path
    source_commit: str


def venv_binds(python: str) -> list[str]:
    """``--bind-ro`` specs for the venv of PYTHON (at VENV_ON_HOST) and its base Python.

    The venv's ``bin/python`` is an absolute symlink into the base install named by
    ``home`` in ``pyvenv.cfg``; that install is mounted at its own path so the link
    resolves inside, and the venv anywhere (Python finds pyvenv.cfg beside the path it
    was started by, not beside the link target).
    """
    venv = Path(python).parent.parent
    cfg = dict(line.split(" = ", 1) for line in (venv / "pyvenv.cfg").read_text().splitlines()
               if " = " in line)
    base = Path(cfg["home"]).parent
    target = Path(os.path.realpath(venv / "bin" / "python"))
    assert target.is_relative_to(base), f"{venv}/bin/python leads to {target}, outside {base}"
    return [f"{venv}:{VENV_ON_HOST}", str(base)]


def make_source_checkout(folder: Path) -> str:
    """A one-commit git repo made here, standing in for an SGLang checkout; returns HEAD."""
    folder.mkdir(parents=True)
    (folder / "README").write_text("STAND-IN for an SGLang source checkout (gen live tests)\n")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "gen-test", "GIT_AUTHOR_EMAIL": "gen-test@invalid",
           "GIT_COMMITTER_NAME": "gen-test", "GIT_COMMITTER_EMAIL": "gen-test@invalid"}
    for args in (["init", "-q"], ["add", "README"], ["commit", "-q", "-m", "stand-in checkout"]):
        subprocess.run(["git", "-C", str(folder), *args], check=True, env=env, capture_output=True)
    head = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], check=True, env=env,
                          capture_output=True, text=True).stdout.strip()
    assert len(head) == 40
    return head


def push_tree(test_host: TestHost, folder: Path, dest: str) -> None:
    """Copy FOLDER (with .git and all) to DEST on the host as one tar stream over ssh."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(folder, arcname=dest.lstrip("/"))
    proc = subprocess.run(["ssh", "-F", str(test_host.ssh_config), test_host.name,
                           "tar -x --no-same-owner -C /"], input=buf.getvalue(),
                          capture_output=True, timeout=STEP_TIMEOUT_S, check=False)
    assert proc.returncode == 0, proc.stderr.decode()


def write_repo(dest: Path) -> Path:
    """The fixture deployment pointed at the real SGLang, with a second service whose
    EAGLE3 drafter is still named ``layers.0.*``."""
    repo = fixture_repo(dest, free_port())
    inventory = repo / "hosts" / f"{HOST}.yaml"
    text = inventory.read_text()
    assert "python: /opt/standin-sglang/bin/python\n" in text, "the fixture's python line moved"
    text = text.replace("python: /opt/standin-sglang/bin/python\n", f"python: {PYTHON_ON_HOST}\n")
    text += (f"  - name: chat-layers0\n    model: standin-llama-eagle3-layers0\n"
             f"    port: {free_port()}\n    listen: 127.0.0.1\n    gpus: [1]\n")
    inventory.write_text(text)
    model = (repo / "models" / "standin-llama-eagle3.yaml").read_text()
    for old, new in (("name: standin-llama-eagle3\n", "name: standin-llama-eagle3-layers0\n"),
                     (f"draft_model_path: {DRAFT_DIR}\n", f"draft_model_path: {LAYERS0_DRAFT}\n")):
        assert old in model, f"the fixture model's line {old!r} moved"
        model = model.replace(old, new)
    (repo / "models" / "standin-llama-eagle3-layers0.yaml").write_text(model)
    return repo


def with_source_dir(repo: Path) -> None:
    """Name the stand-in checkout as the host's ``sglang.source_dir``."""
    inventory = repo / "hosts" / f"{HOST}.yaml"
    line = f"  python: {PYTHON_ON_HOST}\n"
    text = inventory.read_text()
    assert line in text
    inventory.write_text(text.replace(line, line + f"  source_dir: {SOURCE_DIR}\n"))


@pytest.fixture(scope="module")
def real_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealSglangHost]:
    """Boot a container with the real SGLang venv mounted; fake weights and checkout copied in."""
    binds = venv_binds(sglang_python(VERSION))  # builds the venv on a fresh machine
    tmp = tmp_path_factory.mktemp("real-sglang")
    host = boot_test_host(tmp / "host", binds=binds)
    try:
        drafter = write_eagle3_draft(tmp / "layers0", "layers.0")
        files = standin_model_files() | {
            f"{LAYERS0_DRAFT}/{p.name}": (p.read_bytes(), 0o644) for p in drafter.iterdir()}
        push(host, files)
        commit = make_source_checkout(tmp / "checkout")
        push_tree(host, tmp / "checkout", SOURCE_DIR)
        yield RealSglangHost(host, write_repo(tmp / "repo"), write_ssh_config(host, tmp / "ssh_config"),
                             commit)
    finally:
        stop_test_host(host)


def gen(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the real ``gen`` command line in a subprocess."""
    return subprocess.run([sys.executable, "-m", "generator", *args], capture_output=True, text=True,
                          timeout=STEP_TIMEOUT_S, stdin=subprocess.DEVNULL, cwd=ROOT, check=False)


def ssh_options(real_host: RealSglangHost) -> list[str]:
    """``gen sglang snapshot`` options that make its ssh read the test's ssh config."""
    return ["--ssh-option=-F", f"--ssh-option={real_host.ssh_config}"]


def test_the_container_runs_this_machines_sglang_venv(real_host: RealSglangHost) -> None:
    """The mounted interpreter finds every shared library inside and imports SGLang 0.5.9."""
    libs = ssh(real_host.host, f"ldd $(readlink -f {PYTHON_ON_HOST})")
    assert libs.returncode == 0 and "not found" not in libs.stdout, libs.stdout + libs.stderr
    script = "import importlib.metadata as m, sys; print(m.version('sglang'), sys.prefix)"
    version = ssh(real_host.host, [PYTHON_ON_HOST, "-c", script])
    assert version.stdout.split() == [VERSION, VENV_ON_HOST], version.stdout + version.stderr
    readonly = ssh(real_host.host, f"touch {VENV_ON_HOST}/gen-was-here")
    assert readonly.returncode != 0 and "Read-only file system" in readonly.stderr


def test_snapshot_over_ssh_equals_the_committed_catalog(real_host: RealSglangHost) -> None:
    """gen sglang snapshot --host: the host's SGLang gives the committed catalog, date aside."""
    target = real_host.repo / "catalogs" / "sglang" / f"{VERSION}.json"
    started = time.monotonic()
    proc = gen("sglang", "snapshot", "--host", HOST, *ssh_options(real_host), "--root", str(real_host.repo))
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stdout + proc.stderr
    captured = json.loads(target.read_text())
    committed = json.loads(COMMITTED.read_text())
    assert without_date(captured) == without_date(committed)
    # Equal apart from the date, so gen kept the committed file byte for byte.
    assert proc.stdout.startswith(f"unchanged {target}: pin {VERSION}, SGLang {VERSION} (pypi), ")
    assert target.read_bytes() == COMMITTED.read_bytes()
    assert proc.stderr == ""  # the inventory pins what the host runs: no note
    print(f"snapshot over ssh: {len(captured['actions'])} actions in {elapsed:.1f} s")


def test_snapshot_records_the_commit_of_the_source_checkout(real_host: RealSglangHost,
                                                            tmp_path: Path) -> None:
    """With sglang.source_dir the host's git names the commit; the pin becomes git-<commit>."""
    repo = tmp_path / "repo"
    subprocess.run(["cp", "-a", str(real_host.repo), str(repo)], check=True)
    with_source_dir(repo)
    out = tmp_path / "captured.json"
    proc = gen("sglang", "snapshot", "--host", HOST, *ssh_options(real_host), "--root", str(repo),
               "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pin = f"git-{real_host.source_commit}"
    assert proc.stdout.startswith(f"wrote     {out}: pin {pin}, SGLang {VERSION} (git), ")
    assert f"pins SGLang '{VERSION}' but runs '{pin}'" in proc.stderr
    captured = json.loads(out.read_text())
    assert captured["sglang"] == {"commit": real_host.source_commit, "source": "git",
                                  "version": VERSION}
    committed = json.loads(COMMITTED.read_text())
    committed["sglang"] = captured["sglang"]
    assert without_date(captured) == without_date(committed)


def _by_service(report: PreflightReport) -> dict[str, dict[str, str]]:
    """Rendered result lines per service, then per check."""
    out: dict[str, dict[str, str]] = {}
    for res in report.results:
        out.setdefault(res.service, {})[res.check] = res.render()
    return out


def test_preflight_command_passes_the_rendered_argv_and_fails_the_unrenamed_drafter(
        real_host: RealSglangHost) -> None:
    """gen preflight --host: 'chat' passes SGLang's own checks; 'chat-layers0' fails one."""
    started = time.monotonic()
    proc = gen("preflight", "--host", HOST, "--ssh-config", str(real_host.ssh_config),
               "--root", str(real_host.repo))
    elapsed = time.monotonic() - started
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"PASS {HOST} - sglang-version: sglang {VERSION} at {PYTHON_ON_HOST}" in lines, proc.stdout
    for service in ("chat", "chat-layers0"):
        for check in ("checkpoint-model", "checkpoint-draft", "sglang-parse", "sglang-server-args"):
            assert any(line.startswith(f"PASS {HOST} {service} {check}") for line in lines), \
                f"{service} {check}\n{proc.stdout}"
    assert f"PASS {HOST} chat eagle3-draft-names: tensors are named midlayer.*" in lines
    [failed] = [line for line in lines if line.startswith("FAIL")]
    assert failed.startswith(f"FAIL {HOST} chat-layers0 eagle3-draft-names: EAGLE3 drafter tensors "
                             "must be named midlayer.*, found ")
    assert "(rename layers.0.* to midlayer.*)" in failed
    assert "note: chat: no CUDA device visible, validated with --device cpu" in lines
    print(f"gen preflight over ssh, 2 services: {elapsed:.1f} s")


def test_preflight_over_ssh_fails_both_incidents_with_sglangs_own_errors(
        real_host: RealSglangHost) -> None:
    """Incident 1's vLLM flag and incident 2's missing num-steps, judged by the host's SGLang."""
    plan, _ = render_plan(real_host.repo)
    chat = plan.service("chat")
    argv = list(chat.argv)
    i = argv.index("--speculative-num-steps")
    assert "--speculative-eagle-topk" in argv and "--speculative-num-draft-tokens" in argv
    incidents = (
        dataclasses.replace(chat, name="incident-1", argv=chat.argv + ("--num-speculative-tokens", "16")),
        dataclasses.replace(chat, name="incident-2", argv=tuple(argv[:i] + argv[i + 2:])),
    )
    edited: HostPlan = dataclasses.replace(plan, services=incidents)
    report = preflight_host(edited, target_for(edited, real_host.ssh_config))
    lines = _by_service(report)
    assert lines["incident-1"]["sglang-parse"].startswith(
        f"FAIL {HOST} incident-1 sglang-parse: exit status 2")
    assert "unrecognized arguments: --num-speculative-tokens 16" in lines["incident-1"]["sglang-parse"]
    assert "sglang-server-args" not in lines["incident-1"]  # nothing to validate after a parse error
    assert lines["incident-2"]["sglang-parse"].startswith(f"PASS {HOST} incident-2 sglang-parse")
    server_args = lines["incident-2"]["sglang-server-args"]
    assert server_args.startswith(
        f"FAIL {HOST} incident-2 sglang-server-args: AssertionError (no message) at server_args.py:")
    assert "speculative_num_draft_tokens is None" in server_args
    assert f"{VENV_ON_HOST}/lib/python3.11/site-packages/sglang/srt/server_args.py" in server_args
    assert [r.check for r in report.results if r.failed] == ["sglang-parse", "sglang-server-args"]
