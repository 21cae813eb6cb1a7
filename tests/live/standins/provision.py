"""Put the STAND-INs on a booted test host: a stand-in SGLang venv, nvidia-smi, model, GPU nodes.

Standard library only: the live tests (tests/live/deploy.py) and ``scripts/test-host boot
--standin`` (an operator's local test host) both provision a container with it, the same
way. What this machine cannot have is replaced, and every replacement says STAND-IN:

* ``/opt/standin-sglang``: a venv whose ``sglang.launch_server`` is
  :mod:`standin_sglang_server` (it parses argv with the pin's flag catalog and serves
  ``/health`` and ``/v1/models``) and whose ``sglang.srt.server_args`` is
  :mod:`standin_server_args` (what gen's preflight calls);
* ``/usr/local/bin/nvidia-smi``: :mod:`standin_nvidia_smi`, listing ``/etc/standin-nvidia-smi/gpus.csv``;
* ``/shared/models/standin-llama`` and ``-eagle3``: fake safetensors checkpoints (:mod:`fake_model`);
* ``/dev/nvidia*``: character devices with NVIDIA's majors and no driver behind them.

Everything travels as one tar stream over ssh (``tar -x -C /`` on the host).
"""

from __future__ import annotations

import io
import tarfile
import tempfile
from pathlib import Path

STANDINS = Path(__file__).resolve().parent
ROOT = STANDINS.parents[2]
VENV = "/opt/standin-sglang"
PYTHON_MINOR = "3.11"  # Debian bookworm's python3, the test image's
SITE = f"{VENV}/lib/python{PYTHON_MINOR}/site-packages"
MODEL_DIR = "/shared/models/standin-llama"
DRAFT_DIR = "/shared/models/standin-llama-eagle3"
GPUS_CSV = "/etc/standin-nvidia-smi/gpus.csv"
NVIDIA_SMI_CAPTURES = "/usr/local/lib/standin-nvidia-smi/nvidia_smi_outputs.py"  # standin_nvidia_smi.CAPTURES
LOAD_SECONDS_FILE = "/etc/standin-sglang/load-seconds"  # the stand-in's time to become healthy
NVIDIA_MAJOR, UVM_MAJOR = 195, 511
NODES = {"/dev/nvidia0": (NVIDIA_MAJOR, 0), "/dev/nvidiactl": (NVIDIA_MAJOR, 255),
         "/dev/nvidia-uvm": (UVM_MAJOR, 0), "/dev/nvidia1": (NVIDIA_MAJOR, 1)}
Files = dict[str, tuple[bytes, int]]  # absolute path on the host -> (content, mode)


def dist_info(version: str) -> Files:
    """A stand-in ``sglang-<version>.dist-info`` so importlib.metadata reports VERSION."""
    meta = f"Metadata-Version: 2.1\nName: sglang\nVersion: {version}\nSummary: STAND-IN\n"
    return {f"{SITE}/sglang-{version}.dist-info/METADATA": (meta.encode(), 0o644)}


def _tree(folder: Path, dest: str) -> Files:
    """Every file under FOLDER, mapped to DEST on the host, mode 0644."""
    return {f"{dest}/{p.relative_to(folder)}": (p.read_bytes(), 0o644) for p in folder.rglob("*") if p.is_file()}


def model_files() -> Files:
    """The fake model folders alone (restored after a shard is removed)."""
    try:  # in the test package (tests.live.standins), or loaded by path (scripts/test-host)
        from .fake_model import write_eagle3_draft, write_model
    except ImportError:
        from fake_model import write_eagle3_draft, write_model  # type: ignore[import-not-found,no-redef]

    with tempfile.TemporaryDirectory() as tmp:
        return _tree(write_model(Path(tmp) / "m"), MODEL_DIR) | _tree(write_eagle3_draft(Path(tmp) / "d"), DRAFT_DIR)


def nvidia_smi_files() -> Files:
    """The stand-in nvidia-smi, and the real captures it prints the ``topo -m`` legend from."""
    return {"/usr/local/bin/nvidia-smi": ((STANDINS / "standin_nvidia_smi.py").read_bytes(), 0o755),
            NVIDIA_SMI_CAPTURES: ((ROOT / "tests" / "nvidia_smi_outputs.py").read_bytes(), 0o644)}


def standin_files(pin: str, version: str, gpus_csv: str) -> Files:
    """The stand-in venv (parsing with catalogs/sglang/PIN.json), nvidia-smi, its GPU list and the fake model."""
    files: Files = {
        f"{VENV}/pyvenv.cfg": (b"home = /usr/bin\ninclude-system-site-packages = false\n", 0o644),
        f"{SITE}/sglang/__init__.py": (b'"""STAND-IN sglang package for the live tests."""\n', 0o644),
        f"{SITE}/sglang/launch_server.py": ((STANDINS / "standin_sglang_server.py").read_bytes(), 0o644),
        f"{SITE}/sglang/srt/__init__.py": (b'"""STAND-IN sglang.srt for the live tests."""\n', 0o644),
        f"{SITE}/sglang/srt/server_args.py": ((STANDINS / "standin_server_args.py").read_bytes(), 0o644),
        f"{SITE}/standin_catalog.json": ((ROOT / "catalogs" / "sglang" / f"{pin}.json").read_bytes(), 0o644),
        GPUS_CSV: (gpus_csv.encode(), 0o644),
    }
    return files | nvidia_smi_files() | dist_info(version) | model_files()


def tar_stream(files: Files) -> bytes:
    """FILES as one tar archive, paths relative to / (what ``tar -x -C /`` on the host unpacks)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, (data, mode) in sorted(files.items()):
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def setup_script() -> str:
    """The shell steps after the files are in place: the service user, the venv's python, /data."""
    return ("id sglang >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin sglang;"
            f" mkdir -p {VENV}/bin /data; ln -sfn /usr/bin/python3 {VENV}/bin/python")


def gpu_nodes_script() -> str:
    """STAND-IN GPU device nodes: NVIDIA's majors, no driver behind them (an allowed open is ENXIO),
    so the sandbox check and DeviceAllow= have real nodes to open."""
    nodes = "; ".join(f"mknod -m 666 {p} c {ma} {mi}" for p, (ma, mi) in NODES.items())
    return f"rm -f /dev/nvidia*; {nodes}"
