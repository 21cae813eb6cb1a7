"""The sandbox translation (generator/live/onhost_sandbox.py): unit file -> systemd-run -p list.

The probe itself runs in a real sandbox in tests/live/test_rollout_group.py; here the
pure part runs on the example repo's rendered units.
"""

from __future__ import annotations

import base64
import json
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
