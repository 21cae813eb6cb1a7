"""Each service: enabled, active, never restarted, listening, healthy, running the render.

The argv check reads ``/proc/<MainPID>/cmdline`` and compares it word for word with
the rendered ExecStart, so a unit edited and restarted by hand, or a stale process
from before a ``daemon-reload``, shows up even when the files match.
"""

from __future__ import annotations

import re
import shlex

from generator.live.context import HostContext
from generator.live.plan import ServicePlan
from generator.live.remote import RemoteError, onhost
from generator.live.results import CheckResult, result
from generator.load import json_text


def unit_state(ctx: HostContext, svc: ServicePlan) -> list[CheckResult]:
    """Enabled (or not, as the inventory says), active/running, NRestarts 0, no pending reload."""
    st = ctx.state(svc.unit)
    h, out = ctx.plan.name, []
    want_enabled = "enabled" if svc.enabled else "disabled"
    enabled = st.get("UnitFileState")
    out.append(result(enabled == want_enabled, h, svc.name, "enabled",
                      f"{svc.unit} is {enabled or 'not installed'}" +
                      ("" if enabled == want_enabled else f", expected {want_enabled}")))
    if not svc.enabled:
        return out
    active, sub = st.get("ActiveState"), st.get("SubState")
    ok = (active, sub) == ("active", "running")
    detail = f"{svc.unit} is {active} ({sub})"
    if not ok and st.get("Result") not in ("", "success"):
        detail += f", result {st.get('Result')}, exit status {st.get('ExecMainStatus')}"
    out.append(result(ok, h, svc.name, "active", detail))
    restarts = st.get("NRestarts") or "0"
    out.append(result(restarts == "0", h, svc.name, "no-restarts",
                      f"systemd restarted {svc.unit} {restarts} time(s)" +
                      ("" if restarts == "0" else ": it crashes and comes back (a restart loop)")))
    stale = st.get("NeedDaemonReload") == "yes"
    out.append(result(not stale, h, svc.name, "unit-loaded",
                      f"{svc.unit} changed on disk since systemd loaded it; run systemctl daemon-reload"
                      if stale else "systemd runs the unit file on disk"))
    return out


def _cgroup_pids(ctx: HostContext, svc: ServicePlan) -> set[str]:
    cgroup = ctx.state(svc.unit).get("ControlGroup")
    if not cgroup:
        return set()
    return set(onhost(ctx.host, ctx.plan.python, "pids", cgroup))


def listening(ctx: HostContext, svc: ServicePlan) -> CheckResult:
    """The rendered address:port is listening, and the service's own process holds it."""
    spec = f"tcp://{svc.listen}:{svc.port}"
    socket = ctx.host.socket(spec)
    if not socket.is_listening:
        return result(False, ctx.plan.name, svc.name, "listening", f"nothing listens on {svc.listen}:{svc.port}")
    owners = ctx.host.run("ss -Hltnp %s", f"sport = :{svc.port}").stdout
    pids = set(re.findall(r"pid=(\d+)", owners))
    mine = _cgroup_pids(ctx, svc)
    ok = bool(pids & mine)
    return result(ok, ctx.plan.name, svc.name, "listening",
                  f"{svc.listen}:{svc.port} is held by {svc.unit}" if ok else
                  f"{svc.listen}:{svc.port} is held by PID(s) {', '.join(sorted(pids)) or '?'}, "
                  f"not by {svc.unit}", owners.strip())


def http(ctx: HostContext, svc: ServicePlan) -> list[CheckResult]:
    """``/health`` answers 200 and ``/v1/models`` names the served model (asked on the host)."""
    h = ctx.plan.name
    try:
        health, models = onhost(ctx.host, ctx.plan.python, "http",
                                f"{svc.base_url}/health", f"{svc.base_url}/v1/models")
    except RemoteError as exc:
        return [result(False, h, svc.name, "health", "cannot ask the server", str(exc))]
    out = [result(health["status"] == 200, h, svc.name, "health",
                  f"GET {health['url']} -> {health['status'] or health.get('error')}")]
    ids: list[str] = []
    if models["status"] == 200:
        try:
            ids = [m.get("id", "") for m in json_text.loads(models["body"]).get("data", [])]
        except (ValueError, AttributeError):
            ids = []
    ok = svc.served_model_name in ids
    out.append(result(ok, h, svc.name, "served-model",
                      f"/v1/models names {svc.served_model_name}" if ok else
                      f"/v1/models -> {models['status'] or models.get('error')}, names {ids or 'nothing'}, "
                      f"expected {svc.served_model_name}", models.get("body", "")[:2000]))
    return out


def _first_difference(want: tuple[str, ...], have: list[str]) -> str:
    for i, (a, b) in enumerate(zip(want, have, strict=False)):  # lengths may differ: that is a difference too
        if a != b:
            return f"word {i}: rendered {a!r}, running {b!r}"
    return f"rendered {len(want)} words, running {len(have)}"


def process(ctx: HostContext, svc: ServicePlan) -> list[CheckResult]:
    """The main process's argv equals the rendered ExecStart; its environment has the render's."""
    h = ctx.plan.name
    pid = ctx.state(svc.unit).get("MainPID")
    if pid in ("", "0"):
        return [result(False, h, svc.name, "process-argv", f"{svc.unit} has no main process")]
    info = onhost(ctx.host, ctx.plan.python, "proc", pid)
    if "error" in info:
        return [result(False, h, svc.name, "process-argv", f"cannot read PID {pid}: {info['error']}")]
    argv = info["argv"]
    ok = tuple(argv) == svc.argv
    out = [result(ok, h, svc.name, "process-argv",
                  f"PID {pid} runs the rendered ExecStart ({len(argv)} words)" if ok else
                  f"PID {pid} argv differs: {_first_difference(svc.argv, argv)}",
                  f"rendered: {shlex.join(svc.argv)}\nrunning:  {shlex.join(argv)}")]
    env = dict(e.split("=", 1) for e in info["environ"] if "=" in e)
    wrong = [f"{k}: rendered {v!r}, process has {env.get(k)!r}" for k, v in svc.environment if env.get(k) != v]
    out.append(result(not wrong, h, svc.name, "process-environment",
                      f"PID {pid} has the rendered environment" if not wrong else
                      f"PID {pid} environment differs in {len(wrong)} variable(s)", "\n".join(wrong)))
    return out


def run(ctx: HostContext) -> list[CheckResult]:
    """Every service check, service by service."""
    out: list[CheckResult] = []
    for svc in ctx.plan.services:
        out += unit_state(ctx, svc)
        if not svc.enabled:
            continue
        out.append(listening(ctx, svc))
        out += http(ctx, svc)
        out += process(ctx, svc)
    return out
