#!/usr/bin/env python3
"""Differential run: gen of this checkout against gen of another commit, on generated repositories.

Run: .venv/bin/python bench/differential.py --against e1eb843 [--cases 40] [--seed 1] [--hosts 10]

The oracle is the gen of ``--against`` (a commit, tag or branch), checked out into a git
worktree of its own under the temporary folder (``git worktree add --detach``, removed
at the end unless ``--keep``) and run with this checkout's interpreter and libraries
(``python -m generator`` from that worktree). ``--against-path`` names a checkout
already on disk instead. The gen under test is this checkout's. Use it whenever a
change must keep every diagnostic and every byte of output/ as they were (a removal, a
refactoring, a speed change).

Every case is a repository in a temporary folder: the example repository (models/,
hosts/, catalogs/, output/), the synthetic fleet of bench/fleet.py, and for case i > 0
either a bad-input fixture laid over it (tests/fixtures/bad/<case>/) or seeded random
edits of the manifests: free-form flag values of several types for the same flag
(``64``, ``64.0``, ``"64"``, ``true``), service overrides of a model's flags,
environment values, pins per host, flags given twice, non-ASCII, control and ``%``/``$``
characters. Both gens run on the same folder, each with its own templates/ and catalogs/, with
GEN_RENDER_CACHE=off (for an oracle from before the render cache was removed). The commands (:data:`COMMANDS`):
render, diff and check with --jobs 1 and 2, text, json and sarif, upgrade checks against
a committed and a history-only pin, show, import, schema and ansible. Every exit code,
stdout, stderr, output/ tree and ansible/ tree must be equal. A difference is printed
with the case's folder kept for a look.

Not part of the test suite (it starts about forty gen processes per case); a finding
belongs in a regression test of its module.
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
    shutil.rmtree(dest / "templates")  # each gen brings its own (run_all)
    shutil.rmtree(dest / "catalogs")
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


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by relative path (empty when there is no folder)."""
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


IMPORT_CMD = ["--", "python", "-m", "sglang.launch_server", "--model-path", "/shared/models/x", "--tp", "2",
              "--num-speculative-tokens", "4", "--enable-metrics", "--mem-frac", "0.8"]
# (arguments, what the command leaves behind that is compared: "output/", "ansible/" or None)
COMMANDS: tuple[tuple[list[str], str | None], ...] = (
    (["render", "--all", "--jobs", "1"], "output/"),
    (["render", "--all", "--format", "json", "--jobs", "2"], "output/"),
    (["render", "--host", "gpu-0001", "-v", "--jobs", "1"], "output/"),
    (["diff", "--jobs", "1"], None),
    (["diff", "--format", "json", "--jobs", "2"], None),
    (["check", "--jobs", "1"], None),
    (["check", "--jobs", "2", "-v"], None),
    (["check", "--format", "json", "--jobs", "2"], None),
    (["check", "--format", "sarif", "--jobs", "1"], None),
    (["check", "--sglang", "0.5.23", "--jobs", "1"], None),
    (["check", "--sglang", "0.5.9", "--format", "json", "--jobs", "2"], None),
    (["check", "--sglang", "0.5.5", "--format", "json"], None),
    (["show", "--host", "llm-two"], None),
    (["show", "--host", "gpu-0003", "--format", "json"], None),
    (["import", "--sglang", "0.5.9", *IMPORT_CMD], None),
    (["import", "--host", "gpu-0000", "--format", "json", *IMPORT_CMD], None),
    (["schema", "host"], None),
    (["ansible"], "ansible/"),
    (["check", "--jobs", "2"], None),  # now with ansible/ to check
)


