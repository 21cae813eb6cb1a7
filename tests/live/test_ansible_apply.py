"""`gen ansible` for real: ansible-core rolls the rendered tree out to two systemd hosts.

Two containers (scripts/test-host) share this machine's network namespace, so each gets
its own sshd port and the services get distinct ports; both inventories say 127.0.0.1
with their own ssh port, exactly what `gen ansible` turns into ``ansible_host`` /
``ansible_port``. SGLang itself is the live suite's stand-in server (tests/live/standins:
it parses argv with the pinned catalog and answers /health and /v1/models).

One rollout, in order: first apply; a no-change run (changed=0, nothing restarted);
``--check --diff`` of a one-flag change (shows the diff, changes nothing); the real
one-flag change (exactly one service restarted); and a unit that fails
``systemd-analyze verify`` (old file stays, nothing restarted, the rollout stops before
the second host).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .deploy import FIXTURE, PIN, VENV, push, sh, standin_files, standin_model_files
from .host import TestHost, boot_test_host, free_port, stop_test_host
from .rollout_fleet import accept_hand_edit, make_nodes

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
MODEL = "standin-llama-eagle3"
UNIT_DIR = "etc/systemd/system"


@dataclass(frozen=True)
class Fleet:
    """Two booted hosts, the deployment repo rendering them, and each service's port."""

    hosts: dict[str, TestHost]
    repo: Path
    ports: dict[str, int]  # service name -> port
    services: dict[str, tuple[str, ...]]  # host -> its service names


def _host_yaml(name: str, ssh_port: int, services: dict[str, int], extra: dict[str, str],
               secret: frozenset[str] = frozenset()) -> str:
    svc = "".join(
        f"  - name: {s}\n    model: {MODEL}\n    port: {port}\n    listen: 127.0.0.1\n    gpus: [{i}]\n"
        + ("    secret_env: true\n" if s in secret else "")
        + (f"    args:\n      {extra[s]}\n" if s in extra else "")
        for i, (s, port) in enumerate(services.items()))
    return (f"name: {name}\ndescription: ansible live-test host {name} (stand-in SGLang)\n"
            f"address: 127.0.0.1\nssh:\n  user: root\n  port: {ssh_port}\n"
            "gpus:\n"
            '  - {index: 0, pci_bus_id: "00000000:01:00.0", memory_gb: 96, numa_node: 0, model: stand-in GPU}\n'
            '  - {index: 1, pci_bus_id: "00000000:21:00.0", memory_gb: 96, numa_node: 0, model: stand-in GPU}\n'
            'numa:\n  - {node: 0, cpus: "0-1"}\n'
            "storage:\n  model_root: /shared/models\n  retired: [/data]\n"
            f'sglang:\n  pin: "{PIN}"\n  python: {VENV}/bin/python\n  user: sglang\n'
            f"services:\n{svc}")


def write_hosts(fleet: Fleet, extra: dict[str, str] | None = None, secret: frozenset[str] = frozenset(),
                dropped: frozenset[str] = frozenset()) -> None:
    """(Re)write both inventories; ``extra`` adds one ``--flag: value`` line to a service,
    ``secret`` marks services ``secret_env: true``, ``dropped`` services are left out."""
    for name, host in fleet.hosts.items():
        services = {s: fleet.ports[s] for s in fleet.services[name] if s not in dropped}
        (fleet.repo / "hosts" / f"{name}.yaml").write_text(
            _host_yaml(name, host.port, services, extra or {}, secret))


def gen(repo: Path, *args: str) -> str:
    """Run the real `gen` command line; a non-zero exit fails the test."""
    proc = subprocess.run([str(BIN / "gen"), *args, "--root", str(repo)], capture_output=True, text=True, check=False,
                          timeout=300)
    assert proc.returncode == 0, f"gen {' '.join(args)}: {proc.stdout}{proc.stderr}"
    return proc.stdout


