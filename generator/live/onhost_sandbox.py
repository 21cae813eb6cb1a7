"""The sandbox check, on the host: run a probe inside a unit's own sandbox with systemd-run.

Standalone (standard library only, imports nothing from ``generator``): the playbook
runs it with Ansible's ``script`` module, ``gen preflight --sandbox`` copies it into a
temporary folder it creates and removes. Modes:

* ``run SPEC`` (root; SPEC is base64 JSON ``{"services": [...]}``): for each service,
  read its unit file (the staged copy: ``unit_file``), translate the sandbox into
  ``systemd-run -p`` properties (:func:`run_args`), and run this same file in ``probe``
  mode as the unit's User, with the unit's interpreter (ExecStart's first word), the
  script on stdin. Prints the results after the marker, keyed by service name.
* ``probe SPEC``: inside the sandbox: open the NVIDIA nodes of the placed GPUs, CUDA
  when torch is importable, read the model folder, write the cache folders.

systemd-run takes every sandbox setting of gen's units with ``-p`` but does not expand
unit specifiers, so ``%S %C %L %t %%`` are expanded here and any other one is refused.
Dropped on purpose (they decide how the server starts and restarts, not what it may
touch): Type, Exec*, Restart*, Timeout*, StartLimit*, RemainAfterExit, and RemoveIPC
(on the probe it would delete the service user's IPC objects when the probe stops).
"""

from __future__ import annotations

import base64
import errno
import json
import os
import re
import shlex
import struct
import subprocess
import sys

RESULT_MARKER = "=== gen on-host result ==="
DROP = re.compile(r"^(Type|Exec\w*|Restart\w*|Timeout\w*|StartLimit\w*|RemainAfterExit|RemoveIPC"
                  r"|Description|Documentation|After|Before|Wants|Requires|WantedBy|RestartPreventExitStatus)$")
