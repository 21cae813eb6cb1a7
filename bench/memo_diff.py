#!/usr/bin/env python3
"""Differential check of gen's kept answers (memos): this checkout against one without them.

Run: .venv/bin/python bench/memo_diff.py --old /tmp/memo-old [--new /tmp/memo-new] [--cases 40] [--seed 1] [--hosts 10]

``--old`` is a checkout of gen from before the memos (df039f2, the commit before
93a6931..2a39bf2) with its own .venv; its gen is the oracle. ``--new`` (default: this
checkout) is the one under test, e.g. 2a39bf2, the memos alone, once main has moved on
with changes of its own output. Without ``--old`` the oracle is ``--new`` itself with
every memo made to miss (bench/memo_off.py). Every case is a repository
in a temporary folder: the example repository (models/, hosts/, catalogs/), the synthetic
fleet of bench/fleet.py, and for case i > 0 either a bad-input fixture laid over it
(tests/fixtures/bad/<case>/) or seeded random edits of the manifests: free-form flag
values of several types for the same flag (``64``, ``64.0``, ``"64"``, ``true``),
service overrides of a model's flags, environment values, pins per host, flags given
twice, non-ASCII, control and ``%``/``$`` characters. Both gens run on the same folder,
each with its own templates/ (the templates changed with the memos, their output did not),
with GEN_RENDER_CACHE=off:

  render --all --jobs 1, render --all --format json --jobs 2 (output/ tree bytes kept),
  check --jobs 1, check --format json --jobs 2, check --sglang 0.5.23 --jobs 1 (upgrade
  impact against a committed pin), check --sglang 0.5.5 --format json (a history-only pin)

and every exit code, stdout, stderr and output/ tree must be equal. A difference is
printed with the case's folder kept for a look. Not part of the test suite (it starts
twelve gen processes per case); a finding belongs in a regression test of its module.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import fleet  # noqa: E402  (bench/fleet.py: the synthetic fleet)

BAD = ROOT / "tests" / "fixtures" / "bad"

# Raw YAML values per flag: several types of one value, valid and invalid ones.
FLAG_VALUES: dict[str, list[str]] = {
    "--max-running-requests": ["64", "64.0", '"64"', "true", "0x40", "1e2", "-1", "~", "[64]", "128", "1_000"],
    "--enable-metrics": ["true", "false", "1", '"true"', "yes", "0", "~", "on"],
    "--chunked-prefill-size": ["8192", '"8192"', "8192.0", '"8k"', "4096"],
    "--kv-cache-dtype": ["fp8_e4m3", "FP8_E4M3", "auto", "fp8", "1", "fp8_e5m2"],
    "--schedule-policy": ["lpm", "fcfs", "LPM", "random", '"lpm "'],
    "--attention-backend": ["fa3", "flash_attn", "triton", "flashinfer", "fa4"],
    "--watchdog-timeout": ["300", "300.5", '"300"', "-0.0", "0.0", ".inf", ".nan"],
    "--log-level": ["info", "INFO", "debug", '"info\\t"'],
    "--disable-radix-cache": ["true", "false", "1"],
    "--page-size": ["1", "16", "64", '"16"', "16.0"],
    "--tp": ["2", '"2"', "1"],
    "--tp-size": ["2", "4"],
    "--num-speculative-tokens": ["16"],
    "--dp": ["2", "1"],
    "--enable-dp-attention": ["true"],
    "--api-key": ['"sk-secret-1"', '"sk-secret-2"'],
    "--served-model-name": ['"x"', '"é-name"', '"a b"', '"%n"', '"${HOME}"', '"$X"', '"tab\\tx"',
                            '"nl\\nx"', '"\\u200bzw"', '"q\\"q"', "'back\\\\slash'", '"\\x7f"'],
    "--json-model-override-args": ["'{\"a\": 1}'", "{a: 1}", '"{}"'],
    "--cuda-graph-bs": ["[1, 2, 4]", '["1", "2"]', "[1, 2.0]", "[true, 2]", "8"],
    "--mem-fraction-static": ["0.8", '"0.8"', "1", "0.88"],
    "--context-length": ["8192", "true", '"8192"'],
    "--tool-call-parser": ["qwen25", "qwen3", "kimi_k2", "nonesuch"],
    "--reasoning-parser": ["qwen3", "deepseek-r1"],
    "--log-level=info": ["true", "~"],
    "--speculative-algorithm": ["EAGLE", "NEXTN", "EAGLE3"],
    "--enable-torch-compile": ["true", "false"],
    "--disable-cuda-graph": ["true"],
    "--max-prefill-tokens": ["16384", '"16384"'],
    "--stream-interval": ["1", "8", "1.0"],
}
# Values SGLang and gen accept, so that the render goes through and output/ is compared too.
MILD_VALUES: dict[str, list[str]] = {
    "--max-running-requests": ["64", '"64"', "128", "1_000"],
    "--enable-metrics": ["true", "false"],
    "--chunked-prefill-size": ["8192", '"8192"', "4096"],
    "--kv-cache-dtype": ["fp8_e4m3", "auto"],
    "--schedule-policy": ["lpm", "fcfs"],
    "--watchdog-timeout": ["300", "300.5", '"300"', "300.0"],
    "--log-level": ["info", "debug"],
    "--disable-radix-cache": ["true", "false"],
    "--page-size": ["1", "16"],
    "--max-prefill-tokens": ["16384", '"16384"'],
    "--stream-interval": ["1", "8"],
    "--download-dir": ['"/shared/models/é x"', '"/shared/models/%h"', '"/shared/models/${X}"',
                       '"/shared/models/$Y"', "'/shared/models/q\"q'", '"/shared/models/a\\\\b"'],
    "--max-queued-requests": ["8", '"8"', "16"],
    "--enable-torch-compile": ["true", "false"],
    "--attention-backend": ["flashinfer", "triton"],
}
MILD_ENV = ['"1"', "1", '"0"', '"é"', '"a b"', '"%h"', '"${X}"', '"$Y"', '""', "1.0", '"q\\"q"', "'b\\s'"]
ENV_VALUES = ['"1"', "1", "true", '"0"', '"é"', '"a b"', '"%h"', '"${X}"', '"$Y"', '"tab\\tx"', '""',
              '"\\u00a0nbsp"', '"x\\ry"', "1.0"]
ENV_NAMES = ["HF_HUB_OFFLINE", "SGLANG_ENABLE_JIT_DEEPGEMM", "NCCL_DEBUG", "MY_VAR", "SGLANG_LOG_LEVEL",
             "CUDA_LAUNCH_BLOCKING", "HF_TOKEN", "SGL_ENABLE_JIT_DEEPGEMM"]


def _block(rng: random.Random, indent: str, skip: set[str], count: int, mild: bool) -> str:
    """``count`` free-form flags with random values, one YAML mapping body."""
    pool = MILD_VALUES if mild else FLAG_VALUES
    names = [n for n in pool if n not in skip]
    return "".join(f"{indent}{n}: {rng.choice(pool[n])}\n" for n in rng.sample(names, min(count, len(names))))


def _env(rng: random.Random, indent: str, mild: bool) -> str:
    names = rng.sample(["MY_VAR", "APP_MODE"] if mild else ENV_NAMES, rng.randint(1, 2 if mild else 3))
    return "".join(f"{indent}{n}: {rng.choice(MILD_ENV if mild else ENV_VALUES)}\n" for n in names)


def _edit_models(rng: random.Random, repo: Path, mild: bool) -> None:
    """Rewrite the synthetic models with random extra flags and environment."""
    for name, size, tp, extra in fleet.SYNTHETIC_MODELS:
        if rng.random() < 0.7:
            present = {ln.split(":")[0].strip() for ln in extra.splitlines() if ln.startswith("  --")}
            lines = _block(rng, "  ", present, rng.randint(1, 4), mild)
            extra = extra + lines if "args:" in extra else extra + "args:\n" + lines
        if rng.random() < 0.3:
            extra += "env:\n" + _env(rng, "  ", mild)
        (repo / "models" / f"{name}.yaml").write_text(fleet._model_yaml(name, size, tp, extra))


def _edit_hosts(rng: random.Random, repo: Path, mild: bool) -> None:
    """Random service overrides, environment, pins and secrets on the fleet's hosts."""
    # gpu-a/gpu-b are the example repo's two-node pair: wild edits may split them.
    for path in sorted((repo / "hosts").glob("gpu-0*.yaml" if mild else "gpu-*.yaml")):
        out = []
        for line in path.read_text().splitlines(keepends=True):
            if line.startswith("  pin: ") and rng.random() < 0.5:
                line = f'  pin: "{rng.choice(fleet.PINS)}"\n'
            out.append(line)
            if line.startswith("    gpus: ["):
                if rng.random() < 0.6:
                    out.append("    args:\n" + _block(rng, "      ", set(), rng.randint(1, 3), mild))
                if rng.random() < 0.3:
                    out.append("    env:\n" + _env(rng, "      ", mild))
                if rng.random() < 0.1 and not mild:
                    out.append('    secret_args: ["--api-key"]\n')
        path.write_text("".join(out))


