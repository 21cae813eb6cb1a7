#!/usr/bin/env python3
"""In-process differential fuzz of the flag and rule stores: warm (shared) against cold.

Run: .venv/bin/python bench/memo_fuzz.py [--services 3000] [--seed 1]

Each random service is a list of flags (option strings and dests of both committed pins,
misspellings, flags given twice) with values of many types (``1``, ``1.0``, ``True``,
``"1"``, ``-0.0``, tuples, non-ASCII, control characters) and a random environment. It
is checked with check_args and its rules evaluated twice: once with the stores of
generator/sglang/flags/kept.py and generator/sglang/rules/kept.py kept across all
services (warm, as one gen process does across hosts), once with both emptied first
(cold, which is the unmemoised answer). Diagnostics (position, code, severity, message,
hint, order), argv words and positions, and rule findings must be equal. Exits 1 on a
difference and prints it.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.errors import Diagnostics, Position  # noqa: E402
from generator.sglang.catalog import Catalog, load_catalog, load_flag_tables  # noqa: E402
from generator.sglang.flags import Arg, check_args  # noqa: E402
from generator.sglang.flags import kept as flags_kept  # noqa: E402
from generator.sglang.rules import kept as rules_kept  # noqa: E402
from generator.sglang.rules.evaluate import catalog_rules, evaluate  # noqa: E402
from generator.sglang.rules.settings import settings_from_words  # noqa: E402

VALUES: list[Any] = [1, 1.0, True, "1", "1.0", "true", 0, 0.0, -0.0, False, "0", None, 2, 2.0, "2", 8, "8",
                     64, "64", 8192, "8192", 8192.0, 0.8, "0.8", 0.85, 300, 300.5, "fa3", "flash_attn",
                     "triton", "flashinfer", "lpm", "fcfs", "LPM", "fp8_e4m3", "auto", "qwen25", "qwen3",
                     "EAGLE", "EAGLE3", "NEXTN", "é", "a b", "%n", "${HOME}", "$X", "tab\tx", "\u200b",
                     "/shared/models/x", "/data/x", "", (1, 2, 4), ("1", "2"), (1, 2.0), (True, 2), (8,),
                     ("a",), (), 10**20, float("inf"), float("nan"), "yes", "on", "none", "None"]
ENV_NAMES = ["SGLANG_ENABLE_SPEC_V2", "SGLANG_ENABLE_SPEC_V2", "SGLANG_ENABLE_JIT_DEEPGEMM", "SGLANG_ENABLE_SPEC_V2", "NCCL_DEBUG", "MY_VAR", "CUDA_VISIBLE_DEVICES"]
ENV_VALUES = ["1", "0", "true", "false", "INFO", "WARN", "x", "", "é", "0,1"]


def _names(catalogs: list[Catalog], rng: random.Random) -> list[tuple[str, bool]]:
    """A pool of (name, by_dest): option strings, dests, and misspellings of both pins."""
    pool: list[tuple[str, bool]] = []
    for cat in catalogs:
        actions = list(cat.actions) if hasattr(cat, "actions") else []
        for action in rng.sample(actions, min(60, len(actions))):
            pool += [(s, False) for s in action.option_strings]
            pool.append((action.dest, True))
    pool += [("--tp", False), ("--dp", False), ("--tp-size", False), ("--num-speculative-tokens", False),
             ("--log-level=info", False), ("--context_length", False), ("--attn-backend", False),
             ("tp_size", True), ("nonesuch_dest", True), ("--nonesuch", False), ("--no-enable-metrics", False),
             ("--help", False), ("-h", False), ("--api-key", False), ("--cuda-graph-bs", False),
             ("--speculative-algorithm", False), ("speculative_algorithm", True), ("--enable-dp-attention", False)]
    return pool


def _service(rng: random.Random, pool: list[tuple[str, bool]], index: int) -> tuple[list[Arg], dict[str, str]]:
    args = []
    for k in range(rng.randint(1, 8)):
        name, by_dest = rng.choice(pool)
        pos = Position(f"hosts/h{index % 7}.yaml", rng.randint(1, 5) + k, rng.randint(1, 3))
        args.append(Arg(name, rng.choice(VALUES), pos, by_dest=by_dest))
    if rng.random() < 0.3:  # speculative decoding: rules that read the environment too
        spec = [("speculative_algorithm", rng.choice(["EAGLE", "EAGLE3", "NEXTN"])), ("speculative_num_steps", 3),
                ("speculative_eagle_topk", rng.choice([1, 2, True])), ("speculative_num_draft_tokens", rng.choice([4, 6]))]
        args += [Arg(d, v, Position(f"models/m{index % 3}.yaml", 20 + j, 5), by_dest=True) for j, (d, v) in enumerate(spec)]
    if rng.random() < 0.2:
        args.append(args[0])  # given twice
    env = {n: rng.choice(ENV_VALUES) for n in rng.sample(ENV_NAMES, rng.randint(0, 3))}
    if rng.random() < 0.3:  # only the speculative block: twins of it hit the rule store
        args = [a for a in args if a.pos.path.startswith("models/")] or args

    return args, env


TWINS: dict[Any, list[Any]] = {1: [True, 1.0, "1"], True: [1, 1.0, "true"], 0: [False, 0.0, -0.0, "0"],
                               False: [0, 0.0, "false"], 8: [8.0, "8"], 2: [2.0, "2", (2,)], 64: [64.0, "64"]}


def _twin(rng: random.Random, args: list[Arg], env: dict[str, str], index: int) -> tuple[list[Arg], dict[str, str]]:
    """An earlier service again at other positions, a value maybe swapped for an equal one of another type."""
    out = []
    for k, a in enumerate(args):
        value = a.value
        if rng.random() < 0.3:
            try:
                value = rng.choice(TWINS.get(value, [value]))
            except TypeError:  # a tuple is hashable, a list is not; keep it
                pass
        out.append(Arg(a.name, value, Position(f"hosts/t{index % 5}.yaml", 10 + k, 7), by_dest=a.by_dest))
    env = dict(env)
    if env and rng.random() < 0.3:
        env[next(iter(env))] = rng.choice(ENV_VALUES)
    elif env and rng.random() < 0.3:
        env.pop(next(iter(env)))
    return out, env


def _answer(catalog: Catalog, others: list[Catalog], args: list[Arg], env: dict[str, str]) -> tuple[Any, ...]:
    diags = Diagnostics()
    tables = load_flag_tables(catalog.source_file)
    checked = check_args(catalog, args, diags, others, tables)
    groups = [(c.action, c.words, c.pos) for c in checked]
    env_pos = {n: Position("hosts/env.yaml", i + 1, 3) for i, n in enumerate(env)}
    settings = settings_from_words(catalog, groups, env, env_pos)
    findings = [(f.rule.id, f.message, f.fix, f.pos) for f in evaluate(settings, catalog_rules(catalog))]
    shown = [(d.pos, d.code, d.severity, d.message, d.hint) for d in diags.items]
    return shown, [(c.action.dest, c.words, c.pos) for c in checked], findings


def compare(services: int, seed: int) -> str | None:
    """Check ``services`` random services warm and cold; the first difference, or None."""
    rng = random.Random(seed)
    catalogs = [load_catalog(ROOT, "0.5.9"), load_catalog(ROOT, "0.5.23")]
    pool = _names(catalogs, rng)
    history: list[tuple[list[Arg], dict[str, str]]] = []
    for i in range(services):
        catalog = catalogs[i % 2]
        others = [c for c in catalogs if c is not catalog]
        if history and rng.random() < 0.5:
            args, env = _twin(rng, *rng.choice(history[-200:]), i)
        else:
            args, env = _service(rng, pool, i)
            history.append((args, env))
        warm = _answer(catalog, others, args, env)
        saved_f, saved_r = dict(flags_kept._STORES), dict(rules_kept._STORES)
        flags_kept._STORES.clear()
        rules_kept._STORES.clear()
        cold = _answer(catalog, others, args, env)
        flags_kept._STORES.clear()
        rules_kept._STORES.clear()
        flags_kept._STORES.update(saved_f)  # the warm stores go on
        rules_kept._STORES.update(saved_r)
        if warm != cold:
            return f"service {i} differs on {catalog.pin}:\n args {args}\n env {env}\n warm {warm}\n cold {cold}"
    return None


def main() -> int:
    """Fuzz; exit 1 on the first difference."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--services", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    opts = ap.parse_args()
    difference = compare(opts.services, opts.seed)
    if difference is not None:
        print(difference)
        return 1
    sizes = sorted(len(v.answers) for v in flags_kept._STORES.values())
    print(f"{opts.services} services compared warm vs cold: same; kept flag answers per store {sizes}, "
          f"rule stores {[len(s.fired) for s in rules_kept._STORES.values()]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