def run_all(gen: list[str], checkout: Path, repo: Path, pristine: dict[str, bytes]) -> list[tuple[str, object]]:
    """Every command of :data:`COMMANDS` with ``gen`` (run in ``checkout``) on ``repo``.

    ``checkout``'s templates/ and catalogs/ are put into the repository first; ``pristine`` (the case's
    output/ before any command) is put back before each render, and ansible/ is removed
    before the first command, so both gens meet the same folder.
    """
    for own in ("templates", "catalogs"):  # the data each gen was written with
        shutil.rmtree(repo / own, ignore_errors=True)
        shutil.copytree(checkout / own, repo / own)
    shutil.rmtree(repo / "ansible", ignore_errors=True)
    env = {**os.environ, "GEN_RENDER_CACHE": "off", "NO_COLOR": "1", "COLUMNS": "200"}
    seen: list[tuple[str, object]] = []
    for cmd, leaves in COMMANDS:
        if cmd[0] == "render":  # each render starts from the committed tree
            shutil.rmtree(repo / "output", ignore_errors=True)
            (repo / "output").mkdir()
            for rel, data in pristine.items():
                (repo / "output" / rel).parent.mkdir(parents=True, exist_ok=True)
                (repo / "output" / rel).write_bytes(data)
        proc = subprocess.run([*gen, *cmd[:1], "--root", str(repo), *cmd[1:]], cwd=checkout,
                              capture_output=True, env=env, timeout=600)
        label = " ".join(cmd[:8])
        seen += [(label + " rc", proc.returncode), (label + " stdout", proc.stdout),
                 (label + " stderr", proc.stderr)]
        if leaves:
            seen.append((label + " " + leaves, _tree(repo / leaves.rstrip("/"))))
    return seen


def compare(old: list[tuple[str, object]], new: list[tuple[str, object]]) -> list[str]:
    """The labels whose values differ, with a short excerpt."""
    out = []
    for (label, a), (_, b) in zip(old, new, strict=True):
        if a != b:
            if isinstance(a, dict) and isinstance(b, dict):
                keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
                out.append(f"{label}: files differ: {keys[:5]}")
            elif isinstance(a, bytes) and isinstance(b, bytes):
                lines_a, lines_b = a.splitlines(), b.splitlines()
                at = next((i for i, (x, y) in enumerate(zip(lines_a, lines_b, strict=False)) if x != y),
                          min(len(lines_a), len(lines_b)))
                out.append(f"{label}: first difference at line {at + 1}:\n"
                           f"    old {b''.join(lines_a[at:at + 1])[:400]!r}\n    new {b''.join(lines_b[at:at + 1])[:400]!r}")
            else:
                out.append(f"{label}: old {a!r}, new {b!r}")
    return out


def checkout_of(rev: str, work: Path) -> Path:
    """A detached git worktree of ``rev`` under ``work`` (reused when it is already there)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", rev + "^{commit}"],
                         capture_output=True, text=True, check=True).stdout.strip()
    path = work / f"against-{sha[:12]}"
    if not path.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(path), sha], check=True)
    return path


def main() -> int:
    """Run the cases; exit 1 when any differs."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--against", help="the oracle: a commit of this repository (checked out in a worktree)")
    group.add_argument("--against-path", type=Path, help="the oracle: a checkout already on disk")
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hosts", type=int, default=10)
    ap.add_argument("--work", type=Path, default=None, help="where cases are written (default: a temp folder)")
    ap.add_argument("--keep", action="store_true", help="keep the oracle's worktree")
    opts = ap.parse_args()
    work = Path(opts.work or tempfile.mkdtemp(prefix="gen-differential-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    oracle = opts.against_path.resolve() if opts.against_path else checkout_of(opts.against, work)
    gen = [sys.executable, "-m", "generator"]  # run in a checkout: its generator/ comes first
    differing = 0
    stats: dict[str, int] = {}
    try:
        for i in range(opts.first, opts.first + opts.cases):
            repo = work / f"case-{i}"
            shutil.rmtree(repo, ignore_errors=True)
            repo.mkdir(parents=True)
            what = make_case(i, opts.seed, opts.hosts, repo)
            pristine = _tree(repo / "output")
            old = run_all(gen, oracle, repo, pristine)
            new = run_all(gen, ROOT, repo, pristine)
            diffs = compare(old, new)
            rcs = "/".join(str(v) for k, v in old if k.endswith(" rc"))
            stats[rcs] = stats.get(rcs, 0) + 1
            findings = len(json.loads(dict(new)["check --format json --jobs 2 stdout"] or b"{}")  # type: ignore[arg-type]
                           .get("diagnostics", []))
            print(f"case {i}: {what}: exit {rcs}, {findings} diagnostics: {'DIFF' if diffs else 'same'}", flush=True)
            for d in diffs:
                print("  " + d, flush=True)
            if diffs:
                differing += 1
            else:
                shutil.rmtree(repo)
    finally:
        if opts.against and not opts.keep:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(oracle)], check=False)
    print(f"{opts.cases} cases, {differing} differing; exit codes per command: {stats}")
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
