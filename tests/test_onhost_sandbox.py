"""The sandbox translation (generator/live/onhost_sandbox.py): unit file -> systemd-run -p list.

The probe itself runs in a real sandbox in tests/live/test_rollout_group.py; here the
pure part runs on the example repo's rendered units.
"""

from __future__ import annotations

import base64
import errno
import json
import os
import sys
from pathlib import Path

import pytest

from generator.live import onhost_sandbox as sandbox

ROOT = Path(__file__).resolve().parents[1]
DEEPSEEK = ROOT / "output/gpu-a/etc/systemd/system/sglang-deepseek.service"


def test_translation_keeps_the_sandbox_and_drops_how_the_server_starts() -> None:
    args = sandbox.run_args(DEEPSEEK.read_text(), {"/etc/sglang/deepseek.env": "/var/lib/gen/next/etc/sglang/deepseek.env"})
    props = [args[i + 1] for i in range(0, len(args), 2)]
    assert all(args[i] == "-p" for i in range(0, len(args), 2))
    keys = [p.split("=", 1)[0] for p in props]
    for kept in ("User", "Group", "DevicePolicy", "DeviceAllow", "ProtectKernelTunables", "SystemCallFilter",
                 "RestrictAddressFamilies", "ReadOnlyPaths", "CacheDirectory", "RequiresMountsFor", "Environment"):
        assert kept in keys, kept
    for dropped in ("Type", "ExecStart", "ExecStartPost", "Restart", "RestartSec", "TimeoutStartSec",
                    "StartLimitBurst", "RemoveIPC", "Description", "WantedBy", "RestartPreventExitStatus"):
        assert dropped not in keys, dropped
    assert "DeviceAllow=char-nvidia* rw" in props
    assert "EnvironmentFile=/var/lib/gen/next/etc/sglang/deepseek.env" in props  # the staged copy
    # Specifiers expanded: systemd-run would pass %S/%C through literally.
    assert "Environment=\"HOME=/var/lib/sglang-deepseek\"" in props  # quoted as rendered
    assert "Environment=\"TRITON_CACHE_DIR=/var/cache/sglang-deepseek/triton\"" in props
    assert not any("%" in p for p in props)
    assert sandbox.interpreter(DEEPSEEK.read_text()) == "/opt/sglang/.venv/bin/python"


def test_continuation_lines_join_and_unknown_specifiers_are_refused() -> None:
    unit = "[Service]\nExecStart=/usr/bin/python3 -m x \\\n  --a 1\nEnvironment=A=%S/x\n"
    assert sandbox.logical_lines(unit) == [("Service", "ExecStart=/usr/bin/python3 -m x    --a 1"),
                                           ("Service", "Environment=A=%S/x")]
    assert sandbox.run_args(unit, {}) == ["-p", "Environment=A=/var/lib/x"]
    with pytest.raises(ValueError, match="specifier %n"):
        sandbox.run_args("[Service]\nEnvironment=N=%n\n", {})


def test_a_unit_that_cannot_be_translated_is_one_failure(tmp_path: Path) -> None:
    (tmp_path / "u.service").write_text("[Service]\nEnvironment=N=%n\nExecStart=/bin/true\n")
    spec = {"name": "x", "unit_file": str(tmp_path / "u.service"), "env_map": {}}
    (res,) = sandbox.run_one(spec, "")
    assert res["ok"] is False and "not expanded by systemd-run" in res["detail"]


