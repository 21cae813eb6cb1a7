"""The sandbox probe's CUDA branch, run as a real process against the torch CUDA stand-in.

There is no GPU here, so ``tests/live/standins/standin_torch`` (named as a stand-in)
replaces torch's CUDA part only: it enumerates a stand-in table of PCI bus ids through
``CUDA_VISIBLE_DEVICES`` as CUDA does. The probe is the real on-host script
(generator/live/onhost_sandbox.py): started as a subprocess with the stand-in on PYTHONPATH
(``process=True``: the script's entry point and its result line), or called in this process
with the same environment, which is what a mutation run (bench/mutation.py) can see into.
Its CUDA result must compare PCI bus ids, not counts.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.live import onhost_sandbox as sandbox

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "generator/live/onhost_sandbox.py"
STANDIN = ROOT / "tests/live/standins/standin_torch"
MARKER = "=== gen on-host result ==="
# llm-two's GPUs (hosts/llm-two.yaml), in PCI order.
TABLE = ["00000000:01:00.0", "00000000:21:00.0", "00000000:41:00.0", "00000000:61:00.0"]


@pytest.fixture(params=[False, True], ids=["in-process", "process"])
def process(request: pytest.FixtureRequest) -> bool:
    """Each case both ways: in this process, and as the script the playbook runs."""
    return bool(request.param)


def _cuda(tmp_path: Path, placed: list[str], visible: str | None, standin: bool = True,
          process: bool = False, **extra: str) -> dict[str, object]:
    """Run the probe with the stand-in (in a subprocess if PROCESS); its one ``cuda`` result."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GEN_STANDIN_GPUS": ",".join(TABLE),
           "CUDA_DEVICE_ORDER": "PCI_BUS_ID", **extra}
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    spec = {"gpu_bus_ids": placed, "gpu_indices": list(range(len(placed))), "model": str(tmp_path)}
    if not process:
        return _cuda_here(spec, env, standin)
    if standin:
        env["PYTHONPATH"] = str(STANDIN)
    arg = base64.b64encode(json.dumps(spec).encode()).decode()
    proc = subprocess.run([sys.executable, str(PROBE), "probe", arg], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0 and MARKER in proc.stdout, proc.stdout + proc.stderr
    results = json.loads(proc.stdout.rsplit(MARKER, 1)[1])
    (cuda,) = [r for r in results if r["check"] == "cuda"]
    return cuda


def _cuda_here(spec: dict[str, object], env: dict[str, str], standin: bool) -> dict[str, object]:
    """``sandbox.cuda(spec)`` in this process, under ENV only, with the stand-in torch (or none)."""
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            patch.delenv(name)
        for name, value in env.items():
            patch.setenv(name, value)
        if standin:
            patch.syspath_prepend(str(STANDIN))
            patch.delitem(sys.modules, "torch", raising=False)  # imported afresh, dropped again after
        else:
            patch.setitem(sys.modules, "torch", None)  # ``import torch`` raises ImportError
        (cuda,) = sandbox.cuda(spec)
    assert isinstance(cuda, dict)
    return cuda


def test_the_rendered_visible_devices_are_the_placed_gpus(tmp_path: Path, process: bool) -> None:
    """llm-two's qwen as rendered: its env file's CUDA_VISIBLE_DEVICES shows the four placed GPUs."""
    env_file = (ROOT / "output/llm-two/etc/sglang/qwen.env").read_text()
    (visible,) = [line.split("=", 1)[1].strip('"') for line in env_file.splitlines()
                  if line.startswith("CUDA_VISIBLE_DEVICES=")]
    cuda = _cuda(tmp_path, TABLE, visible, process=process)
    assert cuda == {"check": "cuda", "ok": True, "detail": "CUDA sees exactly the placed GPUs: "
                    "00000000:01:00.0, 00000000:21:00.0, 00000000:41:00.0, 00000000:61:00.0"}


def test_another_gpu_with_the_same_count_fails_by_bus_id(tmp_path: Path, process: bool) -> None:
    cuda = _cuda(tmp_path, [TABLE[0], TABLE[1]], "2,1", process=process)
    assert cuda["ok"] is False
    assert cuda["detail"] == ("CUDA in the sandbox sees 2 GPU(s) (00000000:41:00.0, 00000000:21:00.0) with "
                              "CUDA_VISIBLE_DEVICES=2,1, placed 2 (00000000:01:00.0, 00000000:21:00.0); "
                              "not visible: 00000000:01:00.0; not placed: 00000000:41:00.0")


@pytest.mark.parametrize(("visible", "seen"), [("0", 1), (None, 4), ("0,1,x,2", 2)])
def test_a_count_mismatch_fails(tmp_path: Path, visible: str | None, seen: int, process: bool) -> None:
    cuda = _cuda(tmp_path, [TABLE[0], TABLE[1], TABLE[2]], visible, process=process)
    assert cuda["ok"] is False
    assert str(cuda["detail"]).startswith(f"CUDA in the sandbox sees {seen} GPU(s)")
    assert f"CUDA_VISIBLE_DEVICES={visible if visible is not None else '(unset)'}, placed 3" in str(cuda["detail"])


def test_spelling_of_the_bus_id_does_not_matter(tmp_path: Path, process: bool) -> None:
    """gen writes the 8-digit domain; NVML and the driver also use 4 digits and lower case."""
    assert _cuda(tmp_path, ["0000:a1:00.0"], "0", GEN_STANDIN_GPUS="00000000:A1:00.0", process=process)["ok"] is True


def test_no_visible_device_fails_cuda_init(tmp_path: Path, process: bool) -> None:
    cuda = _cuda(tmp_path, [TABLE[0]], "", process=process)
    assert cuda["ok"] is False
    assert cuda["detail"] == ("CUDA init failed in the sandbox (CUDA_VISIBLE_DEVICES=): "
                              "No CUDA GPUs are available (stand-in: no visible device)")


def test_a_torch_without_pci_fields_asks_the_driver(tmp_path: Path, process: bool) -> None:
    """No driver here: the failure says so instead of passing on a count."""
    cuda = _cuda(tmp_path, [TABLE[0]], "0", GEN_STANDIN_TORCH_NO_PCI="1", process=process)
    assert cuda["ok"] is False
    assert "CUDA init failed in the sandbox (CUDA_VISIBLE_DEVICES=0): libcuda.so.1" in str(cuda["detail"])


def test_without_torch_cuda_is_not_checked(tmp_path: Path, process: bool) -> None:
    cuda = _cuda(tmp_path, [TABLE[0]], "0", standin=False, process=process)
    assert cuda == {"check": "cuda", "ok": True, "detail": "torch is not importable here: CUDA not checked"}
