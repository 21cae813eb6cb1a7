"""The SGLang install: the pinned version (importlib.metadata) and, if named, the commit.

Asked of the inventory's own interpreter, the one every unit runs, so a second
SGLang elsewhere on the host cannot make this pass.
"""

from __future__ import annotations

from generator.live.context import HostContext
from generator.live.results import HOST_WIDE, CheckResult, result

VERSION_SNIPPET = "import importlib.metadata as m; print(m.version('sglang'))"


def version(ctx: HostContext) -> CheckResult:
    """``importlib.metadata.version('sglang')`` equals the catalog's version."""
    p = ctx.plan
    out = ctx.host.run("%s -c %s", p.python, VERSION_SNIPPET)
    have = out.stdout.strip()
    if out.rc != 0:
        return result(False, p.name, HOST_WIDE, "sglang-version",
                      f"{p.python} cannot report the sglang version (exit {out.rc})", out.stderr.strip())
    ok = have == p.sglang_version
    return result(ok, p.name, HOST_WIDE, "sglang-version",
                  f"sglang {have} at {p.python}" + ("" if ok else f", pinned {p.sglang_version}"))


def commit(ctx: HostContext) -> CheckResult:
    """``git -C source_dir rev-parse HEAD`` is the pinned commit (a prefix is enough)."""
    p = ctx.plan
    assert p.sglang_commit is not None
    if not p.source_dir:
        return result(False, p.name, HOST_WIDE, "sglang-commit",
                      f"commit {p.sglang_commit} is pinned but the inventory names no sglang.source_dir")
    # safe.directory: the checkout may belong to another user than the one gen logs in as.
    out = ctx.host.run("git -c safe.directory=%s -C %s rev-parse HEAD", p.source_dir, p.source_dir)
    have = out.stdout.strip()
    if out.rc != 0:
        return result(False, p.name, HOST_WIDE, "sglang-commit",
                      f"git rev-parse in {p.source_dir} failed (exit {out.rc})", out.stderr.strip())
    ok = have.startswith(p.sglang_commit)
    return result(ok, p.name, HOST_WIDE, "sglang-commit",
                  f"{p.source_dir} is at {have}" + ("" if ok else f", pinned {p.sglang_commit}"))


def run(ctx: HostContext) -> list[CheckResult]:
    """The version check, and the commit check when a commit is pinned."""
    out = [version(ctx)]
    if ctx.plan.sglang_commit:
        out.append(commit(ctx))
    return out
