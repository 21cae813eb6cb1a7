#!/usr/bin/env python3
"""Templates edited between hosts of one run: the per-host freshness check against auto_reload.

Run: .venv/bin/python bench/memo_template.py [--hosts 8]

generator/emit/render.py turned jinja2's auto_reload off and asks once per host whether a
compiled template changed on disk (``_fresh_environment``). This renders the same
synthetic fleet twice with ``render --all --jobs 1``, editing the hardening partial after
the first host and the environment template after the third (mtime moved on), once as
the code is and once with the environment's auto_reload back on (jinja2's check at
every get_template and include, as before the change). The two output/ trees must be
byte-identical and the edits must show from the next host on. Exits 1 otherwise.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _render_editing(mode: str, repo: Path) -> None:
    """In this process: render ``repo``, editing templates between hosts (``mode`` old: auto_reload on)."""
    sys.path.insert(0, str(ROOT))
    import generator.cli.main as cli
    import generator.emit.render as render
    import generator.pipeline.host as host

    original = host.render_host
    calls = [0]

    def editing(planned: Any, templates: Path) -> Any:
        out = original(planned, templates)
        calls[0] += 1
        if calls[0] in (1, 3):
            path = templates / ("hardening.j2" if calls[0] == 1 else "sglang.env.j2")
            path.write_text(path.read_text() + f"# edited after host {calls[0]}\n")
            st = path.stat()
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5 * 10**9 * calls[0]))
        return out

    host.render_host = editing
    if mode == "old":
        base = render._environment

        def reloading(templates: Path) -> Any:
            env = base(templates)
            env.auto_reload = True
            return env

        render._fresh_environment = reloading
    sys.argv = ["gen", "render", "--all", "--jobs", "1", "--root", str(repo)]
    cli.main()


def _same(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(_same(a / d, b / d) for d in cmp.common_dirs)


def main() -> int:
    """Render both ways in child processes; compare the trees."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--mode", choices=("old", "new"), help=argparse.SUPPRESS)
    ap.add_argument("--repo", type=Path, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.mode:
        _render_editing(opts.mode, opts.repo)
        return 0
    sys.path.insert(0, str(ROOT / "bench"))
    import fleet

    with tempfile.TemporaryDirectory(prefix="memo-template-") as tmp:
        for mode in ("old", "new"):
            fleet.make_fleet(Path(tmp) / mode, opts.hosts)
            subprocess.run([sys.executable, __file__, "--mode", mode, "--repo", str(Path(tmp) / mode)],
                           env={**os.environ, "GEN_RENDER_CACHE": "off"}, check=True, capture_output=True)
        old, new = Path(tmp) / "old" / "output", Path(tmp) / "new" / "output"
        edited = sorted({p.relative_to(new).parts[0] for p in new.rglob("*") if p.is_file()
                         and "# edited after host" in p.read_text(errors="replace")})
        same = _same(old, new)
        print(f"{opts.hosts} hosts, templates edited after hosts 1 and 3: output/ {'identical' if same else 'DIFFERS'}; "
              f"edits seen in {edited}")
        return 0 if same and edited and "gpu-0000" not in edited else 1


if __name__ == "__main__":
    raise SystemExit(main())