def test_probe_classifies_what_it_sees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Here (no driver, no nvidia nodes): ENOENT is named; the model and cache parts are checked."""
    monkeypatch.setattr(sandbox, "DRIVER_DIR", str(tmp_path / "no-driver"))
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text("{}")
    header = json.dumps({"t": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    (model / "a.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 4)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    spec = {"gpu_bus_ids": ["00000000:01:00.0"], "gpu_indices": [7], "model": str(model)}
    results = sandbox.probe(base64.b64encode(json.dumps(spec).encode()).decode())
    by = {(r["check"], r["detail"].split(" ")[0]): r for r in results}
    dev = [r for r in results if r["check"] == "device"]
    assert [r["detail"].split(" ")[0] for r in dev] == ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia7"]
    assert all(not r["ok"] and "does not exist" in r["detail"] for r in dev if "nvidia7" in r["detail"])
    assert by[("model-read", "read")]["ok"]
    assert any(r["check"] == "cache-write" and r["ok"] and "XDG_CACHE_HOME=" in r["detail"] for r in results)


def _probe_spec(tmp_path: Path, **extra: object) -> str:
    spec = {"gpu_bus_ids": ["00000000:01:00.0"], "gpu_indices": [7], "model": str(tmp_path / "m"), **extra}
    return base64.b64encode(json.dumps(spec).encode()).decode()


def test_the_gpu_node_is_the_drivers_device_minor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's table (``Device Minor:``) names /dev/nvidiaN; the nvidia-smi index only without it."""
    driver = tmp_path / "driver"
    info = driver / "gpus/0000:01:00.0/information"
    info.parent.mkdir(parents=True)
    info.write_text("Model:\t\t NVIDIA H100\nIRQ:\t\t 42\nDevice Minor:\t 3\nBus Location:\t 0000:01:00.0\n")
    monkeypatch.setattr(sandbox, "DRIVER_DIR", str(driver))
    svc = {"gpu_bus_ids": ["00000000:01:00.0"], "gpu_indices": [7]}
    gpu = sandbox.devices(svc)[2]
    assert gpu["detail"].startswith("/dev/nvidia3 ")  # absent here: ENOENT, named with the driver's minor
    info.write_text("Model:\t\t NVIDIA H100\n")  # no minor in the table: the index
    assert sandbox.devices(svc)[2]["detail"].startswith("/dev/nvidia7 ")


@pytest.mark.parametrize("driver", [False, True])
def test_enxio_passes_only_without_a_driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, driver: bool) -> None:
    """ENXIO means the device cgroup let the open through: fine with no driver loaded, a failure with one."""
    folder = tmp_path / "driver"
    if driver:
        folder.mkdir()
    monkeypatch.setattr(sandbox, "DRIVER_DIR", str(folder))

    def enxio(path: str, flags: int) -> int:
        raise OSError(errno.ENXIO, "No such device or address", path)
    monkeypatch.setattr(sandbox.os, "open", enxio)
    ctl = sandbox.devices({"gpu_bus_ids": [], "gpu_indices": []})[0]
    assert ctl["ok"] is (not driver)
    assert ("no NVIDIA driver is loaded here" in ctl["detail"]) is (not driver)
    assert driver is False or ctl["detail"] == "/dev/nvidiactl: ENXIO No such device or address"


def test_an_optional_env_file_stays_optional_and_staged() -> None:
    unit = "[Service]\nEnvironmentFile=-/etc/sglang/a.env\nEnvironmentFile=/etc/sglang/b.env\nExecStart=/bin/true\n"
    args = sandbox.run_args(unit, {"/etc/sglang/a.env": "/stage/a.env", "/etc/sglang/b.env": "/stage/b.env"})
    assert args == ["-p", "EnvironmentFile=-/stage/a.env", "-p", "EnvironmentFile=/stage/b.env"]


# STAND-IN for systemd-run (it needs systemd as PID 1; tests/live runs the real one): records its
# argv and stdin, then answers like the probe would, or sleeps past the timeout.
SYSTEMD_RUN_STANDIN = """#!/bin/sh
printf '%s\\n' "$@" > "$GEN_TEST_DIR/argv"
cat > "$GEN_TEST_DIR/stdin"
[ -n "$GEN_TEST_SLEEP" ] && exec sleep "$GEN_TEST_SLEEP"
printf 'noise\\n=== gen on-host result ===\\n[{"check": "device", "ok": true, "detail": "stand-in"}]\\n'
"""
SYSTEMCTL_STANDIN = """#!/bin/sh
printf '%s\\n' "$@" >> "$GEN_TEST_DIR/systemctl"
"""


