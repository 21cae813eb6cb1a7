"""gen verify / status against a real systemd host: a clean deploy passes, each drift fails.

One container for the module (tests/live/conftest.py boots it), the fixture repo
rendered with gen, copied over SSH, started by the real systemd. Every test first
restores the clean deploy (``deploy``), injects one drift, and requires ``gen verify``
to fail with a message that names it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.live import status, verify
from generator.live.plan import HostPlan, ServicePlan

from .deploy import (
    DRAFT_DIR,
    FAULT,
    HOST,
    SERVER_INFO,
    MODEL_DIR,
    RETIRED_FILE,
    deploy,
    dist_info,
    fixture_repo,
    hardware_files,
    machine,
    provision,
    standin_sysfs,
    stop_units,
    push,
    render_plan,
    server_info,
    sh,
    write_ssh_config,
)
from .host import TestHost, free_port

pytestmark = pytest.mark.live
FAIL_FAST_S = 15.0  # a unit whose SGLang exits 2 must be failed well within this


@dataclass(frozen=True)
class Deployment:
    """The fixture repo, its render, and how to reach the container like an operator."""

    root: Path
    plan: HostPlan
    files: dict[str, tuple[bytes, int]]
    ssh_config: Path
    test_host: TestHost

    @property
    def svc(self) -> ServicePlan:
        """The fixture's one service."""
        return self.plan.services[0]


