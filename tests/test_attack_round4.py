"""Attacks of round 4 (issue 22's fresh attack on main's new surfaces), each with the class it stands for.

- gen host snapshot: what nvidia-smi, sysfs and the host's torch print is data from outside.
  A superscript index ('²'.isdigit() is true, int('²') raises), 5,000 digits, a control
  character or bidi override in a GPU's name, a driver version with ESC, one index twice, a
  torch answer nested 5,000 deep: each was an internal error (exit 4) or an "updated inventory
  does not validate" naming lines of a file never written. Now each is a FactsError (exit 3)
  naming the value, escaped and cut, before anything forms the inventory's text; a torch
  answer that is not one leaves facts.torch_* as written, with a note. The outputs are a
  stand-in for nvidia-smi (no GPU here), line for line in its format.
- The memory check's /get_server_info answer: JSON nested deeper than Python's decoder
  follows was a RecursionError; now "no figures to compare" (load/json_text).
- catalogs/sglang/<pin>.devices.json (new this round) was read with json.loads: nested 100,000
  deep it was a RecursionError (exit 4); every captured file kind is tried so.
- Digits: Python's int() refuses more than 4,300 decimal digits (a ValueError); a CPU list or
  an IPv4 part of 5,000 digits stopped `gen check` with an internal error. The class: every
  value any manifest field holds, as long digit text (generator/__init__.py raises the limit
  to the bound on every value; messages quote a long value cut, load/values.shown).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import generator
from generator.live import facts
from generator.live.checks import memory as memory_check
from generator.live.context import HostContext
from generator.live.facts import FactsError
from generator.live.host_snapshot import _loads_back, read_host
from generator.live.inventory_update import update_inventory
from generator.live.plan import host_plan
from generator.live.results import Status
from generator.load.limits import MAX_SCALAR_CHARS
from generator.pipeline.fleet import run, run_fleet

ROOT = Path(__file__).resolve().parent.parent
DIGITS = ["9" * 5000, "0-" + "9" * 5000, "1." + "9" * 5000 + ".3.4", "0." + "9" * 5000]


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _leaves(value, (*path, i))
    else:
        yield path


def _set(node: Any, path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value


def test_the_int_digit_limit_is_the_value_bound() -> None:
    import sys

    assert generator.INT_DIGITS_MOST == MAX_SCALAR_CHARS
    assert sys.get_int_max_str_digits() in (0, MAX_SCALAR_CHARS) or sys.get_int_max_str_digits() > MAX_SCALAR_CHARS
    start = time.process_time()
    assert int("9" * MAX_SCALAR_CHARS) > 0  # the largest digit text a value can hold: no ValueError
    assert time.process_time() - start < 1.0


@pytest.mark.parametrize("relpath", ["hosts/llm-two-full.yaml", "models/qwen3.5-122b-a10b.yaml"])
def test_every_field_as_long_digits_is_a_finding_never_a_crash(tmp_path: Path, relpath: str) -> None:
    """Each scalar of a real example, in turn, as each of DIGITS: diagnostics, never an exception."""
    repo = tmp_path / "repo"
    for part in ("models", "hosts", "templates", "catalogs"):
        shutil.copytree(ROOT / part, repo / part)
    yaml = YAML(typ="safe")
    original = yaml.load((ROOT / relpath).read_text(encoding="utf-8"))
    paths = list(_leaves(original))
    assert len(paths) > 15
    for path in paths:
        for digits in DIGITS:
            data = yaml.load((ROOT / relpath).read_text(encoding="utf-8"))
            _set(data, path, digits)
            with (repo / relpath).open("w", encoding="utf-8") as handle:
                yaml.dump(data, handle)
            result = run(repo, None)  # an exception here is the bug
            long = [str(d)[:80] for d in result.diagnostics if len(str(d)) > 2000]
            assert not long, (path, long)


# ----- gen host snapshot: the host's replies (a stand-in for nvidia-smi, in its formats)

def _query(name: str = "NVIDIA RTX PRO 6000 Blackwell Server Edition", index: str = "0",
           bus: str = "00000000:01:00.0", memory: str = "97887", cap: str = "12.0", driver: str = "580.95.05") -> str:
    return f"{index}, {name}, {bus}, {memory}, {cap}, {driver}\n"


_TOPOLOGY = "\tGPU0\tCPU Affinity\nGPU0\t X \t0-31\n"
_SYSFS = "/sys/devices/system/node/node0/cpulist:0-31\n/sys/bus/pci/devices/0000:01:00.0/numa_node:0\n"
_TORCH = '{"cuda": "12.8", "arch": ["sm_120"]}\n'
_BIG = "9" * 5000

# case -> (replies that differ from a healthy host's, the words of the FactsError)
HOST_REPLIES: dict[str, tuple[dict[str, str], str]] = {
    "index-superscript": ({"query": _query(index="\u00b2")}, "the index is not a number"),
    "index-other-digits": ({"query": _query(index="\u0661")}, "the index is not a number"),
    "index-5000-digits": ({"query": _query(index=_BIG)}, "characters): the index is not a number"),
    "index-out-of-range": ({"query": _query(index="4096")}, "is '4096': not a number from 0 to 1023"),
    "memory-superscript": ({"query": _query(memory="\u00b3")}, "memory.total is not MiB"),
    "memory-5000-digits": ({"query": _query(memory=_BIG)}, "memory.total is not MiB"),
    "memory-zero": ({"query": _query(memory="0")}, "is '0': not a number from 1 to 10000000"),
    "name-escape": ({"query": _query(name="NVIDIA \x1b]8;;http://x\x07RTX")}, "holds U+001B: 'NVIDIA \\x1b]8;;"),
    "name-bidi": ({"query": _query(name="NVIDIA \u202eRTX")}, "holds U+202E RIGHT-TO-LEFT OVERRIDE"),
    "name-nul": ({"query": _query(name="NV\x00IDIA")}, "holds U+0000"),
    "name-empty": ({"query": _query(name="")}, "the name of GPU 0 is empty"),
    "name-2-million": ({"query": _query(name="N" * 2_000_000)}, "is longer than 256 characters"),
    "driver-escape": ({"query": _query(driver="580\x1b[2J")}, "the driver version nvidia-smi prints holds U+001B"),
    "driver-not-a-version": ({"query": _query(driver="580; rm -rf /")}, "is not of the form the inventory takes"),
    "index-twice": ({"query": _query() + _query(bus="00000000:02:00.0")}, "one index or bus id twice"),
    "bus-twice": ({"query": _query() + _query(index="1")}, "one index or bus id twice"),
    "topology-index-5000-digits": ({"topology": f"\tGPU0\tGPU{_BIG}\tCPU Affinity\nGPU0\t X \tSYS\t0-31\n"},
                                   "not a number from 0 to 1023"),
    "sysfs-node-5000-digits": ({"sysfs": f"/sys/devices/system/node/node{_BIG}/cpulist:0-31\n"},
                               "a NUMA node sysfs lists is"),
    "sysfs-cpus-escape": ({"sysfs": "/sys/devices/system/node/node0/cpulist:0-31\x1b[31m\n"}, "holds U+001B"),
    "sysfs-cpus-not-a-list": ({"sysfs": "/sys/devices/system/node/node0/cpulist:0-31 zz\n"},
                              "is not of the form the inventory takes"),
    "sysfs-gpu-node-out-of-range": ({"sysfs": "/sys/devices/system/node/node0/cpulist:0-31\n"
                                     "/sys/bus/pci/devices/0000:01:00.0/numa_node:99999999\n"}, "from -1 to 1023"),
    "reply-past-the-bound": ({"summary": "x" * (facts.REPLY_MOST + 1)}, "gen reads at most"),
}

# torch answers that are no facts: the capture goes on, facts.torch_* stay as written, a note says why
TORCH_REPLIES = {
    "nested-5000-deep": "[" * 5000 + "]" * 5000 + "\n",
    "arch-not-text": '{"cuda": "12.8", "arch": [{"a": 1}]}\n',
    "arch-escape": '{"cuda": "12.8", "arch": ["sm_\\u001b[31m"]}\n',
    "cuda-escape": '{"cuda": "12.8\\u001b[2J", "arch": []}\n',
    "cuda-trailing-newline": '{"cuda": "12.8\\n", "arch": []}\n',  # re.match's "$" lets it through
    "arch-trailing-newline": '{"cuda": "12.8", "arch": ["sm_90\\n"]}\n',
    "arch-200000": '{"cuda": "12.8", "arch": [' + ",".join(['"sm_90"'] * 200_000) + "]}\n",
}


def _capture(repo: Path, **replies: str):  # type: ignore[no-untyped-def]
    answers = {facts.QUERY: replies.get("query", _query()), facts.TOPOLOGY: replies.get("topology", _TOPOLOGY),
               "grep": replies.get("sysfs", _SYSFS), "nvidia-smi": replies.get("summary", "CUDA Version: 13.0"),
               "/": replies.get("torch", _TORCH)}

    def stand_in(command: str) -> tuple[int, str, str]:
        return 0, answers[next(k for k in answers if command.startswith(k))], ""

    host, text = read_host(repo, "llm-two")
    live = facts.capture(stand_in, "/opt/sglang/bin/python")
    update = update_inventory(text, host, live)
    if update.changed:
        _loads_back(update.text, host.doc.path)
    return update


def test_a_healthy_hosts_replies_update_the_inventory(repo_copy: Path) -> None:
    update = _capture(repo_copy)
    assert update.changed and 'torch_arch_list: [sm_120]' in update.text


@pytest.mark.parametrize("case", sorted(HOST_REPLIES))
def test_a_reply_gen_cannot_take_as_a_fact_is_an_environment_error(case: str, repo_copy: Path) -> None:
    replies, words = HOST_REPLIES[case]
    with pytest.raises(FactsError) as exc:
        _capture(repo_copy, **replies)
    assert exc.value.exit_code == 3 and words in str(exc.value), str(exc.value)
    assert str(exc.value).isprintable() and len(str(exc.value)) < 400


@pytest.mark.parametrize("case", sorted(TORCH_REPLIES))
def test_a_torch_answer_that_is_no_fact_leaves_the_torch_facts_as_written(case: str, repo_copy: Path) -> None:
    update = _capture(repo_copy, torch=TORCH_REPLIES[case])
    note = next(n for n in update.notes if "could not be read" in n)
    assert "the torch probe printed" in note and note.isprintable() and len(note) < 400
    assert "torch_arch_list" not in update.text


# ----- the memory check's /get_server_info answer

class _Reply:
    def __init__(self, body: str) -> None:
        self.body = body


@pytest.mark.parametrize("body", ["[" * 5000 + "]" * 5000, '{"a": ' * 3000 + "1" + "}" * 3000, "9" * 5000, "x"])
def test_a_server_info_that_is_no_json_object_is_no_figures(body: str, monkeypatch: pytest.MonkeyPatch) -> None:
    [render] = run_fleet(ROOT, ["llm-two"], detail=True).renders
    plan = host_plan(render)
    monkeypatch.setattr(memory_check, "onhost", lambda *_a, **_k: [{"url": "u", "status": 200, "body": body}])
    results = memory_check.run(HostContext(plan, object()))  # type: ignore[arg-type]
    assert results and all(r.status is Status.WARN and "no figures to compare" in r.detail for r in results)


# ----- catalogs/sglang/*.json: every captured file kind, as JSON nested deeper than Python's decoder follows

CAPTURED = sorted(p.name for p in (ROOT / "catalogs" / "sglang").glob("*.json"))


@pytest.mark.parametrize("name", CAPTURED)
def test_every_captured_catalog_nested_too_deep_is_named_never_an_internal_error(name: str, repo_copy: Path) -> None:
    """The devices files (<pin>.devices.json, new this round) were read with json.loads: a RecursionError, exit 4."""
    from click.testing import CliRunner

    from generator.cli.main import main

    assert {"0.5.9.devices.json", "0.5.9.json", "0.5.9.env.json", "0.5.9.checks.json"} <= set(CAPTURED)
    (repo_copy / "catalogs" / "sglang" / name).write_text("[" * 100_000 + "]" * 100_000, encoding="ascii")
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code in (1, 3), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert name in result.stderr, result.stderr


def test_a_commit_with_a_trailing_newline_is_no_commit() -> None:
    """re.match(r"^[0-9a-f]{40}$") takes "<40 hex>\\n": "$" matches before a final newline."""
    from generator.sglang.snapshot import SnapshotError, check_commit

    commit = "0123456789abcdef0123456789abcdef01234567"
    assert check_commit(commit) == commit
    with pytest.raises(SnapshotError, match="not a full git commit hash"):
        check_commit(commit + "\n")


@pytest.mark.parametrize("name", ["rules.yaml", "env-known.yaml", "renames.yaml", "foreign-flags.yaml",
                                  "choice-synonyms.yaml", "sglang/0.5.9.env.json", "sglang/0.5.9.devices.json"])
def test_a_data_file_removed_from_catalogs_is_a_finding_never_an_internal_error(name: str, tmp_path: Path) -> None:
    """A pull request that deletes catalogs/rules.yaml stopped gen check with FileNotFoundError (exit 4)."""
    from click.testing import CliRunner

    from generator.cli.main import main

    repo = tmp_path / "repo"
    for part in ("models", "hosts", "templates", "catalogs", "output", "docs", "schemas"):
        shutil.copytree(ROOT / part, repo / part)
    (repo / "catalogs" / name).unlink()
    result = CliRunner().invoke(main, ["check", "--root", str(repo)])
    assert result.exit_code == 1, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
