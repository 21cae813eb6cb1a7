"""``gen preflight``: the host's own SGLang judges the rendered argv, without a server.

The on-host script (:mod:`generator.live.onhost`, mode ``preflight``) is sent on the
ssh stdin to the inventory's interpreter (``python - preflight PAYLOAD``), so nothing
is copied to the host. It runs SGLang's parser and ``ServerArgs`` validation on each
service's argv and checks the checkpoints (shards, EAGLE3 drafter tensor names).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass

from generator.live.checkpoint_compare import compare_snapshot, snapshot_detail
from generator.live.plan import HostPlan, ServicePlan
from generator.live.remote import RemoteError, onhost_source, parse_result
from generator.live.results import HOST_WIDE, CheckResult, result
from generator.live.target import Target, run_with_stdin

# argv[0:3] is "<python> -m sglang.launch_server"; SGLang's parser sees the rest.
PROGRAM_WORDS = 3


@dataclass(frozen=True)
class PreflightReport:
    """Results per check, SGLang's version as the host reports it, and notes."""

    host: str
    results: tuple[CheckResult, ...]
    notes: tuple[str, ...]

    @property
    def failed(self) -> bool:
        """True when any check failed."""
        return any(r.failed for r in self.results)


def payload(services: Sequence[ServicePlan]) -> str:
    """The base64 JSON the on-host script reads: per service its flags and checkpoints."""
    doc = {"services": [{
        "name": s.name, "argv": list(s.argv[PROGRAM_WORDS:]), "model_path": s.model_path,
        "draft_path": s.draft_path, "algorithm": s.speculative_algorithm,
    } for s in services]}
    return base64.b64encode(json.dumps(doc).encode()).decode()


def command(python: str, services: Sequence[ServicePlan]) -> list[str]:
    """The remote command: the host's python reading the script from stdin."""
    return [python, "-", "preflight", payload(services)]


def interpret(plan: HostPlan, services: Sequence[ServicePlan], rc: int, stdout: str,
              stderr: str) -> PreflightReport:
    """Turn the on-host script's output into results (a crash is one FAIL with its output)."""
    try:
        doc = parse_result(stdout)
    except (RemoteError, ValueError):
        return PreflightReport(plan.name, (result(
            False, plan.name, HOST_WIDE, "preflight", f"{plan.python} gave no result (exit {rc})",
            (stdout + stderr).strip()),), ())
    results = [result(doc.get("sglang_version") == plan.sglang_version, plan.name, HOST_WIDE,
                      "sglang-version", f"sglang {doc.get('sglang_version')} at {plan.python}"
                      + ("" if doc.get("sglang_version") == plan.sglang_version
                         else f", pinned {plan.sglang_version}"))]
    for svc in services:
        for item in doc["services"].get(svc.name, []):
            detail, _, evidence = item["detail"].partition("\n")
            results.append(result(item["ok"], plan.name, svc.name, item["check"], detail,
                                  item["detail"] if evidence else ""))
            expect = {"checkpoint-model": svc.model_expect, "checkpoint-draft": svc.draft_expect}.get(item["check"])
            if expect is not None and item["ok"] and isinstance(item.get("found"), dict):
                folder = svc.model_path if item["check"] == "checkpoint-model" else (svc.draft_path or "")
                differs = compare_snapshot(item["found"], expect)
                results.append(result(not differs, plan.name, svc.name, f"{item['check']}-snapshot",
                                      snapshot_detail(folder, expect, differs), "\n".join(differs)))
    return PreflightReport(plan.name, tuple(results), tuple(doc.get("notes", [])))


def select(plan: HostPlan, service: str | None) -> list[ServicePlan]:
    """All services of the plan, or the one named (KeyError for an unknown name)."""
    return list(plan.services) if service is None else [plan.service(service)]


def preflight_host(plan: HostPlan, target: Target, service: str | None = None,
                   timeout: float = 300.0) -> PreflightReport:
    """Run preflight on the host over ssh for all services or the one named."""
    services = select(plan, service)
    proc = run_with_stdin(target, command(plan.python, services), onhost_source().encode(), timeout)
    return interpret(plan, services, proc.returncode, proc.stdout.decode("utf-8", "replace"),
                     proc.stderr.decode("utf-8", "replace"))
