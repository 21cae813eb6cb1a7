"""Managed files: each equals the rendered one, none is stray, systemd accepts each unit.

pytest-testinfra style: ``host.file(path).sha256sum`` against the sha256 of the text
gen rendered, with a unified diff of the host's file when they differ.
"""

from __future__ import annotations

import difflib
import hashlib
import posixpath

from generator.live.context import HostContext
from generator.live.plan import MANAGED_GLOBS, ExpectedFile
from generator.live.results import HOST_WIDE, CheckResult, result


def _owner(ctx: HostContext, path: str) -> str:
    """The service a managed file belongs to, or ``-`` for host-wide files."""
    for svc in ctx.plan.services:
        if path in (svc.unit_path, svc.env_path):
            return svc.name
    return HOST_WIDE


def _diff(expected: ExpectedFile, live: str) -> str:
    """Unified diff from the rendered text to the host's text."""
    lines = difflib.unified_diff(expected.text.splitlines(keepends=True), live.splitlines(keepends=True),
                                 fromfile=f"rendered {expected.path}", tofile=f"live {expected.path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def file_content(ctx: HostContext, expected: ExpectedFile) -> CheckResult:
    """The host's file has exactly the rendered bytes (sha256), else a diff as evidence."""
    name = _owner(ctx, expected.path)
    live = ctx.host.file(expected.path)
    if not live.exists:
        return result(False, ctx.plan.name, name, "file-content", f"{expected.path} is missing")
    want = hashlib.sha256(expected.text.encode("utf-8")).hexdigest()
    have = live.sha256sum
    if have == want:
        return result(True, ctx.plan.name, name, "file-content", f"{expected.path} sha256 {want[:12]}")
    return result(False, ctx.plan.name, name, "file-content",
                  f"{expected.path} differs from the render (sha256 {have[:12]}, rendered {want[:12]})",
                  _diff(expected, live.content_string))


def _listing(ctx: HostContext, folder: str, pattern: str, kind: str) -> list[str]:
    """Paths in FOLDER (not below) whose name matches PATTERN, of find type KIND."""
    out = ctx.host.run("find %s -mindepth 1 -maxdepth 1 -type %s -name %s", folder, kind, pattern)
    return sorted(line for line in out.stdout.splitlines() if line)


def stray_files(ctx: HostContext) -> CheckResult:
    """No unit or env file gen did not render for this host, and no drop-in on a managed unit."""
    rendered = {f.path for f in ctx.plan.files}
    # A secret file is the operator's, not rendered: allowed only where a unit reads it.
    secrets = ({svc.secret_env_path for svc in ctx.plan.services if svc.secret_env}
               | {svc.credential_path for svc in ctx.plan.services if svc.secret_args})
    stray: list[str] = []
    for folder, pattern in MANAGED_GLOBS:
        for path in _listing(ctx, folder, pattern, "f") + _listing(ctx, folder, pattern, "l"):
            if path not in rendered and path not in secrets:
                stray.append(path)
    # A drop-in changes what the unit runs, and nobody reviewed it.
    for folder in ("/etc/systemd/system", "/run/systemd/system"):
        for dropin_dir in _listing(ctx, folder, "sglang-*.service.d", "d"):
            stray += _listing(ctx, dropin_dir, "*.conf", "f")
    ok = not stray
    return result(ok, ctx.plan.name, HOST_WIDE, "no-stray-files",
                  "only rendered units and env files" if ok else
                  f"{len(stray)} file(s) gen does not render for {ctx.plan.name}: {', '.join(stray)}",
                  "" if ok else "\n".join(stray) + "\n(remove them, or add their service to the inventory;"
                  " secret variables live in /etc/sglang/secrets/<svc>.env, read when the service has"
                  " `secret_env: true`)")


def unit_verifies(ctx: HostContext, unit_path: str, service: str) -> CheckResult:
    """``systemd-analyze verify`` on the host prints nothing for the installed unit."""
    out = ctx.host.run("systemd-analyze verify %s", unit_path)
    said = (out.stdout + out.stderr).strip()
    ok = out.rc == 0 and not said
    return result(ok, ctx.plan.name, service, "systemd-analyze-verify",
                  posixpath.basename(unit_path) + (" is clean" if ok else f": exit {out.rc}, said something"),
                  said)


def run(ctx: HostContext) -> list[CheckResult]:
    """Every file check of the host."""
    out = [file_content(ctx, f) for f in ctx.plan.files]
    out.append(stray_files(ctx))
    out += [unit_verifies(ctx, s.unit_path, s.name) for s in ctx.plan.services]
    return out