def ansible_env(fleet: Fleet) -> dict[str, str]:
    """The environment an operator would run Ansible (and ``gen verify --inventory``) with."""
    key = next(iter(fleet.hosts.values())).key
    home = fleet.repo / ".ansible-home"
    return os.environ | {
        "LC_ALL": "C.UTF-8",
        "ANSIBLE_HOME": str(home),
        "ANSIBLE_LOCAL_TEMP": str(home / "tmp"),
        "ANSIBLE_PRIVATE_KEY_FILE": str(key),
        "ANSIBLE_HOST_KEY_CHECKING": "False",
        # Every container is new, with host keys from a shared image: never record them. One
        # ssh connection per host for a whole run (a new one per task cost most of a playbook
        # run here); stop_masters() ends them by their control sockets.
        "ANSIBLE_SSH_ARGS": ("-o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes -o ControlMaster=auto "
                             f"-o ControlPersist=120s -o ControlPath={control_path()}"),
        "ANSIBLE_PYTHON_INTERPRETER": "/usr/bin/python3",
        "ANSIBLE_PIPELINING": "True",  # one ssh round trip per module: the playbook has many steps
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "False",
        "ANSIBLE_FORCE_COLOR": "0",
    }


def control_path() -> str:
    """The ssh control socket of each host's connection (short: sockets have a path limit)."""
    return f"/tmp/gen-cm-{os.getpid()}-%p"


def stop_masters(fleet: Fleet) -> None:
    """End the ssh control masters the Ansible runs left, by their sockets; safe to repeat."""
    for host in fleet.hosts.values():
        socket = control_path().replace("%p", str(host.port))
        subprocess.run(["ssh", "-o", f"ControlPath={socket}", "-O", "exit", "127.0.0.1"],
                       capture_output=True, timeout=30, check=False)


def playbook(fleet: Fleet, *args: str) -> subprocess.CompletedProcess[str]:
    """ansible-playbook on the generated inventory and playbook; its own state stays in the repo."""
    env = ansible_env(fleet)
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", str(fleet.repo / "ansible" / "inventory.yml"),
                           str(fleet.repo / "ansible" / "site.yml"), *args],
                          capture_output=True, text=True, env=env, check=False, timeout=900)


def recap(output: str) -> dict[str, dict[str, int]]:
    """PLAY RECAP counters per host: ``{'ansible-a': {'ok': 7, 'changed': 3, ...}}``."""
    counts = {}
    for host, rest in re.findall(r"^(\S+)\s+:\s+(ok=.*)$", output, re.MULTILINE):
        counts[host] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", rest)}
    return counts


def invocations(fleet: Fleet) -> dict[str, str]:
    """systemd's InvocationID of every service: it changes exactly when the unit (re)starts."""
    ids = {}
    for name, host in fleet.hosts.items():
        for svc in fleet.services[name]:
            ids[svc] = sh(host, f"systemctl show -p InvocationID --value sglang-{svc}.service").stdout.strip()
    return ids


def remote_text(host: TestHost, path: str) -> str:
    """A file's text on the host."""
    return sh(host, f"cat {path}").stdout


def healthy(host: TestHost, port: int) -> bool:
    """True when the stand-in on PORT answers /health with 200 (asked from inside the host)."""
    probe = sh(host, f"python3 -c \"import urllib.request; print(urllib.request.urlopen("
                     f"'http://127.0.0.1:{port}/health', timeout=5).status)\"", check=False)
    return probe.stdout.strip() == "200"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    """Boot two hosts (one shared ssh key), provision the stand-ins, write the repo."""
    base = tmp_path_factory.mktemp("ansible-fleet")
    hosts: dict[str, TestHost] = {}
    try:
        for name in ("ansible-a", "ansible-b"):
            folder = base / name
            folder.mkdir()
            if hosts:  # reuse the first host's key, so one ANSIBLE_PRIVATE_KEY_FILE reaches both
                first = next(iter(hosts.values())).key
                shutil.copy(first, folder / "id_ed25519")
                shutil.copy(f"{first}.pub", folder / "id_ed25519.pub")
            hosts[name] = boot_test_host(folder, name=f"gen-{name}-{os.getpid()}")
        for host in hosts.values():
            push(host, standin_files(PIN, PIN, "0, 00000000:01:00.0\n1, 00000000:21:00.0\n")
                 | standin_model_files())
            sh(host, "id sglang >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "
                     f"sglang; mkdir -p {VENV}/bin /data; ln -sfn /usr/bin/python3 {VENV}/bin/python")
            make_nodes(host)  # the playbook's sandbox check opens them (no device cgroup here: ENXIO)
        repo = base / "repo"
        shutil.copytree(FIXTURE / "models", repo / "models")
        for part in ("templates", "catalogs"):
            shutil.copytree(ROOT / part, repo / part)
        (repo / "hosts").mkdir()
        services = {"ansible-a": ("alpha", "beta"), "ansible-b": ("gamma",)}
        ports: dict[str, int] = {}
        for svc in ("alpha", "beta", "gamma"):
            port = free_port()
            while port in ports.values() or port in (h.port for h in hosts.values()):
                port = free_port()
            ports[svc] = port
        result = Fleet(hosts, repo, ports, services)
        write_hosts(result)
        yield result
    finally:
        stop_masters(Fleet(hosts, base / "repo", {}, {}))
        for host in hosts.values():
            stop_test_host(host)


