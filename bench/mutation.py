#!/usr/bin/env python3
"""Benchmark: mutation testing with mutmut, per package, and the kill rate of the fast tests.

Run (heavy: take the shared lock, never in CI):

    flock /tmp/gen-heavy.lock .venv/bin/python bench/mutation.py [--packages plan,live/onhost]
          [--sample N] [--seed S] [--part K/M] [--max-children N] [--work DIR] [--keep] [--resume]

For each package (``load``, ``sglang``, ``plan``, ``emit``, ``live/onhost``: the files
``generator/live/onhost_*.py``) a scratch copy of this checkout is made under --work (nothing
is written into this repository), with a ``setup.cfg`` whose ``[mutmut]`` section mutates
only that package and runs only the tests that cover it: the fast test files (``not live
and not sglang``) that import the package, plus the ones listed in EXTRA_TESTS (tests that
reach the package through the pipeline or the CLI). mutmut then:

1. generates every mutant and runs the selected tests once, recording which test reaches
   which function (``mutmut run`` with a name pattern that matches no mutant);
2. with ``--sample N``, draws N mutant names with ``random.Random(--seed)`` from the sorted
   list (the sample and the seed are printed, so a run can be repeated); without it, all;
3. runs each chosen mutant against the tests that reach it; with ``--part K/M`` only the K-th
   of M slices of the sample, so that a long run can go in chunks (each under the heavy lock,
   released between): with ``--keep`` the scratch copy stays, and the next part, run with
   ``--resume``, reuses its mutants, its stats and the verdicts of the earlier parts. The table counts every mutant of
   the sample with a verdict so far and names the ones still pending.

The table gives per package: mutants generated, tested, killed (including timeouts), survived,
not covered by any selected test ("no tests"), and the kill rate (killed / tested, where
tested counts survived and untested-by-any-test mutants: a mutant no test reaches is a
surviving one). Then every surviving mutant's name and diff (``mutmut show``), to be judged
equivalent or not by a person (see the note of the run).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES: dict[str, str] = {  # name -> the only_mutate glob
    "load": "generator/load/*.py",
    "sglang": "generator/sglang/*",
    "plan": "generator/plan/*.py",
    "emit": "generator/emit/*",
    "live/onhost": "generator/live/onhost_*.py",
}
IMPORTS: dict[str, str] = {  # name -> what a test file mentions when it uses the package
    "load": "generator.load", "sglang": "generator.sglang", "plan": "generator.plan",
    "emit": "generator.emit", "live/onhost": "onhost",
}
# Tests that reach a package without importing it (through the pipeline, the CLI, the goldens).
EXTRA_TESTS: dict[str, tuple[str, ...]] = {
    "load": ("tests/test_bad_inputs.py",),
    "sglang": ("tests/test_bad_inputs.py", "tests/test_rules.py"),
    "plan": ("tests/test_render.py", "tests/test_bad_inputs.py", "tests/test_ansible_logic.py"),
    "emit": ("tests/test_render.py", "tests/test_ansible.py", "tests/test_ansible_logic.py"),
    "live/onhost": ("tests/test_onhost_rollout.py",),
}
# Tests that read generator/'s source text: under mutmut that text holds every mutant at once
# (its trampolines), so they fail unmutated and cannot judge a mutant.
SOURCE_READERS = ("tests/test_schema_docs.py",)
# Standalone scripts gen ships as they are (ansible/gen-digest.py) and tests run as a subprocess:
# mutmut's trampolines import mutmut, which the script's interpreter does not have.
NOT_MUTATED = ("generator/emit/ansible/digest.py",)
MARKERS = "not live and not sglang"
FRESH_TIMEOUT_S = 300  # one mutant's tests in run_fresh
NO_MATCH = "gen-bench-no-such-mutant-*"  # a pattern no mutant name matches: generate + stats only


def tests_for(name: str) -> list[str]:
    """The fast test files covering package NAME: those mentioning it, plus EXTRA_TESTS."""
    found = {f"tests/{p.name}" for p in sorted((REPO / "tests").glob("test_*.py"))
             if IMPORTS[name] in p.read_text(encoding="utf-8")}
    return sorted((found | set(EXTRA_TESTS[name])) - set(SOURCE_READERS))


def prepare(work: Path, name: str) -> Path:
    """A scratch copy of the checkout with the [mutmut] section for package NAME."""
    root = work / name.replace("/", "-")
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    # Every tracked file: the tests read the example repo, schemas/, docs/ and the CI files.
    tracked = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True,
                             text=True, check=True).stdout.split("\0")
    for rel in filter(None, tracked):
        src = REPO / rel
        if src.is_file():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / rel)
    # mutmut copies source_paths (generator/) and also_copy into its own mutants/ tree.
    tops = sorted({rel.split("/", 1)[0] for rel in tracked if rel} - {"generator", "tests"})
    tests = tests_for(name)
    also = "\n    ".join(tops)
    (root / "setup.cfg").write_text(
        "[mutmut]\n"
        "source_paths = generator/\n"
        f"only_mutate = {PACKAGES[name]}\n"
        f"do_not_mutate = {' '.join(NOT_MUTATED)}\n"
        f"also_copy =\n    {also}\n"
        f"pytest_add_cli_args = -p no:cacheprovider -q -m \"{MARKERS}\" -p no:xdist\n"
        "pytest_add_cli_args_test_selection =\n    " + "\n    ".join(tests) + "\n"
        "use_git_change_detection = false\n",
        encoding="utf-8")
    return root


def mutmut(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the venv's mutmut in ROOT."""
    exe = Path(sys.executable).with_name("mutmut")
    return subprocess.run([str(exe), *args], cwd=root, capture_output=True, text=True, check=False)


