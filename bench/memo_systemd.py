#!/usr/bin/env python3
"""Differential check of the memoised systemd writers (plain_memo) against a pre-memo checkout.

Run: .venv/bin/python bench/memo_systemd.py --old /tmp/memo-old [--calls 60000] [--seed 5]

The same seeded sequence of calls (every writer of generator/systemd.py and
generator/systemd_settings.py, arguments drawn again and again from a pool of random
strings: control characters, noncharacters, surrogates, non-ASCII, ``%``, ``$``,
``${NAME}`` words, also as :class:`ExecVariable`) runs in this checkout, where the
writers keep their answers across the whole sequence, and in ``--old``'s, which has no
memo and the old ``_refuse_control``. Each call's result or error (type and message) is
recorded; the two records must be equal. Exits 1 on the first difference.
"""

from __future__ import annotations

import argparse
import inspect
import random
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
NAMES = ("bind_path_value", "comment_value", "cpu_list_value", "credential_value", "env_file_line",
         "environment_assignment", "environment_under", "exec_word", "path_value", "relative_dir_value",
         "single_path_value", "unit_string_value", "user_value", "check_env_name", "environment_line")
ANY = list("aZ09 /._-:%$\\\"'`#;*?[]{}=,~\t\n\r\x00\x1b\x7f\x85\xa0é中\u200b\ufeff\ufffe\U0010ffff\ud800")
SAFE = list("aZ09 /._-:%$\\\"'`#;*?[]{}=,~") + ["é", "中", "${HOME}", "%h", "/"]


def _writers() -> list[tuple[str, Callable[..., Any], int]]:
    from generator import systemd, systemd_settings  # of the checkout first on sys.path

    out = []
    for name in NAMES:
        fn = getattr(systemd_settings, name, None) or getattr(systemd, name)
        params = inspect.signature(getattr(fn, "__wrapped__", fn)).parameters.values()
        out.append((name, fn, sum(1 for p in params if p.default is p.empty)))
    return out


def _call(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, ...]:
    try:
        return ("ok", fn(*args))
    except Exception as exc:  # noqa: BLE001  the error itself is the answer compared
        return ("error", type(exc).__name__, str(exc))


def record(calls: int, seed: int) -> list[str]:
    """The seeded calls and their answers, one repr per call."""
    from generator.systemd import _EXEC_VARIABLE, ExecVariable

    rng = random.Random(seed)

    def text(chars: list[str], most: int) -> str:
        return "".join(rng.choice(chars) for _ in range(rng.randint(0, most)))

    pool = ([text(ANY, 6) for _ in range(200)] + [text(SAFE, 8) for _ in range(400)]
            + ["/" + text(SAFE, 8) for _ in range(200)] + ["/shared/models", "root", "0-31,64-95", "3", "%S"]
            + ["${HOME}", "${CREDENTIALS_DIRECTORY}/x.yaml", "${A_1}/b"] * 10)
    writers = _writers()
    out = []
    for _ in range(calls):
        name, fn, arity = rng.choice(writers)
        args: tuple[Any, ...] = tuple(rng.choice(pool) for _ in range(arity))
        if rng.random() < 0.1:
            args = tuple(ExecVariable(a) if _EXEC_VARIABLE.fullmatch(a) else a for a in args)
        out.append(repr((name, args, _call(fn, args))))
    return out


def main() -> int:
    """Record here and in ``--old`` (a child process), compare."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path)
    ap.add_argument("--calls", type=int, default=60000)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--print", action="store_true", help="print this checkout's record (used for --old)")
    opts = ap.parse_args()
    if opts.print:
        sys.path.insert(0, str(Path.cwd()))
        print("\n".join(record(opts.calls, opts.seed)))
        return 0
    sys.path.insert(0, str(ROOT))
    mine = record(opts.calls, opts.seed)
    theirs = subprocess.run([str(opts.old / ".venv" / "bin" / "python"), str(Path(__file__).resolve()), "--print",
                             "--calls", str(opts.calls), "--seed", str(opts.seed)],
                            cwd=opts.old, capture_output=True, text=True, check=True).stdout.splitlines()
    for a, b in zip(mine, theirs):
        if a != b:
            print(f"differs:\n  memoised {a}\n  old      {b}")
            return 1
    accepted = sum(", ('ok'," in line for line in mine)
    print(f"{len(mine)} calls ({accepted} accepted) same as {opts.old}" if len(mine) == len(theirs)
          else f"record lengths differ: {len(mine)} vs {len(theirs)}")
    return 0 if len(mine) == len(theirs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
