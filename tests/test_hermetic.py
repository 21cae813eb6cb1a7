"""The test suite writes nothing into the user's home, and still finds the heavy parts.

gen keeps nothing between runs, so a command writes only into the repository it is given.
The CLI runs here in a process whose HOME is an empty folder, with the session's
environment otherwise: nothing may appear under that home. A control process that does
write under ``~/.cache`` shows the check sees such a write. ``GEN_CACHE`` is left alone:
the SGLang venvs and the test host's root are cached there on purpose.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(home: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], env={**env, "HOME": str(home)}, capture_output=True,
                          text=True, timeout=120)


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_the_cli_writes_nothing_under_the_users_home(repo_copy: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    session = {k: v for k, v in os.environ.items() if k not in ("GEN_CACHE", "XDG_CACHE_HOME")}
    for args in (("render", "--all"), ("check",), ("diff",), ("show", "--host", "llm-two")):
        out = _run(home, session, "-m", "generator", *args, "--root", str(repo_copy))
        assert out.returncode == 0, out.stderr
    assert _files(home) == [], "a run wrote under the user's home"

    # Control: a process that caches under ~/.cache is seen by the same check.
    writer = "from pathlib import Path; p = Path.home() / '.cache/x'; p.parent.mkdir(); p.write_text('1')"
    assert _run(home, session, "-c", writer).returncode == 0
    assert _files(home) == [".cache", ".cache/x"]


def test_the_heavy_cache_is_where_it_was() -> None:
    # scripts/test-host (and scripts/sglang-venv, the same expression) look under GEN_CACHE
    # or ~/.cache/gen for the heavy, shared build products.
    loader = importlib.machinery.SourceFileLoader("test_host_script", str(ROOT / "scripts" / "test-host"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[loader.name] = module  # its dataclasses look their module up there
    try:
        loader.exec_module(module)
    finally:
        del sys.modules[loader.name]
    heavy = Path(os.environ.get("GEN_CACHE") or Path.home() / ".cache" / "gen")
    assert module.cache_root() == heavy
    assert 'cache_root="${GEN_CACHE:-$HOME/.cache/gen}/sglang"' in (ROOT / "scripts" / "sglang-venv").read_text()
