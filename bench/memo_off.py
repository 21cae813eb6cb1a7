#!/usr/bin/env python3
"""gen with its kept answers (memos) turned off: the oracle for bench/memo_diff.py on one checkout.

Run: .venv/bin/python bench/memo_off.py check --root DIR   (any gen command line)

Before gen's CLI runs, every store of the speed work 93a6931..2a39bf2 is made to miss:
the flag check's kept answers (generator/sglang/flags/kept.py), the rules' kept answers
(generator/sglang/rules/kept.py), a model's shared Args (generator/plan/argv.py) and the
systemd writers' plain_memo (each wrapper's cached function replaced by the function
itself, wherever a module imported it). The pool forks, so its workers inherit this.
What is left is the unmemoised pipeline of the same checkout, so
``memo_diff.py --old-cmd bench/memo_off.py`` compares the memos alone even after main
moved on with changes of its own output.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


class _Never(dict):  # type: ignore[type-arg]
    """A store that keeps nothing."""

    def get(self, key: Any, default: Any = None) -> Any:
        return default

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def _plain_memo_off(fn: Any) -> bool:
    """Point a plain_memo wrapper's cached function at the function itself; True if it was one."""
    wrapped = getattr(fn, "__wrapped__", None)
    if wrapped is None or fn.__closure__ is None or not hasattr(fn, "cache_clear"):
        return False
    for cell in fn.__closure__:
        if callable(cell.cell_contents) and getattr(cell.cell_contents, "cache_info", None) is not None:
            cell.cell_contents = wrapped
            return True
    return False


def memos_off() -> int:
    """Turn every memo off; return how many plain_memo writers were switched."""
    import generator.cli.main  # noqa: F401  (the CLI)
    import generator.pipeline.host  # noqa: F401  (the pipeline, imported lazily by the commands)
    import generator.plan.argv as argv
    import generator.sglang.flags as flags
    from generator.sglang.flags import kept as flags_kept
    from generator import systemd, systemd_settings

    evaluate = sys.modules["generator.sglang.rules.evaluate"]  # the package exports a function of that name

    def fresh_checks(catalog: Any, others: Any, tables: Any) -> Any:
        store = flags_kept.KeptChecks(catalog, others, tables)
        store.answers = _Never()
        return store

    flags.kept_checks = fresh_checks
    evaluate.store_for = lambda catalog, rules: _Never()
    argv._kept_model_args = argv._model_args
    switched = 0
    for module in (systemd, systemd_settings):
        for value in list(vars(module).values()):
            switched += _plain_memo_off(value)
    return switched


def main() -> None:
    """Run gen's CLI with the memos off."""
    if memos_off() < 10:
        raise SystemExit("memo_off: fewer plain_memo writers than expected; the patch is stale")
    from generator.cli.main import main as gen_main

    sys.argv[0] = "gen"
    gen_main()


if __name__ == "__main__":
    main()