def make_case(index: int, seed: int, hosts: int, dest: Path) -> str:
    """Write case ``index`` under ``dest``; return what it is."""
    fleet.make_fleet(dest, hosts)
    shutil.rmtree(dest / "templates")
    for part in ("models", "hosts"):
        for src in (ROOT / part).glob("*.yaml"):
            shutil.copy(src, dest / part / src.name)
    shutil.copytree(ROOT / "output", dest / "output")
    if index == 0:
        return "example repo + fleet"
    cases = sorted(p.name for p in BAD.iterdir() if p.is_dir())
    if index % 2 == 1 and index // 2 < len(cases):
        case = cases[(index // 2) % len(cases)]
        for src in sorted((BAD / case).rglob("*")):
            if src.is_file():
                target = dest / src.relative_to(BAD / case)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, target)
        return f"fixture {case} + fleet"
    rng = random.Random(seed * 100003 + index)
    mild = (index // 2) % 2 == 0
    _edit_models(rng, dest, mild)
    _edit_hosts(rng, dest, mild)
    return f"random {'valid' if mild else 'wild'} edits (seed {seed}, case {index})"


def _tree(output: Path) -> dict[str, bytes]:
    if not output.exists():
        return {}
    return {str(p.relative_to(output)): p.read_bytes() for p in sorted(output.rglob("*")) if p.is_file()}


COMMANDS = (["render", "--all", "--jobs", "1"], ["render", "--all", "--format", "json", "--jobs", "2"],
            ["check", "--jobs", "1"], ["check", "--format", "json", "--jobs", "2"],
            ["check", "--sglang", "0.5.23", "--jobs", "1"], ["check", "--sglang", "0.5.5", "--format", "json"])


def run_all(checkout: Path, repo: Path, pristine: dict[str, bytes], cache: bool = False,
            memos_off: bool = False) -> list[tuple[str, object]]:
    """Every command of the comparison with ``checkout``'s gen and templates on ``repo``.

    ``pristine``: the case's output/ before any render, put back before each render.
    ``cache``: the render cache on, one folder per checkout and case (later commands are
    answered from what earlier ones kept), else GEN_RENDER_CACHE=off. ``memos_off``: run
    ``checkout``'s gen through bench/memo_off.py (every memo made to miss).
    """
    if (repo / "templates").exists():
        shutil.rmtree(repo / "templates")
    shutil.copytree(checkout / "templates", repo / "templates")
    where = str(repo.parent / f"{repo.name}.cache-{checkout.name}{'-off' if memos_off else ''}") if cache else "off"
    gen = [str(checkout / ".venv" / "bin" / "gen")]
    if memos_off:
        gen = [str(checkout / ".venv" / "bin" / "python"), str(checkout / "bench" / "memo_off.py")]
    env = {**os.environ, "GEN_RENDER_CACHE": where, "NO_COLOR": "1", "COLUMNS": "200"}
    seen: list[tuple[str, object]] = []
    for cmd in COMMANDS:
        if cmd[0] == "render":  # each render starts from the committed tree
            shutil.rmtree(repo / "output", ignore_errors=True)
            (repo / "output").mkdir()
            for rel, data in pristine.items():
                (repo / "output" / rel).parent.mkdir(parents=True, exist_ok=True)
                (repo / "output" / rel).write_bytes(data)
        proc = subprocess.run([*gen, *cmd, "--root", str(repo)],
                              capture_output=True, env=env, timeout=600)
        label = " ".join(cmd)
        seen += [(label + " rc", proc.returncode), (label + " stdout", proc.stdout),
                 (label + " stderr", proc.stderr)]
        if cmd[0] == "render":
            seen.append((label + " output/", _tree(repo / "output")))
    return seen


def compare(old: list[tuple[str, object]], new: list[tuple[str, object]]) -> list[str]:
    """The labels whose values differ, with a short excerpt."""
    out = []
    for (label, a), (_, b) in zip(old, new):
        if a != b:
            if isinstance(a, dict):
                keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))  # type: ignore[union-attr]
                out.append(f"{label}: files differ: {keys[:5]}")
            else:
                out.append(f"{label}: old {str(a)[:600]!r}\n    new {str(b)[:600]!r}")
    return out


