"""Fast tests of gen verify's parts that need no host: on-host checkpoint reader, plan, output."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from generator.live import onhost
from generator.live.checks.paths import _mentions
from generator.live.plan import host_plan
from generator.live.preflight import PROGRAM_WORDS, interpret, payload
from generator.live.remote import onhost_source, parse_result
from generator.live.results import result
from generator.live.target import Target, target_for
from generator.pipeline.fleet import run

from .standins.fake_model import safetensors_bytes, write_eagle3_draft, write_model

ROOT = Path(__file__).resolve().parents[2]


def test_safetensors_size_comes_from_the_header(tmp_path: Path) -> None:
    """8 + header length + last data end offset is the file size the stdlib writer produces."""
    data = safetensors_bytes(["a", "b"], elements=3)
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    assert onhost.expected_size(header, length) == len(data) == 8 + length + 24


def test_complete_model_has_no_problems(tmp_path: Path) -> None:
    """Every shard named in the index is there at its full size."""
    found = onhost.check_weights(str(write_model(tmp_path / "m")))
    assert found["problems"] == [] and len(found["shards"]) == 2
    assert found["index"] == "model.safetensors.index.json"


def test_missing_truncated_and_foreign_shards_are_named(tmp_path: Path) -> None:
    """A missing shard, a cut one, and one that lacks tensors the index names."""
    folder = write_model(tmp_path / "m")
    (folder / "model-00002-of-00002.safetensors").unlink()
    first = folder / "model-00001-of-00002.safetensors"
    first.write_bytes(first.read_bytes()[:-1])
    problems = onhost.check_weights(str(folder))["problems"]
    assert "model-00002-of-00002.safetensors: missing" in problems
    assert any(p.startswith("model-00001-of-00002.safetensors: size ") and "header says" in p for p in problems)
    first.write_bytes(safetensors_bytes(["other.weight"]))
    assert any("lacks 2 tensor(s) the index names" in p for p in onhost.check_weights(str(folder))["problems"])


def test_folder_without_checkpoint_is_a_problem(tmp_path: Path) -> None:
    """No index and no model.safetensors; no folder at all."""
    (tmp_path / "empty").mkdir()
    assert "neither" in onhost.check_weights(str(tmp_path / "empty"))["problems"][0]
    assert "no such directory" in onhost.check_weights(str(tmp_path / "nope"))["problems"][0]


def test_eagle3_drafter_names_are_read_from_the_header(tmp_path: Path) -> None:
    """midlayer.* passes, the unrenamed layers.0.* (incident 1) fails, via the on-host preflight part."""
    good = write_eagle3_draft(tmp_path / "good")
    bad = write_eagle3_draft(tmp_path / "bad", layer_prefix="layers.0")
    for folder, ok in ((good, True), (bad, False)):
        res = onhost._checkpoint_results({"draft_path": str(folder), "algorithm": "EAGLE3"})
        names = [r for r in res if r["check"] == "eagle3-draft-names"][0]
        assert names["ok"] is ok, names
    assert "rename layers.0.* to midlayer.*" in names["detail"]


def test_onhost_script_runs_standalone(tmp_path: Path) -> None:
    """The script as sent to a host (python -c SOURCE weights DIR) prints its marked result."""
    import subprocess
    import sys

    folder = write_model(tmp_path / "m")
    out = subprocess.run([sys.executable, "-I", "-c", onhost_source(), "weights", str(folder)],
                         capture_output=True, text=True, check=True)
    assert parse_result(out.stdout)[0]["problems"] == []


def test_retired_path_mentions_are_whole_paths() -> None:
    """/data and /data/x count; /database, /srv/data and /data.old do not."""
    assert _mentions("--model-path /data/m", ("/data",)) == ["/data"]
    assert _mentions("X=/data", ("/data",)) == ["/data"]
    assert _mentions("/database /srv/data/x /data.old", ("/data",)) == []


def test_plan_of_the_example_host() -> None:
    """llm-two: its unit, argv, GPUs kept and given to the VM, and ssh only as written."""
    render = run(ROOT, ["llm-two"]).renders[0]
    plan = host_plan(render)
    svc = plan.service("qwen")
    assert svc.unit_path == "/etc/systemd/system/sglang-qwen.service"
    assert svc.argv[:PROGRAM_WORDS] == ("/root/sglang-main/.venv/bin/python", "-m", "sglang.launch_server")
    assert svc.base_url == "http://127.0.0.1:30000" and svc.served_model_name == "qwen3.5-122b-a10b"
    assert [i for i, _ in plan.host_gpus] == [0, 1, 2, 3]
    assert [(i, vm) for i, _, vm in plan.vm_gpus] == [(4, "vm-gpu-101"), (5, "vm-gpu-101"), (6, "vm-gpu-101"),
                                                      (7, "vm-gpu-101")]
    assert ".gen-managed" not in {f.path for f in plan.files}
    target = target_for(plan, None)
    assert target == Target("llm-two.lan", "root", None, None)
    assert target.spec == "ssh://root@llm-two.lan"
    assert target.ssh_argv()[-2:] == ["--", "llm-two.lan"] and "-p" not in target.ssh_argv()


def test_preflight_payload_and_results_round_trip() -> None:
    """The payload carries SGLang's argv (no program words); results map back to lines."""
    plan = host_plan(run(ROOT, ["llm-two"]).renders[0])
    doc = json.loads(__import__("base64").b64decode(payload(plan.services)))
    assert doc["services"][0]["argv"][:2] == ["--model-path", "/shared/models/Qwen3.5-122B-A10B"]
    stdout = "log line\n\n" + onhost.RESULT_MARKER + "\n" + json.dumps({
        "sglang_version": "0.5.9", "notes": [],
        "services": {"qwen": [{"check": "sglang-parse", "ok": False, "detail": "exit status 2:\nusage: x"}]}})
    rep = interpret(plan, plan.services, 0, stdout, "")
    assert [r.line() for r in rep.results] == [
        "PASS llm-two - sglang-version: sglang 0.5.9 at /root/sglang-main/.venv/bin/python",
        "FAIL llm-two qwen sglang-parse: exit status 2:"]
    assert rep.failed and "usage: x" in rep.results[1].render()
    crashed = interpret(plan, plan.services, 1, "", "Traceback ...")
    assert crashed.failed and "Traceback" in crashed.results[0].render()


def test_result_lines_and_evidence() -> None:
    """One line per check; a failure's evidence follows behind the gutter, in full."""
    ok = result(True, "h", "s", "c", "fine", "hidden")
    bad = result(False, "h", "-", "c", "broken", "a\n\nb")
    assert ok.render() == "PASS h s c: fine"
    assert bad.render() == "FAIL h - c: broken\n    | a\n    | \n    | b"
