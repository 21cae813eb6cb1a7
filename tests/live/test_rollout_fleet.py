"""A fleet rollout on six real systemd hosts (issue 23 items 1, 2, 5 and 7).

Six containers (scripts/test-host) share this machine's network namespace, each with its
own sshd port and its service on its own 127.0.0.1 port, so this process watches every
service's /health directly. The STAND-IN server (tests/live/standins) answers /health
503 for ``T`` seconds after it starts, as a model load would. Model ``rep`` runs on h1
and h2 (two replicas); h3..h6 each run a model of their own.

In file order (each later test works from whatever the one before left running):

1. the wall time of one change over all six hosts with ``serial: 1`` and with a canary
   and batches (printed beside the ideal ``(1 + ceil((N-1)/batch)) x T``);
2. two replicas of ``rep`` are never down together (watched every 0.1 s during the run),
   and with ``max_unavailable: 2`` the same watch sees them down together (it can see it);
3. a failed batch stops the run: that batch rolls back, the canary keeps the change, the
   hosts after it are untouched; ``gen status`` shows each outcome;
4. a stale ansible/ is refused before any host is touched;
5. the --check --diff preview runs the no-restart preflight and says whether it passes;
6. an inventory from elsewhere that reaches h6 is refused by the prepare play (its host
   list names the inventory that wrote it).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .deploy import FIXTURE, PIN, push, sh
from .host import TestHost, boot_test_host, free_port, stop_test_host
from .rollout_fleet import make_nodes, recap, state
from .standins.provision import LOAD_SECONDS_FILE, VENV, setup_script, standin_files

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
HOSTS = ("h1", "h2", "h3", "h4", "h5", "h6")
MODEL_OF = {"h1": "rep", "h2": "rep", "h3": "solo3", "h4": "solo4", "h5": "solo5", "h6": "solo6"}
T = float(os.environ.get("GEN_FLEET_LOAD_SECONDS", "6"))  # the stand-in's time to healthy
BATCH = int(os.environ.get("GEN_FLEET_BATCH", "5"))  # canary 1, then batches of this many
UNIT_DIR = "etc/systemd/system"
TIMINGS: dict[str, float | str] = {}
FAULT = "/etc/standin-sglang/fault"


@dataclass
class Fleet:
    """The six hosts, the deployment repo, each service's port, and the next flag value."""

    hosts: dict[str, TestHost]
    repo: Path
    ports: dict[str, int]
    control: str
    ssh_config: Path  # for gen status: the shared key, no host key prompts
    flag: list[int] = field(default_factory=lambda: [0])

    def unit(self, host: str) -> str:
        return f"sglang-{host}.service"


def _model_yaml(name: str, extra: str = "") -> str:
    return (f"name: {name}\ndescription: fake model for the fleet rollout test (stand-in server)\n"
            "weights:\n  path: /shared/models/standin-llama\n  format: safetensors\n  size_gb: 1\n  shards: 2\n"
            f"served_model_name: {name}\n{extra}")


def _host_yaml(name: str, host: TestHost, port: int, model: str, flag: int) -> str:
    args = f"    args:\n      --max-running-requests: {flag}\n" if flag else ""
    return (f"name: {name}\ndescription: fleet rollout test host {name} (stand-in SGLang)\n"
            f"address: 127.0.0.1\nssh:\n  user: root\n  port: {host.port}\n"
            'gpus:\n  - {index: 0, pci_bus_id: "00000000:01:00.0", memory_gb: 96, numa_node: 0, model: stand-in GPU}\n'
            'numa:\n  - {node: 0, cpus: "0-1"}\nstorage:\n  model_root: /shared/models\n'
            f'sglang:\n  pin: "{PIN}"\n  python: {VENV}/bin/python\n  user: sglang\n'
            f"services:\n  - name: {name}\n    model: {model}\n    port: {port}\n    listen: 127.0.0.1\n"
            f"    gpus: [0]\n    timeout_start_min: 2\n{args}")