def main() -> int:
    """Run the cases; exit 1 when any differs."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, help="the oracle checkout; without it, --new with its memos off")
    ap.add_argument("--new", type=Path, default=ROOT)
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hosts", type=int, default=10)
    ap.add_argument("--cache", action="store_true", help="render cache on (a folder per checkout and case)")
    ap.add_argument("--work", type=Path, default=None, help="where cases are written (default: a temp folder)")
    opts = ap.parse_args()
    work = Path(opts.work or tempfile.mkdtemp(prefix="memo-diff-"))
    differing = 0
    stats: dict[str, int] = {}
    for i in range(opts.first, opts.first + opts.cases):
        repo = work / f"case-{i}"
        shutil.rmtree(repo, ignore_errors=True)
        repo.mkdir(parents=True)
        what = make_case(i, opts.seed, opts.hosts, repo)
        pristine = _tree(repo / "output")
        old = run_all(opts.old or opts.new, repo, pristine, opts.cache, memos_off=opts.old is None)
        new = run_all(opts.new, repo, pristine, opts.cache)
        diffs = compare(old, new)
        rcs = "/".join(str(v) for k, v in old if k.endswith(" rc"))
        stats[rcs] = stats.get(rcs, 0) + 1
        findings = len(json.loads(dict(new)["check --format json --jobs 2 stdout"] or b"{}").get("diagnostics", []))
        print(f"case {i}: {what}: exit {rcs}, {findings} diagnostics: {'DIFF' if diffs else 'same'}", flush=True)
        for d in diffs:
            print("  " + d, flush=True)
        if diffs:
            differing += 1
        else:
            shutil.rmtree(repo)
            for folder in work.glob(f"{repo.name}.cache-*"):
                shutil.rmtree(folder)
    print(f"{opts.cases} cases, {differing} differing; exit codes (render/render json/check/check json): {stats}")
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