def test_rollout_through_ansible(fleet: Fleet) -> None:
    """Apply, no-change, --check --diff, one-flag change, failing validate: each as promised."""
    a, b = fleet.hosts["ansible-a"], fleet.hosts["ansible-b"]
    gen(fleet.repo, "render", "--all")
    written = gen(fleet.repo, "ansible")
    assert "created" in written and (fleet.repo / "ansible" / "site.yml").is_file(), written
    inventory = (fleet.repo / "ansible" / "inventory.yml").read_text()
    assert f"ansible_port: {a.port}" in inventory and f"ansible_port: {b.port}" in inventory

    # 1. First apply: every file copied, every service started and healthy.
    first = playbook(fleet)
    assert first.returncode == 0, first.stdout + first.stderr
    counts = recap(first.stdout)
    assert counts["ansible-a"]["changed"] > 0 and counts["ansible-b"]["changed"] > 0, first.stdout
    for name, host in fleet.hosts.items():
        for svc in fleet.services[name]:
            assert sh(host, f"systemctl is-active sglang-{svc}.service").stdout.strip() == "active"
            assert healthy(host, fleet.ports[svc]), svc
    unit_a = f"/{UNIT_DIR}/sglang-alpha.service"
    assert remote_text(a, unit_a) == (fleet.repo / "output/ansible-a" / UNIT_DIR / "sglang-alpha.service").read_text()
    before = invocations(fleet)
    assert all(before.values()), before

    # 2. No change: nothing changed, nothing restarted.
    again = playbook(fleet)
    assert again.returncode == 0, again.stdout + again.stderr
    assert {h: c["changed"] for h, c in recap(again.stdout).items()} == {"ansible-a": 0, "ansible-b": 0}, again.stdout
    assert invocations(fleet) == before

    # 3. One flag on one service: --check --diff shows it and changes nothing ...
    write_hosts(fleet, {"alpha": "--max-running-requests: 16"})
    changed = gen(fleet.repo, "render", "--all")
    # (render --all rewrites the existing ansible/ too: those lines name ansible/.)
    assert [ln for ln in changed.splitlines() if not ln.startswith(("unchanged", "gen: ", "updated   ansible/"))] == \
        [f"updated   output/ansible-a/{UNIT_DIR}/sglang-alpha.service"], changed
    gen(fleet.repo, "ansible")
    preview = playbook(fleet, "--check", "--diff")
    assert preview.returncode == 0, preview.stdout + preview.stderr
    assert re.search(r"^\+\s+--max-running-requests 16", preview.stdout, re.MULTILINE), preview.stdout
    assert recap(preview.stdout)["ansible-a"]["changed"] > 0 and recap(preview.stdout)["ansible-b"]["changed"] == 0
    assert "--max-running-requests" not in remote_text(a, unit_a)
    assert invocations(fleet) == before

    # ... and applying it restarts exactly that service, which comes back healthy.
    apply = playbook(fleet)
    assert apply.returncode == 0, apply.stdout + apply.stderr
    assert recap(apply.stdout)["ansible-b"]["changed"] == 0, apply.stdout
    after = invocations(fleet)
    assert [s for s in after if after[s] != before[s]] == ["alpha"], (before, after)
    assert "--max-running-requests 16" in remote_text(a, unit_a)
    shown = sh(a, "systemctl show -p ExecStart --value sglang-alpha.service").stdout
    assert "--max-running-requests 16" in shown, shown
    assert healthy(a, fleet.ports["alpha"])
    # The files alpha ran before are kept as its previous set, with their hashes.
    meta = sh(a, "cat /var/lib/gen/previous/sglang-alpha.service/files.json").stdout
    assert '"new": false' in meta and '"active": true' in meta, meta
    kept = sh(a, f"cat /var/lib/gen/previous/sglang-alpha.service/files/{UNIT_DIR}/sglang-alpha.service").stdout
    assert "--max-running-requests" not in kept and "sglang-alpha" in kept

    # 4. A unit systemd rejects: the old file stays, nothing restarts, host b is never reached.
    write_hosts(fleet, {"alpha": "--max-running-requests: 16", "gamma": "--max-running-requests: 8"})
    gen(fleet.repo, "render", "--all")
    gen(fleet.repo, "ansible")
    beta_out = fleet.repo / "output/ansible-a" / UNIT_DIR / "sglang-beta.service"
    beta_old = remote_text(a, f"/{UNIT_DIR}/sglang-beta.service")
    gamma_old = remote_text(b, f"/{UNIT_DIR}/sglang-gamma.service")
    # What a newer systemd would accept and this one does not: an unknown setting.
    beta_out.write_text(beta_out.read_text().replace("[Service]\n", "[Service]\nFrobnicateGPU=yes\n", 1))
    accept_hand_edit(fleet.repo, "ansible-a")
    failed = playbook(fleet)
    assert failed.returncode != 0, failed.stdout
    assert "FrobnicateGPU" in failed.stdout + failed.stderr, failed.stdout  # systemd-analyze's complaint
    assert remote_text(a, f"/{UNIT_DIR}/sglang-beta.service") == beta_old
    assert remote_text(b, f"/{UNIT_DIR}/sglang-gamma.service") == gamma_old  # rollout stopped at host a
    assert "ansible-b" not in recap(failed.stdout) or recap(failed.stdout)["ansible-b"]["changed"] == 0
    assert invocations(fleet) == after