def results(root: Path) -> dict[str, str]:
    """Mutant name -> status, from ``mutmut results --all true``."""
    out = mutmut(root, "results", "--all", "true").stdout
    found: dict[str, str] = {}
    for line in out.splitlines():
        match = re.match(r"^\s*(\S+): (.+?)\s*$", line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def run_fresh(root: Path, names: list[str], status: dict[str, str],
              children: int) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """Each of NAMES in a fresh ``pytest`` process in mutmut's tree, on the tests its stats say reach it.

    What ``mutmut run`` does per mutant, without its in-process clean run, which fails on the
    load/ selection (pytest exit 4: a test id of the stats run is not found when pytest runs
    again in the same process; the same ids run green in a fresh process). Exit 0 is a
    survivor, any other a kill; verdicts are kept in ROOT/fresh-verdicts.json for later parts.
    """
    import json
    import os
    store = root / "fresh-verdicts.json"
    kept: dict[str, str] = json.loads(store.read_text()) if store.is_file() else {}
    tests_by = json.loads((root / "mutants" / "mutmut-stats.json").read_text())["tests_by_mangled_function_name"]
    log = []

    def one(name: str) -> tuple[str, str]:
        tests = sorted(tests_by.get(name.rsplit("__mutmut_", 1)[0], ()))
        if not tests:
            return name, "no tests"
        env = dict(os.environ, MUTANT_UNDER_TEST=name)
        try:
            proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                                   "-m", MARKERS, "--rootdir=.", *tests], cwd=root / "mutants", env=env,
                                  capture_output=True, text=True, check=False, timeout=FRESH_TIMEOUT_S)
        except subprocess.TimeoutExpired:  # a mutant that loops: mutmut counts it as a timeout, a kill
            return name, "timeout"
        log.append(f"{name}: pytest exit {proc.returncode} ({len(tests)} tests)")
        return name, "survived" if proc.returncode == 0 else "killed"

    todo = [n for n in names if n not in kept]  # a verdict of an earlier (stopped) run stands
    with concurrent.futures.ThreadPoolExecutor(max_workers=children) as pool:
        for name, verdict in pool.map(one, todo):
            kept[name] = verdict
            store.write_text(json.dumps(kept, indent=1, sort_keys=True))
    store.write_text(json.dumps(kept, indent=1, sort_keys=True))
    status.update(kept)
    return subprocess.CompletedProcess([], 0, "\n".join(log), ""), status