def _standins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("systemd-run", SYSTEMD_RUN_STANDIN), ("systemctl", SYSTEMCTL_STANDIN)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("GEN_TEST_DIR", str(tmp_path))
    return tmp_path


def test_run_starts_the_probe_in_a_transient_unit_with_the_staged_env(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``run``: systemd-run's argv (waits, pipes, collects the unit), the unit's sandbox, this script on stdin."""
    seen = _standins(tmp_path, monkeypatch)
    unit = tmp_path / "u.service"
    unit.write_text("[Service]\nUser=sglang-x\nEnvironmentFile=/etc/sglang/x.env\n"
                    "ExecStart=/opt/sglang/.venv/bin/python -m sglang.launch_server\n")
    svc = {"name": "x", "unit_file": str(unit), "env_map": {"/etc/sglang/x.env": "/stage/x.env"}}
    spec = base64.b64encode(json.dumps({"services": [svc]}).encode()).decode()
    assert sandbox.run(spec) == {"services": {"x": [{"check": "device", "ok": True, "detail": "stand-in"}]}}
    argv = (seen / "argv").read_text().splitlines()
    assert argv[:6] == ["--wait", "--pipe", "--collect", "--quiet", f"--unit=gen-sandbox-x-{os.getpid()}",
                        "-p"]
    assert argv[6:10] == ["User=sglang-x", "-p", "EnvironmentFile=/stage/x.env", "--"]
    assert argv[10:13] == ["/opt/sglang/.venv/bin/python", "-", "probe"]
    assert json.loads(base64.b64decode(argv[13])) == svc
    assert (seen / "stdin").read_text() == Path(sandbox.__file__).read_text()


def test_a_probe_past_its_timeout_is_stopped_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _standins(tmp_path, monkeypatch)
    monkeypatch.setenv("GEN_TEST_SLEEP", "30")
    monkeypatch.setattr(sandbox, "PROBE_TIMEOUT_S", 0.5)
    (tmp_path / "u.service").write_text("[Service]\nExecStart=/usr/bin/python3\n")
    (res,) = sandbox.run_one({"name": "x", "unit_file": str(tmp_path / "u.service")}, "")
    assert res == {"check": "sandbox", "ok": False, "detail": "the probe did not finish in 0.5 s"}
    assert (seen / "systemctl").read_text().splitlines() == ["stop", f"gen-sandbox-x-{os.getpid()}"]


def test_a_unit_without_execstart_is_named(tmp_path: Path) -> None:
    (tmp_path / "u.service").write_text("[Service]\nUser=x\n")
    (res,) = sandbox.run_one({"name": "x", "unit_file": str(tmp_path / "u.service")}, "")
    assert res == {"check": "sandbox", "ok": False,
                   "detail": f"cannot translate {tmp_path / 'u.service'}: the unit has no ExecStart="}


def test_main_prints_the_result_after_the_marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The mode word dispatches; the caller reads only what follows the marker line."""
    monkeypatch.setattr(sandbox, "DRIVER_DIR", str(tmp_path / "no-driver"))
    monkeypatch.setitem(sys.modules, "torch", None)
    for var in sandbox.CACHE_VARS:
        monkeypatch.delenv(var, raising=False)
    assert sandbox.main(["probe", _probe_spec(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("\n" + sandbox.RESULT_MARKER + "\n") and out.endswith("\n")
    results = json.loads(out.split(sandbox.RESULT_MARKER + "\n", 1)[1])
    assert [r["check"] for r in results] == ["device", "device", "device", "cuda", "model-read"]
    assert sandbox.main(["probe"]) == 2 and sandbox.main(["other", "x"]) == 2
    assert "usage: onhost_sandbox.py run|probe SPEC" in capsys.readouterr().err