# The state test_rollout_through_ansible leaves in hosts/: two one-flag changes.
FLAGS = {"alpha": "--max-running-requests: 16", "gamma": "--max-running-requests: 8"}


def test_secret_env_file_is_checked_before_anything_changes(fleet: Fleet) -> None:
    """``secret_env: true`` on alpha: missing or 0644 stops the rollout untouched; root 0600 passes."""
    a, b = fleet.hosts["ansible-a"], fleet.hosts["ansible-b"]
    secret = "/etc/sglang/secrets/alpha.env"  # a folder gen never renders into
    write_hosts(fleet, FLAGS, secret=frozenset({"alpha"}))
    gen(fleet.repo, "render", "--all")
    gen(fleet.repo, "ansible")
    assert not list((fleet.repo / "output").rglob("secrets"))  # never rendered
    unit_a = f"/{UNIT_DIR}/sglang-alpha.service"
    unit_before, gamma_before, ids = remote_text(a, unit_a), remote_text(b, f"/{UNIT_DIR}/sglang-gamma.service"), \
        invocations(fleet)

    missing = playbook(fleet)
    assert missing.returncode != 0, missing.stdout
    assert f"{secret} must exist as a regular file owned by root with mode 0600" in missing.stdout, missing.stdout
    push(a, {secret: (b"STANDIN_SECRET=s3cret-value\n", 0o644)})
    loose = playbook(fleet)
    assert loose.returncode != 0 and f"{secret} must exist" in loose.stdout, loose.stdout
    assert "s3cret-value" not in loose.stdout + loose.stderr
    # Neither run changed anything anywhere: host b was never reached.
    assert remote_text(a, unit_a) == unit_before and "secrets/" not in unit_before
    assert remote_text(b, f"/{UNIT_DIR}/sglang-gamma.service") == gamma_before
    assert invocations(fleet) == ids

    sh(a, f"chmod 0600 {secret}")
    applied = playbook(fleet)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert f"EnvironmentFile={secret}" in remote_text(a, unit_a)
    after = invocations(fleet)
    assert sorted(s for s in after if after[s] != ids[s]) == ["alpha", "gamma"], (ids, after)  # gamma: its flag
    pid = sh(a, "systemctl show -P MainPID sglang-alpha.service").stdout.strip()
    assert "STANDIN_SECRET=s3cret-value" in sh(a, f"tr '\\0' '\\n' < /proc/{pid}/environ").stdout.splitlines()
    assert sh(a, f"stat -c '%a %U' {secret}").stdout.strip() == "600 root"  # the playbook left it alone


