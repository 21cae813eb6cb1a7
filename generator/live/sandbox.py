"""``gen preflight --sandbox``: a probe inside each rendered unit's own sandbox on the host.

The on-host script (:mod:`generator.live.onhost_sandbox`) translates a unit file into
``systemd-run -p`` properties and runs its probe as the unit's User with the unit's
interpreter: the NVIDIA nodes of the placed GPUs, CUDA where torch is importable, the
model folder, the cache folders. Here the unit and environment file are the *rendered*
ones (what the next rollout installs), sent with the script in one bootstrap program
on the ssh stdin; it puts them in a fresh ``/run/gen-sandbox.*`` folder (root only),
runs the check and removes the folder again, so nothing is left on the host.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path

from generator.live.plan import HostPlan, ServicePlan
from generator.live.preflight import PreflightReport, select
from generator.live.remote import RemoteError, parse_result
from generator.live.results import HOST_WIDE, CheckResult, result
from generator.live.target import Target, run_with_stdin

SCRIPT = Path(__file__).with_name("onhost_sandbox.py")

# Runs on the host (stdin of `python -`): writes the files, runs the check, cleans up.
BOOTSTRAP = """\
import base64, json, os, shutil, subprocess, sys, tempfile
doc = json.loads(base64.b64decode(sys.argv[1]))
folder = tempfile.mkdtemp(prefix="gen-sandbox.", dir="/run")
try:
    for name, text in doc["files"].items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.write(text)
    for svc in doc["spec"]["services"]:
        svc["unit_file"] = os.path.join(folder, svc["unit_file"])
        svc["env_map"] = {live: os.path.join(folder, name) for live, name in svc["env_map"].items()}
    spec = base64.b64encode(json.dumps(doc["spec"]).encode()).decode()
    proc = subprocess.run([sys.executable, os.path.join(folder, "sandbox.py"), "run", spec])
    sys.exit(proc.returncode)
finally:
    shutil.rmtree(folder, ignore_errors=True)
"""


def _texts(plan: HostPlan) -> dict[str, str]:
    return {f.path: f.text for f in plan.files}


def payload(plan: HostPlan, services: Sequence[ServicePlan]) -> str:
    """The bootstrap's argument: the script, each service's rendered unit and env file, the spec."""
    texts = _texts(plan)
    files = {"sandbox.py": SCRIPT.read_text(encoding="utf-8")}
    spec = []
    for svc in services:
        unit, env = f"{svc.name}.service", f"{svc.name}.env"
        files[unit], files[env] = texts[svc.unit_path], texts[svc.env_path]
        spec.append({"name": svc.name, "unit_file": unit, "env_map": {svc.env_path: env},
                     "gpu_bus_ids": list(svc.gpu_bus_ids),
                     "gpu_indices": [int(i) for i in svc.cuda_visible_devices.split(",") if i],
                     "model": svc.model_path})
    doc = {"files": files, "spec": {"services": spec}}
    return base64.b64encode(json.dumps(doc, sort_keys=True).encode()).decode()


def interpret(plan: HostPlan, services: Sequence[ServicePlan], rc: int, stdout: str,
              stderr: str) -> PreflightReport:
    """Results per service and check; no result at all is one FAIL with the output."""
    try:
        doc = parse_result(stdout)
    except (RemoteError, ValueError):
        return PreflightReport(plan.name, (result(False, plan.name, HOST_WIDE, "sandbox",
                                                  f"the sandbox check gave no result (exit {rc})",
                                                  (stdout + stderr).strip()),), ())
    out: list[CheckResult] = []
    for svc in services:
        for item in doc["services"].get(svc.name, []):
            detail, _, evidence = item["detail"].partition("\n")
            out.append(result(item["ok"], plan.name, svc.name, f"sandbox-{item['check']}", detail,
                              item["detail"] if evidence else ""))
    return PreflightReport(plan.name, tuple(out), ())


def sandbox_host(plan: HostPlan, target: Target, service: str | None = None,
                 timeout: float = 600.0) -> PreflightReport:
    """Run the sandbox check on the host over ssh for all services or the one named."""
    services = select(plan, service)
    proc = run_with_stdin(target, [plan.python, "-", payload(plan, services)], BOOTSTRAP.encode(), timeout)
    return interpret(plan, services, proc.returncode, proc.stdout.decode("utf-8", "replace"),
                     proc.stderr.decode("utf-8", "replace"))