def run_package(work: Path, name: str, sample: int | None, seed: int, children: int,
                part: tuple[int, int] = (1, 1), resume: bool = False, fresh: bool = False) -> dict[str, object]:
    """Generate, sample and test the mutants of one package (PART K of M of the sample); its counts and survivors."""
    root = work / name.replace("/", "-")
    if not (resume and (root / "mutants" / "mutmut-stats.json").is_file()):
        root = prepare(work, name)
    started = time.monotonic()
    reused = resume and (root / "mutants" / "mutmut-stats.json").is_file() and root.exists()
    if fresh and reused:  # the kept copy's mutants and stats stand; mutmut's run would only redo its clean run
        first = subprocess.CompletedProcess([], 0, "", "")
    else:
        first = mutmut(root, "run", "--max-children", str(children), NO_MATCH)
    every = results(root)
    if "failed to collect stats" in first.stdout + first.stderr or not every:
        # The selected tests must pass unmutated; otherwise no verdict means anything.
        sys.exit(f"{name}: the unmutated tests failed or no mutant was made\n{first.stdout[-3000:]}\n{first.stderr[-3000:]}")
    names = sorted(every)
    chosen = names if sample is None or sample >= len(names) else sorted(random.Random(seed).sample(names, sample))
    index, parts = part
    if fresh:
        done, status = run_fresh(root, chosen[index - 1::parts], dict(results(root)), children)
    else:
        done = mutmut(root, "run", "--max-children", str(children), *chosen[index - 1::parts])
        status = results(root)
    pending = [n for n in chosen if status.get(n) == "not checked"]  # left for a later part
    if set(pending) & set(chosen[index - 1::parts]):
        # mutmut stopped before the mutants (its clean run of their tests failed, for one).
        sys.exit(f"{name}: mutmut left this part's mutants unchecked\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    picked = {n: status.get(n, "missing") for n in chosen if n not in pending}
    killed = sum(s in ("killed", "timeout") for s in picked.values())
    survived = [n for n, s in picked.items() if s == "survived"]
    no_tests = [n for n, s in picked.items() if s == "no tests"]
    other = {n: s for n, s in picked.items() if s not in ("killed", "timeout", "survived", "no tests")}
    shows = {n: mutmut(root, "show", n).stdout for n in survived + no_tests}
    return {"name": name, "generated": len(names), "tested": len(picked), "pending": pending, "killed": killed,
            "survived": survived, "no_tests": no_tests, "other": other, "shows": shows,
            "seconds": time.monotonic() - started, "tests": tests_for(name),
            "log": done.stdout[-2000:] + done.stderr[-2000:]}


def main() -> None:
    """Parse the options, run each package, print the table and the survivors."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", default=",".join(PACKAGES))
    parser.add_argument("--sample", type=int, default=None, help="mutants per package (default: all)")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--part", default="1/1", help="K/M: run only the K-th of M slices of the sample")
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument("--work", type=Path, default=Path("/tmp/gen-bench-mutation"))
    parser.add_argument("--keep", action="store_true", help="keep the scratch copies")
    parser.add_argument("--fresh", action="store_true",
                        help="run each mutant in its own pytest process (see run_fresh) instead of mutmut's runner")
    parser.add_argument("--resume", action="store_true",
                        help="reuse a kept scratch copy (its mutants, stats and verdicts) instead of a fresh one")
    opts = parser.parse_args()
    names = [n.strip() for n in opts.packages.split(",") if n.strip()]
    unknown = [n for n in names if n not in PACKAGES]
    if unknown:
        parser.error(f"unknown package(s) {', '.join(unknown)}; known: {', '.join(PACKAGES)}")
    part = re.fullmatch(r"([1-9][0-9]*)/([1-9][0-9]*)", opts.part)
    if not part or int(part.group(1)) > int(part.group(2)):
        parser.error(f"--part wants K/M with 1 <= K <= M, not {opts.part!r}")
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    print(f"sample: {opts.sample or 'all'} per package, seed {opts.seed}, part {opts.part}, "
          f"max-children {opts.max_children}")
    rows = []
    for name in names:
        row = run_package(opts.work, name, opts.sample, opts.seed, opts.max_children,
                          (int(part.group(1)), int(part.group(2))), opts.resume, opts.fresh)
        rows.append(row)
        survived, no_tests, pending = row["survived"], row["no_tests"], row["pending"]
        assert isinstance(survived, list) and isinstance(no_tests, list) and isinstance(pending, list)
        tested = int(str(row["tested"]))
        rate = 100.0 * int(str(row["killed"])) / tested if tested else 0.0
        print(f"\n== {name}: {row['generated']} generated, {tested} tested, {row['killed']} killed, "
              f"{len(survived)} survived, {len(no_tests)} not reached by a test, other {row['other']}, "
              f"{len(pending)} pending (later parts); "
              f"kill rate {rate:.1f}% ({row['seconds']:.0f} s)")
        print(f"   tests: {' '.join(row['tests'])}")  # type: ignore[arg-type]
        shows = row["shows"]
        assert isinstance(shows, dict)
        for mutant in survived + no_tests:
            print(f"\n-- {'survived' if mutant in survived else 'no tests'}: {mutant}\n{shows[mutant].rstrip()}")
        if tested and row["other"]:
            print(row["log"])
    print(f"\nuptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    if not opts.keep:
        shutil.rmtree(opts.work, ignore_errors=True)


if __name__ == "__main__":
    main()