def write_repo(fleet: Fleet, rollout: str, flag: int, rep_extra: str = "") -> None:
    """(Re)write the six inventories (every service with FLAG), the models and rollout.yaml."""
    for name in HOSTS:
        (fleet.repo / "hosts" / f"{name}.yaml").write_text(
            _host_yaml(name, fleet.hosts[name], fleet.ports[name], MODEL_OF[name], flag))
    for model in set(MODEL_OF.values()):
        (fleet.repo / "models" / f"{model}.yaml").write_text(_model_yaml(model, rep_extra if model == "rep" else ""))
    (fleet.repo / "rollout.yaml").write_text(rollout)


def gen(fleet: Fleet, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(BIN / "gen"), *args, "--root", str(fleet.repo)], capture_output=True, text=True,
                          check=False, timeout=300)
    assert not ok or proc.returncode == 0, f"gen {' '.join(args)}: {proc.stdout}{proc.stderr}"
    return proc


def ansible_env(fleet: Fleet, home: Path) -> dict[str, str]:
    key = next(iter(fleet.hosts.values())).key
    return os.environ | {
        "LC_ALL": "C.UTF-8", "ANSIBLE_HOME": str(home), "ANSIBLE_LOCAL_TEMP": str(home / "tmp"),
        "ANSIBLE_PRIVATE_KEY_FILE": str(key), "ANSIBLE_HOST_KEY_CHECKING": "False",
        # Ansible's own default (one ssh connection per host, reused), with a short socket path.
        "ANSIBLE_SSH_ARGS": "-o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes -o ControlMaster=auto "
                            f"-o ControlPersist=120s -o ControlPath={fleet.control}",
        "ANSIBLE_PYTHON_INTERPRETER": "/usr/bin/python3", "ANSIBLE_PIPELINING": "True",
        "ANSIBLE_NOCOLOR": "1", "ANSIBLE_RETRY_FILES_ENABLED": "False", "ANSIBLE_FORCE_COLOR": "0",
    }


def playbook(fleet: Fleet, *args: str, repo: Path | None = None) -> subprocess.CompletedProcess[str]:
    """ansible-playbook on the generated files with forks for the largest batch."""
    repo = repo or fleet.repo
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", str(repo / "ansible" / "inventory.yml"),
                           str(repo / "ansible" / "site.yml"), "-f", "6", *args],
                          capture_output=True, text=True, env=ansible_env(fleet, repo / ".ansible-home"),
                          check=False, timeout=1200)


def roll(fleet: Fleet, rollout: str, rep_extra: str = "") -> None:
    """A new flag value on every service, rendered and written into ansible/."""
    fleet.flag[0] += 1
    write_repo(fleet, rollout, 8 + fleet.flag[0], rep_extra)
    gen(fleet, "render", "--all")
    gen(fleet, "ansible")


def ids(fleet: Fleet) -> dict[str, str]:
    return {h: state(fleet.hosts[h], fleet.unit(h))["InvocationID"] for h in HOSTS}


def live_units(fleet: Fleet) -> dict[str, str]:
    return {h: sh(fleet.hosts[h], f"cat /{UNIT_DIR}/{fleet.unit(h)}").stdout for h in HOSTS}


def rendered_units(fleet: Fleet) -> dict[str, str]:
    return {h: (fleet.repo / "output" / h / UNIT_DIR / fleet.unit(h)).read_text() for h in HOSTS}


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