def test_dropped_service_is_stopped_disabled_and_removed(fleet: Fleet) -> None:
    """beta leaves ansible-a's inventory: its unit stops, is disabled, its files go; nothing else moves."""
    a = fleet.hosts["ansible-a"]
    beta_unit, beta_env = f"/{UNIT_DIR}/sglang-beta.service", "/etc/sglang/beta.env"
    listed = sh(a, "cat /etc/sglang/.gen-managed").stdout
    assert beta_unit.lstrip("/") in listed and beta_env.lstrip("/") in listed, listed
    # Files gen must never remove: the operator's secret, a unit gen never listed, and
    # paths smuggled into the host's list that are not of a shape gen writes.
    push(a, {"/etc/sglang/beta.secret.env": (b"X=1\n", 0o600),
             f"/{UNIT_DIR}/sglang-handmade.service": (b"[Service]\nExecStart=/bin/true\n", 0o644)})
    sh(a, "printf 'etc/sglang/beta.secret.env\\netc/hostname\\netc/systemd/system/ssh.service\\n'"
          " >> /etc/sglang/.gen-managed")
    write_hosts(fleet, FLAGS, secret=frozenset({"alpha"}), dropped=frozenset({"beta"}))
    rendered = gen(fleet.repo, "render", "--all")
    assert f"removed   output/ansible-a{beta_unit}" in rendered, rendered
    gen(fleet.repo, "ansible")
    ids = invocations(fleet)

    preview = playbook(fleet, "--check", "--diff")
    assert preview.returncode == 0, preview.stdout + preview.stderr
    assert "sglang-beta.service" in preview.stdout and recap(preview.stdout)["ansible-b"]["changed"] == 0
    assert sh(a, "systemctl is-active sglang-beta.service").stdout.strip() == "active"  # check mode: untouched
    assert sh(a, f"test -f {beta_unit} && test -f {beta_env}", check=False).returncode == 0

    applied = playbook(fleet)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert recap(applied.stdout)["ansible-b"]["changed"] == 0, applied.stdout
    state = sh(a, "systemctl show -p LoadState,ActiveState,UnitFileState sglang-beta.service").stdout.split()
    assert sorted(state) == ["ActiveState=inactive", "LoadState=not-found", "UnitFileState="], state
    assert sh(a, f"ls {beta_unit} {beta_env}", check=False).returncode != 0
    wants = sh(a, "ls /etc/systemd/system/multi-user.target.wants/").stdout.split()
    assert [w for w in wants if w.startswith("sglang-")] == ["sglang-alpha.service"], wants
    for kept in ("/etc/sglang/beta.secret.env", "/etc/hostname", f"/{UNIT_DIR}/sglang-handmade.service"):
        assert sh(a, f"test -f {kept}", check=False).returncode == 0, kept
    assert sh(a, "systemctl list-unit-files ssh.service --no-legend").stdout.strip(), "ssh.service was touched"
    # The host's list is gen's again; alpha and host b kept running the same processes.
    # First the inventory that wrote it (the prepare play refuses a list another inventory wrote).
    assert remote_text(a, "/etc/sglang/.gen-managed") == "# gen: written by inventory ansible-a\n" \
        + (fleet.repo / "output/ansible-a/.gen-managed").read_text() + "var/lib/gen/previous/sglang-alpha.service\n"
    assert sh(a, "ls /var/lib/gen/previous/sglang-beta.service", check=False).returncode != 0  # its previous set too
    after = invocations(fleet)
    # beta is gone (not-found, inactive: above); systemd may keep its last InvocationID in memory.
    assert (after["alpha"], after["gamma"]) == (ids["alpha"], ids["gamma"])
    assert healthy(a, fleet.ports["alpha"]) and not healthy(a, fleet.ports["beta"])
    sh(a, f"rm /etc/sglang/beta.secret.env /{UNIT_DIR}/sglang-handmade.service")

    again = playbook(fleet)  # nothing left to remove: no change anywhere
    assert {h: c["changed"] for h, c in recap(again.stdout).items()} == {"ansible-a": 0, "ansible-b": 0}, again.stdout


