"""The test suite writes nothing into the user's cache, and still finds the heavy parts.

tests/conftest.py points the render cache (``GEN_RENDER_CACHE``) at a folder of the
session and leaves ``GEN_CACHE`` alone: the SGLang venvs and the test host's root are
cached there on purpose. The CLI runs here in a process whose HOME is an empty folder,
exactly with the session's environment otherwise: nothing may appear under that home.
The same run without the session's render cache does write into ``~/.cache/gen``, which
shows the check can fail.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from generator.pipeline.cache import cache_dir

ROOT = Path(__file__).resolve().parent.parent


def _gen(repo: Path, home: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**env, "HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "generator", *args, "--root", str(repo)],
                          env=env, capture_output=True, text=True, timeout=120)


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_the_cli_writes_nothing_under_the_users_cache(repo_copy: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    session = {k: v for k, v in os.environ.items() if k not in ("GEN_CACHE", "XDG_CACHE_HOME")}
    render_cache = Path(session["GEN_RENDER_CACHE"])
    host = repo_copy / "hosts" / "llm-two.yaml"  # a new cache key: this run must write an entry
    host.write_text(host.read_text() + f"# {tmp_path.name}\n")
    before = len(_files(render_cache))
    for args in (("render", "--all"), ("check",), ("diff",)):
        out = _gen(repo_copy, home, session, *args)
        assert out.returncode == 0, out.stderr
    assert _files(home) == [], "a run wrote under the user's home"
    assert len(_files(render_cache)) > before, "the session's render cache was not used"

    # Control: without the session's render cache, the very same run fills ~/.cache/gen.
    unhermetic = {k: v for k, v in session.items() if k != "GEN_RENDER_CACHE"}
    assert _gen(repo_copy, home, unhermetic, "check").returncode == 0
    assert any(name.startswith(".cache/gen/render/") for name in _files(home))


def test_render_cache_is_private_and_heavy_cache_is_where_it_was() -> None:
    render = cache_dir()
    assert render is not None and Path(os.environ["GEN_RENDER_CACHE"]) == render
    assert not render.is_relative_to(Path.home() / ".cache"), render
    # scripts/test-host (and scripts/sglang-venv, the same expression) still look under
    # GEN_CACHE or ~/.cache/gen for the heavy, shared build products.
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
    assert not render.is_relative_to(heavy)
    assert 'cache_root="${GEN_CACHE:-$HOME/.cache/gen}/sglang"' in (ROOT / "scripts" / "sglang-venv").read_text()