class Watch:
    """Poll the /health of some services every 0.1 s in a thread: (time, {host: healthy}) samples."""

    def __init__(self, ports: dict[str, int]) -> None:
        self.ports, self.samples = ports, []  # type: list[tuple[float, dict[str, bool]]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.monotonic(), {h: healthy(p) for h, p in self.ports.items()}))
            time.sleep(0.1)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def down(self, host: str) -> int:
        return sum(not s[host] for _, s in self.samples)

    def down_together(self, hosts: tuple[str, ...]) -> int:
        return sum(all(not s[h] for h in hosts) for _, s in self.samples)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    """Boot six hosts (one key), provision the stand-ins (T s to healthy), first apply."""
    base = tmp_path_factory.mktemp("rollout-fleet")
    hosts: dict[str, TestHost] = {}
    started = time.monotonic()
    result: Fleet | None = None
    try:
        for name in HOSTS:
            folder = base / name
            folder.mkdir()
            if hosts:  # one key for all, so one ANSIBLE_PRIVATE_KEY_FILE reaches every host
                first = next(iter(hosts.values())).key
                for suffix in ("", ".pub"):
                    shutil.copy(f"{first}{suffix}", folder / f"id_ed25519{suffix}")
            hosts[name] = boot_test_host(folder, name=f"gen-{name}-{os.getpid()}")
        for host in hosts.values():
            push(host, standin_files(PIN, PIN, "0, 00000000:01:00.0\n")
                 | {LOAD_SECONDS_FILE: (f"{T}\n".encode(), 0o644)})
            sh(host, setup_script())
            make_nodes(host)
        ports: dict[str, int] = {}
        for name in HOSTS:
            port = free_port()
            while port in ports.values() or port in (h.port for h in hosts.values()):
                port = free_port()
            ports[name] = port
        repo = base / "repo"
        for part in ("templates", "catalogs"):
            shutil.copytree(ROOT / part, repo / part)
        (repo / "hosts").mkdir()
        (repo / "models").mkdir()
        key = next(iter(hosts.values())).key
        config = base / "ssh_config"
        config.write_text(f"Host 127.0.0.1\n    IdentityFile {key}\n    IdentitiesOnly yes\n"
                          "    StrictHostKeyChecking no\n    UserKnownHostsFile /dev/null\n    LogLevel ERROR\n")
        result = Fleet(hosts, repo, ports, f"/tmp/gen-cm-{os.getpid()}-%C", config)
        TIMINGS["boot+provision 6 hosts"] = time.monotonic() - started
        roll(result, "canary: 0\nbatch: 6\n")  # everything at once (rep's replicas still apart)
        first = time.monotonic()
        applied = playbook(result)
        TIMINGS["first apply (6 new services)"] = time.monotonic() - first
        assert applied.returncode == 0, applied.stdout + applied.stderr
        assert all(healthy(p) for p in ports.values())
        yield result
    finally:
        if result is not None:
            for name, host in hosts.items():
                subprocess.run(["ssh", "-o", f"ControlPath={result.control}", "-O", "exit", "-p", str(host.port),
                                "root@127.0.0.1"], capture_output=True, timeout=30, check=False)
        for host in hosts.values():
            stop_test_host(host)
        TIMINGS["load"] = os.getloadavg()[0]
        print(f"fleet rollout live timings (s): {json.dumps({k: round(v, 1) if isinstance(v, float) else v for k, v in TIMINGS.items()})}")


def _timed_change(fleet: Fleet, rollout: str, label: str, batches: int) -> float:
    before = ids(fleet)
    roll(fleet, rollout)
    started = time.monotonic()
    run = playbook(fleet)
    took = time.monotonic() - started
    assert run.returncode == 0, run.stdout + run.stderr
    after = ids(fleet)
    assert all(after[h] != before[h] for h in HOSTS), (before, after)  # every host restarted once
    assert live_units(fleet) == rendered_units(fleet)
    ideal = batches * T
    TIMINGS[label] = took
    TIMINGS[f"{label}: ideal {batches} x T"] = ideal
    return took


def test_the_wall_time_of_one_change_serial_one_against_canary_and_batches(fleet: Fleet) -> None:
    """N=6 hosts, T s to healthy: serial 1 takes ~6 x (T + overhead); canary + batches ~(1 + ceil(5/B))."""
    serial = _timed_change(fleet, "canary: 1\nbatch: 1\n", "serial 1 (canary 1, batch 1)", len(HOSTS))
    site = (fleet.repo / "ansible/site.yml").read_text()
    assert "serial: [1, 1, 1, 1, 1, 1]" in site, site
    batches = 1 + math.ceil((len(HOSTS) - 1) / BATCH)
    batched = _timed_change(fleet, f"canary: 1\nbatch: {BATCH}\n", f"canary 1 + batches of {BATCH}", batches)
    assert f"serial: [1, {min(BATCH, len(HOSTS) - 1)}" in (fleet.repo / "ansible/site.yml").read_text()
    TIMINGS["N"], TIMINGS["T"] = len(HOSTS), T
    # Parallel batches: fewer rounds of T and of per-batch overhead than one host at a time.
    assert batched < serial * 0.75, (serial, batched)


