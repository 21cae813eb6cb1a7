"""No service reads a retired path; declared secret files (env, credentials) exist, root's, 0600.

For retired paths the unit file, the environment file and the running process's
argv and environment must not mention one, and no process of the unit may have a
file under one open, mapped (shared libraries, mmap'ed weights) or as cwd/exe.
"""

from __future__ import annotations

import re

from generator.live.context import HostContext
from generator.live.plan import ServicePlan
from generator.live.remote import RemoteError, onhost
from generator.live.results import CheckResult, result


def _mentions(text: str, retired: tuple[str, ...]) -> list[str]:
    """The retired paths TEXT names as a whole path or a path prefix (not /database for /data)."""
    return [r for r in retired
            if re.search(r"(?<![\w./-])" + re.escape(r.rstrip("/")) + r"(?=/|$|[^\w.-])", text, re.MULTILINE)]


def retired_paths(ctx: HostContext, svc: ServicePlan) -> CheckResult:
    """Nothing of SVC refers to, or has open, a path under the host's retired paths."""
    p = ctx.plan
    found: list[str] = []
    for path in (svc.unit_path, svc.env_path):
        f = ctx.host.file(path)
        if f.exists:
            found += [f"{path} mentions {r}" for r in _mentions(f.content_string, p.retired)]
    st = ctx.state(svc.unit)
    pid = st.get("MainPID")
    try:
        if pid not in ("", "0"):
            info = onhost(ctx.host, p.python, "proc", pid)
            for word in info.get("argv", []) + info.get("environ", []):
                found += [f"PID {pid} argv/environment mentions {r}: {word}" for r in _mentions(word, p.retired)]
        if st.get("ControlGroup"):
            opened = onhost(ctx.host, p.python, "paths", st.get("ControlGroup"), *p.retired)
            found += [f"PID {h['pid']} has {h['path']} ({h['via']})" for h in opened["hits"]]
    except RemoteError as exc:
        return result(False, p.name, svc.name, "no-retired-paths", "cannot inspect the processes", str(exc))
    ok = not found
    return result(ok, p.name, svc.name, "no-retired-paths",
                  f"nothing under {', '.join(p.retired)}" if ok else f"{len(found)} use(s) of retired paths",
                  "\n".join(found))


def _secret_file(ctx: HostContext, svc: ServicePlan, path: str, check: str, content: str) -> list[CheckResult]:
    """``path`` exists as a regular file (not a symlink), owner root, mode 0600; never read."""
    f = ctx.host.file(path)
    if f.is_symlink:
        return [result(False, ctx.plan.name, svc.name, check,
                       f"{path} is a symlink; a secret file must be a regular file of its own",
                       f"replace it by the file itself: install -m 0600 -o root -g root /dev/null {path}")]
    if not f.exists:
        return [result(False, ctx.plan.name, svc.name, check,
                       f"{path} is missing; {svc.unit} reads it and will not start without it",
                       f"create it on the host as root: install -m 0600 -o root -g root /dev/null {path},"
                       f" then write {content} into it")]
    if not f.is_file:
        return [result(False, ctx.plan.name, svc.name, check, f"{path} is not a regular file")]
    problems = []
    if f.mode != 0o600:
        problems.append(f"mode {f.mode:04o}, must be 0600")
    if f.uid != 0:
        problems.append(f"owner {f.user} (uid {f.uid}), must be root")
    return [result(not problems, ctx.plan.name, svc.name, check,
                   f"{path} is root's, mode 0600" if not problems else f"{path}: {'; '.join(problems)}")]


def secret_env(ctx: HostContext, svc: ServicePlan) -> list[CheckResult]:
    """A declared ``/etc/sglang/secrets/<svc>.env`` exists, is a regular file, owner root, mode 0600.

    Only services with ``secret_env: true`` read one (a result only for them); an
    undeclared one is reported by the stray-file check. The content is never read.
    """
    if not svc.secret_env:
        return []
    return _secret_file(ctx, svc, svc.secret_env_path, "secret-env", "the secrets (KEY=value lines)")


def secret_config(ctx: HostContext, svc: ServicePlan) -> list[CheckResult]:
    """With ``secret_args``, ``/etc/credstore/sglang-<svc>.yaml`` exists: regular, root, 0600."""
    if not svc.secret_args:
        return []
    keys = ", ".join(f"{flag.removeprefix('--')}: VALUE" for flag in svc.secret_args)
    return _secret_file(ctx, svc, svc.credential_path, "secret-config", f"the YAML lines {keys}")


def run(ctx: HostContext) -> list[CheckResult]:
    """Retired-path and secret-file results for every service."""
    out: list[CheckResult] = []
    for svc in ctx.plan.services:
        if ctx.plan.retired:
            out.append(retired_paths(ctx, svc))
        out += secret_env(ctx, svc)
        out += secret_config(ctx, svc)
    return out