def gen_verify_fleet(fleet: Fleet, *args: str, inventory: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The installed ``gen verify --all --inventory ansible/inventory.yml`` in the playbook's environment."""
    env = ansible_env(fleet) | {"ANSIBLE_SSH_COMMON_ARGS": "-o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes"}
    inventory = inventory or fleet.repo / "ansible" / "inventory.yml"
    return subprocess.run([str(BIN / "gen"), "verify", "--all", "--inventory", str(inventory), *args,
                           "--root", str(fleet.repo)],
                          capture_output=True, text=True, env=env, check=False, timeout=600)


def table(stdout: str) -> dict[str, list[str]]:
    """The summary table's rows by host: [passed, failed, seconds, result]."""
    lines = stdout.splitlines()
    start = max(i for i, ln in enumerate(lines) if ln.split()[:1] == ["host"])
    return {ln.split()[0]: ln.split()[1:] for ln in lines[start + 1:-1]}


def test_verify_the_fleet_through_the_ansible_inventory_in_parallel(fleet: Fleet) -> None:
    """Both hosts checked at once through the inventory: all pass; then one drifts and only it fails."""
    b = fleet.hosts["ansible-b"]
    started = time.monotonic()
    clean = gen_verify_fleet(fleet, "--jobs", "2")
    took = time.monotonic() - started
    assert clean.returncode == 0, clean.stdout + clean.stderr
    progress = [ln for ln in clean.stderr.splitlines() if ln.startswith("[")]
    assert sorted(ln.split(":")[0] for ln in progress) == ["[1/2] ansible-a", "[2/2] ansible-b"] or \
        sorted(ln.split(":")[0] for ln in progress) == ["[1/2] ansible-b", "[2/2] ansible-a"], clean.stderr
    rows = table(clean.stdout)
    assert list(rows) == ["ansible-a", "ansible-b"] and all(r[1] == "0" and r[3] == "ok" for r in rows.values())
    assert "PASS ansible-a alpha secret-env: /etc/sglang/secrets/alpha.env is root's, mode 0600" in clean.stdout
    assert int(rows["ansible-a"][0]) > 20 and int(rows["ansible-b"][0]) > 10, rows
    # In parallel: the whole run is shorter than the two hosts one after the other.
    serial = sum(float(r[2]) for r in rows.values())
    print(f"verify 2 hosts --jobs 2: {took:.1f} s wall, {serial:.1f} s of host time; rows {rows}")
    assert took < serial + 5.0

    sh(b, "systemctl stop sglang-gamma.service")
    try:
        drift = gen_verify_fleet(fleet, "--jobs", "2")
    finally:
        sh(b, "systemctl start sglang-gamma.service")
    assert drift.returncode == 1, drift.stdout + drift.stderr
    rows = table(drift.stdout)
    assert rows["ansible-a"][1:2] == ["0"] and rows["ansible-a"][3] == "ok", rows
    assert rows["ansible-b"][3] == "FAILED" and int(rows["ansible-b"][1]) >= 3, rows
    assert "FAIL ansible-b gamma active: sglang-gamma.service is inactive (dead)" in drift.stdout
    assert "ansible-b: FAILED" in drift.stderr
    # The inventory, not hosts/, says how to reach a host: give b a port nobody listens on.
    wrong = fleet.repo / "ansible" / "inventory-wrong-port.yml"
    text = (fleet.repo / "ansible" / "inventory.yml").read_text()
    assert text.count(f"ansible_port: {b.port}\n") == 1
    wrong.write_text(text.replace(f"ansible_port: {b.port}\n", f"ansible_port: {free_port()}\n"))
    unreachable = gen_verify_fleet(fleet, inventory=wrong)
    assert unreachable.returncode == 3, unreachable.stdout + unreachable.stderr
    rows = table(unreachable.stdout)
    assert rows["ansible-a"][3] == "ok" and rows["ansible-b"][3] == "UNREACHABLE", rows