@pytest.fixture(scope="module")
def deployment(test_host: TestHost, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """Provision the container once; stop and disable the units at the end."""
    tmp = tmp_path_factory.mktemp("live-verify")
    root = fixture_repo(tmp / "repo", free_port())
    plan, files = render_plan(root)
    dep = Deployment(root, plan, files, write_ssh_config(test_host, tmp / "ssh_config"), test_host)
    provision(test_host, plan)
    try:
        yield dep
    finally:
        stop_units(test_host, plan)


@pytest.fixture
def clean(deployment: Deployment) -> Deployment:
    """The clean deploy, freshly restored: files, stand-ins, units restarted."""
    deploy(deployment.test_host, deployment.plan, deployment.files)
    return deployment


@dataclass(frozen=True)
class Outcome:
    """What gen printed and how it exited."""

    code: int
    output: str

    def lines(self, status_word: str) -> list[str]:
        """The result lines with that status (PASS/FAIL)."""
        return [ln for ln in self.output.splitlines() if ln.startswith(status_word + " ")]

    def failed_checks(self) -> set[str]:
        """The check names of every FAIL line."""
        return {ln.split()[3].rstrip(":") for ln in self.lines("FAIL")}


def gen_verify(dep: Deployment, root: Path | None = None) -> Outcome:
    """Run ``gen verify --host live-test --ssh-config FILE --root ROOT``."""
    res = CliRunner().invoke(verify, ["--host", HOST, "--ssh-config", str(dep.ssh_config),
                                      "--root", str(root or dep.root)])
    return Outcome(res.exit_code, res.output)


def gen_status(dep: Deployment, *extra: str) -> Outcome:
    """Run ``gen status --host live-test`` with EXTRA options."""
    res = CliRunner().invoke(status, ["--host", HOST, "--ssh-config", str(dep.ssh_config),
                                      "--root", str(dep.root), *extra])
    return Outcome(res.exit_code, res.output)


def test_clean_deploy_passes_every_check(clean: Deployment) -> None:
    """Rendered, copied over SSH, started by systemd: every check passes, exit 0."""
    started = time.monotonic()
    out = gen_verify(clean)
    elapsed = time.monotonic() - started
    assert out.code == 0, out.output
    assert not out.lines("FAIL")
    checks = {ln.split()[3].rstrip(":") for ln in out.lines("PASS")}
    assert {"file-content", "no-stray-files", "systemd-analyze-verify", "sglang-version", "enabled",
            "active", "no-restarts", "unit-loaded", "listening", "health", "served-model",
            "process-argv", "process-environment", "weights", "draft-weights", "gpus-visible",
            "vm-gpus-absent", "gpu-selection", "gpu-facts", "numa", "driver", "cuda-driver", "torch",
            "topology", "no-retired-paths", "memory"} <= checks
    print(f"verify: {len(out.lines('PASS'))} checks passed in {elapsed:.1f} s")
    # The installed command line, the way an operator runs it.
    gen = Path(sys.executable).parent / "gen"
    proc = subprocess.run([str(gen), "verify", "--host", HOST, "--ssh-config", str(clean.ssh_config),
                           "--root", str(clean.root)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == f"gen: {HOST}: {len(out.lines('PASS'))} passed, 0 failed"


def _fail_line(out: Outcome, check: str) -> str:
    """The FAIL line of CHECK (the test fails when there is none)."""
    lines = [ln for ln in out.lines("FAIL") if ln.split()[3].rstrip(":") == check]
    assert lines, f"no FAIL for {check}:\n{out.output}"
    return lines[0]


def test_edited_unit_fails_with_a_diff(clean: Deployment) -> None:
    """A hand edit of the unit on the host: file-content fails with a unified diff of the edit."""
    unit = clean.svc.unit_path
    sh(clean.test_host, f"sed -i 's/--speculative-num-steps 3/--speculative-num-steps 5/' {unit}")
    out = gen_verify(clean)
    assert out.code == 1
    assert unit in _fail_line(out, "file-content")
    assert f"--- rendered {unit}" in out.output and f"+++ live {unit}" in out.output
    assert "-  --speculative-num-steps 3 \\" in out.output
    assert "+  --speculative-num-steps 5 \\" in out.output
    # systemd still runs the old file: that is a finding of its own.
    assert "daemon-reload" in _fail_line(out, "unit-loaded")


def test_edited_env_file_fails_with_a_diff_and_the_process_environment(clean: Deployment) -> None:
    """An edited environment file, service restarted: the file and the process both differ."""
    env = clean.svc.env_path
    sh(clean.test_host, f"sed -i 's/CUDA_VISIBLE_DEVICES=\"0\"/CUDA_VISIBLE_DEVICES=\"1\"/' {env}"
                        f" && systemctl restart {clean.svc.unit}")
    out = gen_verify(clean)
    assert out.code == 1
    assert env in _fail_line(out, "file-content")
    assert '+CUDA_VISIBLE_DEVICES="1"' in out.output and '-CUDA_VISIBLE_DEVICES="0"' in out.output
    assert "1 variable" in _fail_line(out, "process-environment")
    assert "CUDA_VISIBLE_DEVICES: rendered '0', process has '1'" in out.output


def test_stopped_service_fails_and_shows_its_journal(clean: Deployment) -> None:
    """A stopped service: not active, nothing listening, no health; its journal is shown."""
    sh(clean.test_host, f"systemctl stop {clean.svc.unit}")
    out = gen_verify(clean)
    assert out.code == 1
    assert "inactive (dead)" in _fail_line(out, "active")
    assert "nothing listens" in _fail_line(out, "listening")
    assert {"health", "served-model", "process-argv"} <= out.failed_checks()
    assert f"--- journal of {clean.svc.unit} since its last start ---" in out.output
    assert "Stopped sglang-chat.service" in out.output


def test_different_port_in_the_inventory_fails(clean: Deployment, tmp_path: Path) -> None:
    """The inventory moved the port but nobody deployed: files, socket, health and argv differ."""
    port = free_port()
    moved = fixture_repo(tmp_path / "repo", port)
    out = gen_verify(clean, root=moved)
    assert out.code == 1
    assert f"nothing listens on 127.0.0.1:{port}" in _fail_line(out, "listening")
    assert f"-  --port {clean.svc.port} \\" not in out.output  # the diff runs rendered -> live
    assert f"-  --port {port} \\" in out.output and f"+  --port {clean.svc.port} \\" in out.output
    assert f"rendered '{port}', running '{clean.svc.port}'" in _fail_line(out, "process-argv")
    assert "health" in out.failed_checks()


def test_wrong_sglang_version_fails(clean: Deployment) -> None:
    """The host's SGLang reports another version than the pin."""
    sh(clean.test_host, "rm -rf /opt/standin-sglang/lib/python3.11/site-packages/sglang-*.dist-info")
    push(clean.test_host, dist_info("0.5.8"))
    out = gen_verify(clean)
    assert out.code == 1
    assert "sglang 0.5.8 at /opt/standin-sglang/bin/python, pinned 0.5.9" in _fail_line(out, "sglang-version")


def test_missing_and_truncated_shards_fail(clean: Deployment) -> None:
    """A shard the index names is gone, and the drafter's only shard is cut short."""
    sh(clean.test_host, f"rm {MODEL_DIR}/model-00002-of-00002.safetensors;"
                        f" truncate -s -4 {DRAFT_DIR}/model.safetensors")
    out = gen_verify(clean)
    assert out.code == 1
    assert "model-00002-of-00002.safetensors: missing" in _fail_line(out, "weights")
    assert "model.safetensors: size 364 bytes, header says 368" in _fail_line(out, "draft-weights")


def test_gpu_gone_and_vm_gpu_visible_fail(clean: Deployment) -> None:
    """nvidia-smi no longer lists GPU 1, and lists the VM's GPU 2."""
    gpus = machine(clean.plan)["gpus"] + [{"pci_bus_id": "00000000:41:00.0", "name": "NVIDIA stand-in GPU",
                                           "memory_mib": 98304, "compute_cap": "12.0"}]
    del gpus[1]
    push(clean.test_host, hardware_files(clean.plan, gpus=gpus, links=[["X", "NODE"], ["NODE", "X"]]))
    out = gen_verify(clean)
    assert out.code == 1
    assert "GPU 1 (00000000:21:00.0)" in _fail_line(out, "gpus-visible")
    assert "GPU 2 (00000000:41:00.0, given to vm-standin)" in _fail_line(out, "vm-gpus-absent")


def test_swapped_gpu_fails(clean: Deployment) -> None:
    """GPU 1 is now another card: its name, memory and capability differ from the inventory."""
    gpus = machine(clean.plan)["gpus"]
    gpus[1] |= {"name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559, "compute_cap": "9.0"}
    push(clean.test_host, hardware_files(clean.plan, gpus=gpus))
    out = gen_verify(clean)
    assert out.code == 1
    assert "3 GPU fact(s) differ; capture again with `gen host snapshot live-test`" in _fail_line(out, "gpu-facts")
    for said in ("GPU 1: 81559 MiB, the inventory says 97887", "GPU 1: compute capability 9.0, the inventory says 12.0",
                 "GPU 1: nvidia-smi names it 'NVIDIA H100 80GB HBM3', the inventory 'stand-in GPU'"):
        assert said in out.output
    assert out.failed_checks() == {"gpu-facts"}


def test_new_driver_fails(clean: Deployment) -> None:
    """The driver was upgraded: its version and the CUDA it supports differ from the facts."""
    push(clean.test_host, hardware_files(clean.plan, driver_version="590.48.01", cuda_version="13.1"))
    out = gen_verify(clean)
    assert out.code == 1
    assert "NVIDIA driver 590.48.01, the inventory records 580.95.05" in _fail_line(out, "driver")
    assert "the driver supports CUDA 13.1, the inventory records 13.0" in _fail_line(out, "cuda-driver")
    assert out.failed_checks() == {"driver", "cuda-driver"}


def test_changed_topology_fails(clean: Deployment) -> None:
    """The GPUs now cross the CPU interconnect: the link matrix differs."""
    push(clean.test_host, hardware_files(clean.plan, links=[["X", "SYS"], ["SYS", "X"]]))
    out = gen_verify(clean)
    assert out.code == 1
    assert "1 GPU link(s) changed" in _fail_line(out, "topology")
    assert "GPUs 0-1: SYS, the inventory says NODE" in out.output
    assert out.failed_checks() == {"topology"}


def test_rebuilt_torch_fails(clean: Deployment) -> None:
    """The host's SGLang venv got a torch without sm_120 kernels (the "no kernel image" class)."""
    push(clean.test_host, hardware_files(clean.plan, torch={"cuda": "12.6", "arch": "sm_80 sm_90"}))
    out = gen_verify(clean)
    assert out.code == 1
    line = _fail_line(out, "torch")
    assert "CUDA 12.6, sm_80 sm_90; the inventory records CUDA 12.8, sm_90 sm_100 sm_120 compute_120" in line
    assert out.failed_checks() == {"torch"}


def test_moved_numa_fails(clean: Deployment) -> None:
    """The host now has two NUMA nodes and GPU 1 sits on the second."""
    standin_sysfs(clean.test_host, {0: "0-1", 1: "2-3"},
                  {g.pci_bus_id: (1 if g.index == 1 else 0) for g in clean.plan.gpus})
    out = gen_verify(clean)
    assert out.code == 1
    assert "GPU 1: on NUMA node 1, the inventory says 0" in out.output
    assert "node 1: CPUs 2-3, not in the inventory" in out.output
    assert out.failed_checks() == {"gpu-facts", "numa"}


def test_restart_loop_fails_with_the_crash_in_the_journal(clean: Deployment) -> None:
    """The server crashes at every start: systemd restarts it (RestartSec=30s), verify says so."""
    push(clean.test_host, {FAULT: (b"crash\n", 0o644)})
    sh(clean.test_host, f"systemctl kill -s KILL {clean.svc.unit}")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        restarts = sh(clean.test_host, f"systemctl show -P NRestarts {clean.svc.unit}").stdout.strip()
        if restarts not in ("", "0"):
            break
        time.sleep(1)
    out = gen_verify(clean)
    assert out.code == 1
    assert "a restart loop" in _fail_line(out, "no-restarts")
    assert "stand-in crash (restart-loop test)" in out.output  # the last run's journal


def test_a_process_holding_a_retired_path_fails(clean: Deployment) -> None:
    """The server keeps a file under the retired /data open: found through /proc/<pid>/fd."""
    push(clean.test_host, {FAULT: (f"hold {RETIRED_FILE}\n".encode(), 0o644)})
    sh(clean.test_host, f"systemctl restart {clean.svc.unit}")
    out = gen_verify(clean)
    assert out.code == 1
    assert "1 use(s) of retired paths" in _fail_line(out, "no-retired-paths")
    assert f"has {RETIRED_FILE} (fd/" in out.output


def test_stray_files_and_undeclared_secret_env_fail(clean: Deployment) -> None:
    """A unit gen does not render, a drop-in, and a secret env file no unit reads."""
    push(clean.test_host, {
        "/etc/systemd/system/sglang-old.service": (b"[Service]\nExecStart=/bin/true\n", 0o644),
        f"/etc/systemd/system/{clean.svc.unit}.d/override.conf": (b"[Service]\nRestartSec=1s\n", 0o644),
        clean.svc.secret_env_path: (b"HF_TOKEN=x\n", 0o600),
    })
    try:
        out = gen_verify(clean)
    finally:  # deploy() clears drop-ins and secret files, not other units
        sh(clean.test_host, "rm -f /etc/systemd/system/sglang-old.service")
    assert out.code == 1
    stray = _fail_line(out, "no-stray-files")
    assert "/etc/systemd/system/sglang-old.service" in stray and "override.conf" in stray
    assert clean.svc.secret_env_path in stray and "`secret_env: true`" in out.output
    assert "secret-env" not in out.failed_checks()  # undeclared: no secret check at all
    assert "HF_TOKEN" not in out.output  # a secret's content is never shown


def test_declared_secret_env_must_exist_be_roots_and_0600(clean: Deployment, tmp_path: Path) -> None:
    """``secret_env: true``: the unit reads the file (after the rendered one); verify wants it root's, 0600."""
    root = fixture_repo(tmp_path / "repo", clean.svc.port)
    inventory = root / "hosts" / f"{HOST}.yaml"
    inventory.write_text(inventory.read_text().replace("    gpus: [0]\n", "    gpus: [0]\n    secret_env: true\n"))
    plan, files = render_plan(root)
    svc = plan.services[0]
    assert svc.secret_env and svc.secret_env_path == f"/etc/sglang/secrets/{svc.name}.env"
    assert svc.secret_env_path not in files  # never rendered
    secret = svc.secret_env_path
    # Without the file the unit cannot start: systemd says so at once.
    push(clean.test_host, files)
    sh(clean.test_host, f"systemctl daemon-reload && systemctl reset-failed {svc.unit}")
    failed = sh(clean.test_host, f"systemctl restart {svc.unit}", check=False)
    assert failed.returncode != 0
    journal = sh(clean.test_host, f"journalctl -u {svc.unit} -n 20 --no-pager -o cat").stdout
    assert "Failed to load environment files" in journal, journal
    missing = gen_verify(clean, root=root)
    assert missing.code == 1
    assert f"{secret} is missing; {svc.unit} reads it" in _fail_line(missing, "secret-env")
    # The operator writes it (gen never does); the service gets its variables.
    push(clean.test_host, {secret: (b"STANDIN_SECRET=s3cret-value\n", 0o600)})
    sh(clean.test_host, f"systemctl reset-failed {svc.unit}; systemctl restart {svc.unit}")
    pid = sh(clean.test_host, f"systemctl show -P MainPID {svc.unit}").stdout.strip()
    environ = sh(clean.test_host, f"tr '\\0' '\\n' < /proc/{pid}/environ").stdout.splitlines()
    assert "STANDIN_SECRET=s3cret-value" in environ
    good = gen_verify(clean, root=root)
    assert good.code == 0, good.output
    assert f"PASS {HOST} {svc.name} secret-env: {secret} is root's, mode 0600" in good.output
    assert "s3cret-value" not in good.output
    # Readable by others, or someone else's: each is a finding.
    sh(clean.test_host, f"chmod 0644 {secret}")
    assert "mode 0644, must be 0600" in _fail_line(gen_verify(clean, root=root), "secret-env")
    sh(clean.test_host, f"chmod 0600 {secret} && chown sglang {secret}")
    assert "owner sglang (uid " in _fail_line(gen_verify(clean, root=root), "secret-env")


def test_rejected_flag_starts_once_and_status_shows_why_in_full(clean: Deployment) -> None:
    """Incident 1: a unit with a flag SGLang rejects. systemd starts it exactly once
    (exit 2 is in RestartPreventExitStatus), and ``gen status`` shows the whole usage text."""
    unit = clean.svc.unit
    cursor = sh(clean.test_host, "journalctl -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p'").stdout.strip()
    sh(clean.test_host, f"sed -i 's/^  --port /  --num-speculative-tokens 16 \\\\\\n  --port /' {clean.svc.unit_path}"
                        f" && grep -q 'num-speculative-tokens 16' {clean.svc.unit_path}"
                        f" && systemctl daemon-reload && systemctl reset-failed {unit}")
    # --no-block: if the unit hangs in start-post, the test must say so, not hang itself.
    sh(clean.test_host, f"systemctl restart --no-block {unit}")
    wanted = {"NRestarts": "0", "Result": "exit-code", "ExecMainStatus": "2", "ActiveState": "failed",
              "SubState": "failed"}
    deadline = time.monotonic() + FAIL_FAST_S
    while True:
        props = sh(clean.test_host, f"systemctl show -p {','.join(wanted)} {unit}").stdout
        state = dict(ln.split("=", 1) for ln in props.split())
        if state["ActiveState"] == "failed" or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert state == wanted, (
        f"{FAIL_FAST_S:.0f} s after SGLang exited 2 the unit is {state}: it must fail at once. "
        "On systemd 252 ExecStartPost (sglang-wait-ready) keeps polling after the main process "
        "died, until TimeoutStartSec; the wait must end when $MAINPID is gone.")
    time.sleep(2)  # a scheduled restart would show up as auto-restart / NRestarts 1
    assert sh(clean.test_host, f"systemctl show -P SubState {unit}").stdout.strip() == "failed"
    starts = sh(clean.test_host, f"journalctl --after-cursor '{cursor}' --no-pager -o cat -u {unit}"
                                 " | grep -c '^Starting '", check=False).stdout.strip()
    assert starts == "1"
    out = gen_status(clean, "--service", "chat")
    assert out.code == 1
    assert "failed (failed), result exit-code" in out.output and "last exit status 2" in out.output
    journal = out.output.split("since its last start ---\n", 1)[1]
    assert journal.startswith("  | Starting sglang-chat.service")  # the journal's lines behind a gutter
    assert "usage: sglang.launch_server [-h]" in journal
    assert "error: unrecognized arguments: --num-speculative-tokens 16" in journal
    # argparse's usage text alone is longer than the 100 lines journalctl -n 100 gave.
    assert len(journal.splitlines()) > 100
    verify_out = gen_verify(clean)
    assert "unrecognized arguments: --num-speculative-tokens 16" in verify_out.output


def test_status_of_a_healthy_host_is_one_line_per_service(clean: Deployment) -> None:
    """``gen status --host`` on a healthy host: one summary line, exit 0, no journal."""
    out = gen_status(clean)
    assert out.code == 0, out.output
    assert out.output.startswith("sglang-chat.service: loaded active (running), result success")
    assert "journal" not in out.output


def test_memory_figures_off_by_more_than_5_percent_warn_naming_the_input(clean: Deployment) -> None:
    """/get_server_info against gen's prediction: the stand-in says whose figures they are; a 30%
    heavier load names the weights, another fraction names the fraction; verify still exits 0."""
    ok = [ln for ln in gen_verify(clean).lines("PASS") if ln.split()[3].rstrip(":") == "memory"]
    assert ok == [f"PASS {HOST} {clean.svc.name} memory: within 5% of gen's prediction (the stand-in server's "
                  "figures (not SGLang's))"]
    want = clean.svc.memory
    assert want is not None
    push(clean.test_host, server_info(clean.plan, weight=want.weights_gib * 1.3))
    out = gen_verify(clean)
    assert out.code == 0, out.output
    [warn] = out.lines("WARN")
    assert warn.startswith(f"WARN {HOST} {clean.svc.name} memory: weights {want.weights_gib * 1.3:.2f} GiB per GPU, "
                           f"gen charged {want.weights_gib:.2f}: correct the weights' size")
    assert "source: the stand-in server's figures (not SGLang's)" in out.output
    push(clean.test_host, server_info(clean.plan, mem_fraction_static=0.5))
    [warn] = gen_verify(clean).lines("WARN")
    assert f"mem_fraction_static 0.5, gen resolved {want.mem_fraction_static:g}" in warn
    sh(clean.test_host, f"rm -f {SERVER_INFO}")
    [warn] = gen_verify(clean).lines("WARN")
    assert "the server reported none of max_total_num_tokens, mem_fraction_static, memory_usage" in warn