def test_two_replicas_of_a_model_are_never_down_together(fleet: Fleet) -> None:
    """rep on h1 and h2, one batch of 6: the plan keeps them apart, the watch sees it; with
    max_unavailable 2 the same watch sees both down at once."""
    roll(fleet, "canary: 0\nbatch: 6\n")
    assert "serial: [5, 1]" in (fleet.repo / "ansible/site.yml").read_text()
    with Watch({"h1": fleet.ports["h1"], "h2": fleet.ports["h2"]}) as watch:
        run = playbook(fleet)
    assert run.returncode == 0, run.stdout + run.stderr
    assert watch.down("h1") > 10 and watch.down("h2") > 10, (watch.down("h1"), watch.down("h2"))  # each restarted
    assert watch.down_together(("h1", "h2")) == 0
    TIMINGS["replicas apart: samples"] = float(len(watch.samples))

    roll(fleet, "canary: 0\nbatch: 6\n", rep_extra="rollout:\n  max_unavailable: 2\n")
    with Watch({"h1": fleet.ports["h1"], "h2": fleet.ports["h2"]}) as watch:
        run = playbook(fleet)
    assert run.returncode == 0, run.stdout + run.stderr
    assert watch.down_together(("h1", "h2")) > 10, watch.down_together(("h1", "h2"))  # the watch can see it


def test_a_failed_batch_stops_the_run_rolls_that_batch_back_and_leaves_the_rest(fleet: Fleet) -> None:
    """Canary h1, then batches [h2 h3] [h4 h5] [h6]; h3's new start crashes: h2 and h3 roll back,
    h1 keeps the change, h4..h6 are never touched."""
    before_ids, before_units = ids(fleet), live_units(fleet)
    roll(fleet, "canary: 1\nbatch: 2\n")
    assert "serial: [1, 2, 2, 1]" in (fleet.repo / "ansible/site.yml").read_text()
    new_units = rendered_units(fleet)
    untouched_record = _last_rollout(fleet, "h4")
    # The new version crashes on h3 (the stand-in exits 1 when its argv has the new flag value).
    push(fleet.hosts["h3"], {FAULT: (f"crash-if --max-running-requests {8 + fleet.flag[0]}\n".encode(), 0o644)})
    try:
        run = playbook(fleet)
    finally:
        sh(fleet.hosts["h3"], f"rm -f {FAULT}")
    assert run.returncode != 0
    out = run.stdout
    assert re.search(r'fatal: \[h3\]: FAILED! => .*"msg": "sglang-h3.service on h3: RuntimeError: stand-in crash', out), out
    assert re.search(r"fatal: \[h2\]: FAILED! => .*rolled back with its batch: 1 of its 2 host\(s\) failed \(h3\)", out), out
    after_ids, after_units = ids(fleet), live_units(fleet)
    assert after_units["h1"] == new_units["h1"] and after_ids["h1"] != before_ids["h1"]  # the canary kept it
    for h in ("h2", "h3"):  # that batch: back on the files it ran before, running again
        assert after_units[h] == before_units[h] and after_ids[h] != before_ids[h], h
        assert healthy(fleet.ports[h]), h
    for h in ("h4", "h5", "h6"):  # never touched: same files, same process
        assert (after_units[h], after_ids[h]) == (before_units[h], before_ids[h]), h
    assert not {"h4", "h5", "h6"} & set(recap(out)) or all(recap(out)[h]["changed"] == 0 for h in ("h4", "h5", "h6"))
    assert _last_rollout(fleet, "h1")["outcome"] == "applied"
    h3 = _last_rollout(fleet, "h3")
    assert h3["outcome"] == "rolled back" and h3["reason"].startswith("RuntimeError: stand-in crash"), h3
    assert _last_rollout(fleet, "h2")["reason"] == "rolled back with its batch: h3 failed"
    assert _last_rollout(fleet, "h4") == untouched_record  # the last rollout that reached it, unchanged
    text = gen(fleet, "status", "--host", "h3", "--ssh-config", str(fleet.ssh_config), ok=False).stdout
    assert "last rollout: rolled back at " in text and ": RuntimeError: stand-in crash" in text, text