# Specifiers of the system manager (systemd.unit(5)): state, cache, logs, runtime, a literal %.
SPECIFIERS = {"S": "/var/lib", "C": "/var/cache", "L": "/var/log", "t": "/run", "%": "%"}
CACHE_VARS = ("HOME", "XDG_CACHE_HOME", "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "CUDA_CACHE_PATH")
DRIVER_DIR = "/proc/driver/nvidia"
PROBE_TIMEOUT_S = 300


def emit(result: object) -> None:
    """Print RESULT as JSON after the marker line (the caller reads only that)."""
    sys.stdout.write("\n" + RESULT_MARKER + "\n" + json.dumps(result) + "\n")
    sys.stdout.flush()


# ------------------------------------------------------------------ translation


def logical_lines(text: str) -> list:
    """(section, 'Key=value') for each setting, continuation lines joined as systemd does."""
    out, section, buf = [], "", ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if not buf and (not line.strip() or line.lstrip()[0] in "#;"):
            continue
        if not buf and line.startswith("["):
            section = line.strip("[]")
            continue
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        out.append((section, (buf + line).strip()))
        buf = ""
    return out


def expand(value: str) -> str:
    """Expand the system manager's specifiers; refuse any other (it would pass literally)."""
    def one(match: "re.Match[str]") -> str:
        if match.group(1) not in SPECIFIERS:
            raise ValueError(f"specifier %{match.group(1)} in {value!r} is not expanded by systemd-run")
        return SPECIFIERS[match.group(1)]
    return re.sub(r"%(.)", one, value)


def run_args(unit_text: str, env_map: dict) -> list:
    """The ``-p`` arguments reproducing the unit's sandbox; ENV_MAP points env files at staged copies."""
    args: list = []
    for section, setting in logical_lines(unit_text):
        key, _, value = setting.partition("=")
        if section not in ("Service", "Unit") or DROP.match(key):
            continue
        if section == "Unit" and key != "RequiresMountsFor":
            continue
        if key == "EnvironmentFile":
            optional = value.startswith("-")
            path = value.lstrip("-")
            setting = f"EnvironmentFile={'-' if optional else ''}{env_map.get(path, path)}"
        args += ["-p", expand(setting)]
    return args


def interpreter(unit_text: str) -> str:
    """The unit's program (ExecStart's first word, minus systemd's prefix characters)."""
    for section, setting in logical_lines(unit_text):
        if section == "Service" and setting.startswith("ExecStart="):
            return shlex.split(setting.split("=", 1)[1])[0].lstrip("@-:+!")
    raise ValueError("the unit has no ExecStart=")


def run_one(svc: dict, source: str) -> list:
    """Run the probe for one service in its sandbox; its results, or one failure saying why."""
    try:
        with open(svc["unit_file"], encoding="utf-8") as handle:
            text = handle.read()
        props, python = run_args(text, svc.get("env_map") or {}), interpreter(text)
    except (OSError, ValueError) as exc:
        return [{"check": "sandbox", "ok": False, "detail": f"cannot translate {svc['unit_file']}: {exc}"}]
    spec = base64.b64encode(json.dumps(svc).encode()).decode()
    name = f"gen-sandbox-{svc['name']}-{os.getpid()}"
    cmd = ["systemd-run", "--wait", "--pipe", "--collect", "--quiet", f"--unit={name}", *props,
           "--", python, "-", "probe", spec]
    try:
        proc = subprocess.run(cmd, input=source.encode(), capture_output=True, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        subprocess.run(["systemctl", "stop", name], capture_output=True)
        return [{"check": "sandbox", "ok": False, "detail": f"the probe did not finish in {PROBE_TIMEOUT_S} s"}]
    out, err = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    if RESULT_MARKER not in out:
        return [{"check": "sandbox", "ok": False,
                 "detail": f"the probe gave no result in the sandbox (systemd-run exit {proc.returncode})\n"
                           f"{(out + err).strip()}\ncommand: {shlex.join(cmd[:-1])} SPEC"}]
    return json.loads(out.rsplit(RESULT_MARKER, 1)[1].strip())


def run(spec_b64: str) -> dict:
    """Every service of the spec, each in its own transient sandbox."""
    spec = json.loads(base64.b64decode(spec_b64))
    with open(os.path.abspath(__file__), encoding="utf-8") as handle:
        source = handle.read()  # the probe is this file again, fed to the unit's python on stdin
    return {"services": {s["name"]: run_one(s, source) for s in spec["services"]}}


# ------------------------------------------------------------------ the probe (in the sandbox)


def _minor(bus_id: str, fallback: int) -> tuple:
    """The /dev/nvidiaN minor of a GPU from the driver's own table; the nvidia-smi index otherwise."""
    short = bus_id.lower()[-12:]  # 00000000:01:00.0 -> 0000:01:00.0, the driver's spelling
    try:
        with open(os.path.join(DRIVER_DIR, "gpus", short, "information"), encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("Device Minor:"):
                    return int(line.split(":", 1)[1]), "the driver's Device Minor"
    except OSError:
        pass
    return fallback, "the GPU index (no driver table to read the minor from)"


def open_device(path: str, driver: bool, why: str) -> dict:
    """Open PATH read-write as CUDA does and classify the errno."""
    try:
        os.close(os.open(path, os.O_RDWR))
        return {"check": "device", "ok": True, "detail": f"{path} opened ({why})"}
    except OSError as exc:
        if exc.errno == errno.EPERM:
            detail = f"the sandbox hides {path} (EPERM from the device cgroup: DeviceAllow= does not cover it)"
        elif exc.errno == errno.ENOENT:
            detail = (f"{path} does not exist (load the module before the service starts: NoNewPrivileges= "
                      "keeps nvidia-modprobe from creating it)")
        elif exc.errno == errno.ENXIO and not driver:
            return {"check": "device", "ok": True, "detail": f"{path}: ENXIO, the device cgroup let the open "
                                                             f"through; no NVIDIA driver is loaded here ({why})"}
        else:
            detail = f"{path}: {errno.errorcode.get(exc.errno or 0, exc.errno)} {exc.strerror}"
        return {"check": "device", "ok": False, "detail": detail}


def devices(svc: dict) -> list:
    """nvidiactl, nvidia-uvm and the node of each placed GPU."""
    driver = os.path.isdir(DRIVER_DIR)
    out = [open_device("/dev/nvidiactl", driver, "control node"), open_device("/dev/nvidia-uvm", driver, "uvm")]
    for bus, index in zip(svc["gpu_bus_ids"], svc["gpu_indices"]):  # noqa: B905  (the host's Python may be older than 3.10)
        minor, why = _minor(bus, index)
        out.append(open_device(f"/dev/nvidia{minor}", driver, f"GPU {bus}, minor from {why}"))
    return out


def pci_key(bus_id: str) -> tuple:
    """(domain, bus, device, function) of a PCI bus id in any of CUDA's/NVML's spellings."""
    domain, bus, rest = bus_id.strip().split(":")
    device, function = rest.split(".")
    return int(domain, 16), int(bus, 16), int(device, 16), int(function, 16)


def _spell(key: tuple) -> str:
    return "%08X:%02X:%02X.%X" % key


def _driver_bus_id(ordinal: int) -> str:
    """The CUDA driver's bus id of device ORDINAL (for a torch without pci_* properties)."""
    import ctypes  # the driver library torch itself loaded; same CUDA_VISIBLE_DEVICES view
    lib = ctypes.CDLL("libcuda.so.1")
    dev, buf = ctypes.c_int(), ctypes.create_string_buffer(32)
    if lib.cuInit(0) or lib.cuDeviceGet(ctypes.byref(dev), ordinal) or lib.cuDeviceGetPCIBusId(buf, 32, dev):
        raise RuntimeError(f"the CUDA driver gives no PCI bus id for device {ordinal}")
    return buf.value.decode()


def _bus_id(torch: object, ordinal: int) -> tuple:
    """The PCI bus id CUDA sees for visible device ORDINAL, as a pci_key."""
    props = torch.cuda.get_device_properties(ordinal)  # type: ignore[attr-defined]
    if all(hasattr(props, a) for a in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
        return props.pci_domain_id, props.pci_bus_id, props.pci_device_id, 0
    return pci_key(_driver_bus_id(ordinal))


def cuda(svc: dict) -> list:
    """Where torch is importable: CUDA initializes and sees exactly the placed GPUs (by PCI bus id)."""
    try:
        import torch  # the host's own SGLang venv
    except Exception:  # noqa: BLE001  (torch absent or broken: CUDA is not checked, and the result says so)
        return [{"check": "cuda", "ok": True, "detail": "torch is not importable here: CUDA not checked"}]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "(unset)")
    try:
        torch.cuda.init()
        seen = [_bus_id(torch, i) for i in range(torch.cuda.device_count())]
    except Exception as exc:  # noqa: BLE001  (any CUDA failure is the finding, with its message)
        return [{"check": "cuda", "ok": False,
                 "detail": f"CUDA init failed in the sandbox (CUDA_VISIBLE_DEVICES={visible}): {exc}"}]
    # Function 0 on both sides: torch reports no PCI function, and a GPU is function 0.
    want = sorted(pci_key(b)[:3] + (0,) for b in svc["gpu_bus_ids"])
    got = sorted(seen)
    seen_text = ", ".join(_spell(k) for k in seen) or "no GPU"
    if got == want:
        return [{"check": "cuda", "ok": True, "detail": f"CUDA sees exactly the placed GPUs: {seen_text}"}]
    missing = [_spell(k) for k in want if k not in got]
    extra = [_spell(k) for k in got if k not in want]
    return [{"check": "cuda", "ok": False,
             "detail": f"CUDA in the sandbox sees {len(got)} GPU(s) ({seen_text}) with "
                       f"CUDA_VISIBLE_DEVICES={visible}, placed {len(want)} ({', '.join(_spell(k) for k in want)})"
                       + (f"; not visible: {', '.join(missing)}" if missing else "")
                       + (f"; not placed: {', '.join(extra)}" if extra else "")}]


def read_model(folder: str) -> dict:
    """config.json and one shard header must be readable by the service user."""
    try:
        with open(os.path.join(folder, "config.json"), "rb") as handle:
            json.loads(handle.read())
        shards = sorted(n for n in os.listdir(folder) if n.endswith(".safetensors"))
        if not shards:
            return {"check": "model-read", "ok": False, "detail": f"{folder}: no *.safetensors"}
        with open(os.path.join(folder, shards[0]), "rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            json.loads(handle.read(length))
        return {"check": "model-read", "ok": True, "detail": f"read {folder}/config.json and {shards[0]}'s header"}
    except (OSError, ValueError, struct.error) as exc:
        return {"check": "model-read", "ok": False, "detail": f"{folder}: {type(exc).__name__}: {exc}"}


def write_folder(var: str, folder: str) -> dict:
    """Create FOLDER as Triton/Inductor would and write a file in it."""
    try:
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f".gen-sandbox-probe-{os.getpid()}")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("ok")
        os.unlink(path)
        return {"check": "cache-write", "ok": True, "detail": f"{var}={folder} writable"}
    except OSError as exc:
        return {"check": "cache-write", "ok": False, "detail": f"{var}={folder}: {exc.strerror}"}


def probe(spec_b64: str) -> list:
    """Everything the server needs from its sandbox, as this process sees it."""
    svc = json.loads(base64.b64decode(spec_b64))
    results = devices(svc) + cuda(svc) + [read_model(svc["model"])]
    results += [write_folder(v, os.environ[v]) for v in CACHE_VARS if os.environ.get(v)]
    return results


def main(argv: list) -> int:
    """Dispatch on the mode word; the result goes to stdout after the marker."""
    if len(argv) != 2 or argv[0] not in ("run", "probe"):
        print("usage: onhost_sandbox.py run|probe SPEC", file=sys.stderr)
        return 2
    emit(run(argv[1]) if argv[0] == "run" else probe(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