def _last_rollout(fleet: Fleet, host: str) -> dict[str, str]:
    """What `gen status --format json` says the last rollout did to HOST's service."""
    proc = gen(fleet, "status", "--host", host, "--format", "json", "--ssh-config", str(fleet.ssh_config), ok=False)
    return dict(json.loads(proc.stdout)["services"][0]["last_rollout"])


def test_a_stale_ansible_folder_is_refused_before_any_host_is_touched(fleet: Fleet) -> None:
    before_ids, before_units = ids(fleet), live_units(fleet)
    fleet.flag[0] += 1
    write_repo(fleet, "canary: 1\nbatch: 2\n", 8 + fleet.flag[0])
    gen(fleet, "render", "--host", "h4")  # ... and `gen ansible` forgotten
    run = playbook(fleet)
    assert run.returncode != 0
    assert "ansible/ is stale: output/ of h4 changed since `gen ansible` wrote this playbook" in run.stdout, run.stdout
    assert "PLAY [Prepare" not in run.stdout and "UNREACHABLE" not in run.stdout, run.stdout
    assert (ids(fleet), live_units(fleet)) == (before_ids, before_units)
    gen(fleet, "render", "--all")  # output/ and ansible/ current again


def test_the_check_diff_preview_runs_the_preflight_that_needs_no_restart(fleet: Fleet) -> None:
    before_ids, before_units = ids(fleet), live_units(fleet)
    roll(fleet, "canary: 1\nbatch: 2\n")
    good = playbook(fleet, "--check", "--diff", "--limit", "h5")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "preview: preflight would pass (sglang-h5.service)" in good.stdout, good.stdout
    assert re.search(r"^\+\s+--max-running-requests", good.stdout, re.M), good.stdout
    model = fleet.repo / "models" / "solo5.yaml"
    model.write_text(model.read_text().replace("/shared/models/standin-llama", "/shared/models/missing"))
    gen(fleet, "render", "--all")
    bad = playbook(fleet, "--check", "--diff", "--limit", "h5")
    assert bad.returncode != 0
    assert re.search(r'"msg": "sglang-h5.service on h5 sglang-preflight: /shared/models/missing: no such directory',
                     bad.stdout), bad.stdout
    assert "preview: preflight would fail, nothing was changed" in bad.stdout
    assert (ids(fleet), live_units(fleet)) == (before_ids, before_units)


def test_an_inventory_from_elsewhere_reaching_a_host_is_refused(fleet: Fleet, tmp_path: Path) -> None:
    """Another repository's inventory 'intruder' reaches h6: its prepare play stops, h6 untouched."""
    other = tmp_path / "other"
    for part in ("templates", "catalogs", "models"):
        shutil.copytree(fleet.repo / part, other / part)
    (other / "hosts").mkdir()
    text = (fleet.repo / "hosts/h6.yaml").read_text()
    (other / "hosts/intruder.yaml").write_text(text.replace("name: h6\n", "name: intruder\n")
                                               .replace("  - name: h6\n", "  - name: other\n"))
    for args in (("render", "--all"), ("ansible",)):
        proc = subprocess.run([str(BIN / "gen"), *args, "--root", str(other)], capture_output=True, text=True,
                              timeout=300, check=False)
        assert proc.returncode == 0, proc.stderr
    before = (ids(fleet)["h6"], live_units(fleet)["h6"], sh(fleet.hosts["h6"], "cat /etc/sglang/.gen-managed").stdout)
    run = playbook(fleet, repo=other)
    assert run.returncode != 0
    assert "/etc/sglang/.gen-managed on this machine was written by inventory h6, and this is inventory intruder" \
        in run.stdout, run.stdout
    assert sh(fleet.hosts["h6"], "systemctl is-active sglang-other.service", check=False).stdout.strip() != "active"
    after = (ids(fleet)["h6"], live_units(fleet)["h6"], sh(fleet.hosts["h6"], "cat /etc/sglang/.gen-managed").stdout)
    assert after == before
