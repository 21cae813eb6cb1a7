"""The last rollout's outcome per service, kept on the host by the playbook (issue 23 item 5).

``gen-rollout.py record`` (generator/live/onhost_rollout.py) writes it; the record tasks of
rollout.yml build its argument (rendered here by ansible-core's Templar, as the play
would); ``gen status`` prints it (generator/live/rollouts.py).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from generator.emit.ansible.tasks import tasks_text
from generator.live import onhost_rollout
from generator.live.rollouts import OUTCOMES_DIR, outcome_line


def test_the_folder_is_the_one_the_on_host_script_writes() -> None:
    assert OUTCOMES_DIR == onhost_rollout.OUTCOMES


def test_record_keeps_one_file_per_unit_with_its_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onhost_rollout, "OUTCOMES", str(tmp_path / "rollouts"))
    out = onhost_rollout.record({"outcome": "rolled back", "units": ["sglang-a.service", "sglang-b.service", "../x"],
                                 "reasons": {"sglang-a.service": "error: unrecognized arguments: --x"},
                                 "reason": "rolled back with its batch: h1 failed", "down": ["sglang-b.service"],
                                 "inventory": "h1", "digest": "sha256:00"})
    assert sorted(out) == ["sglang-a.service", "sglang-b.service"]  # never a path
    a = json.loads((tmp_path / "rollouts/sglang-a.service.json").read_text())
    assert (a["outcome"], a["reason"], a["inventory"]) == ("rolled back", "error: unrecognized arguments: --x", "h1")
    b = json.loads((tmp_path / "rollouts/sglang-b.service.json").read_text())
    assert b["outcome"] == "failed, and the rollback did not come back healthy"
    assert b["reason"] == "rolled back with its batch: h1 failed" and a["at"].endswith("Z")
    assert outcome_line(a) == f"last rollout: rolled back at {a['at']}: error: unrecognized arguments: --x"
    assert outcome_line(None).startswith("last rollout: none recorded")
    assert not list((tmp_path / "rollouts").glob("*.tmp-*"))
    assert out["sglang-a.service"] == a  # what record returns is what it wrote
    # The next rollout overwrites the unit's file (the folder exists by then).
    # Without inventory and digest (a hand-run record) both are empty, never the text "None".
    again = onhost_rollout.record({"outcome": "healthy", "units": ["sglang-a.service"]})
    assert json.loads((tmp_path / "rollouts/sglang-a.service.json").read_text()) == again["sglang-a.service"]
    assert {k: again["sglang-a.service"][k] for k in ("outcome", "reason", "inventory", "digest")} == {
        "outcome": "healthy", "reason": "", "inventory": "", "digest": ""}


def _record_spec(name: str, variables: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "rollout.yml").write_text(tasks_text())
    tasks = DataLoader().load_from_file(str(tmp_path / "rollout.yml"), trusted_as_template=True)
    (task,) = [t for t in tasks if t["name"].startswith(name)]
    for var, expr in (task.get("vars") or {}).items():
        variables = variables | {var: Templar(loader=DataLoader(), variables=variables).template(expr)}
    cmd = Templar(loader=DataLoader(), variables=variables).template(task["ansible.builtin.script"]["cmd"])
    word, mode, arg = cmd.split(" ")
    assert (word, mode) == ("gen-rollout.py", "record")
    return dict(json.loads(base64.b64decode(arg)))


BASE = {"inventory_hostname": "h1", "gen_digest": "sha256:ab"}


def test_a_preflight_refusal_is_recorded_with_its_deciding_line(tmp_path: Path) -> None:
    spec = _record_spec("Keep the outcome of each service preflight refused", BASE | {"gen_pre_failures": [
        "sglang-a.service on h1 sglang-preflight: exit status 2: x: error: unrecognized arguments: --y\nmore"]}, tmp_path)
    assert spec["outcome"] == "refused by preflight" and spec["units"] == ["sglang-a.service"]
    assert spec["reasons"] == {"sglang-a.service": "sglang-a.service on h1 sglang-preflight: exit status 2: x: error: "
                                                   "unrecognized arguments: --y"}


def test_applied_and_rolled_back_are_recorded_apart(tmp_path: Path) -> None:
    failures = [{"unit": "sglang-a.service", "reason": "RuntimeError: boom"}]
    variables = BASE | {"gen_restart": ["sglang-a.service", "sglang-b.service"], "gen_failures": failures,
                        "gen_rollback": [{"unit": "sglang-a.service"}], "gen_rollout_group": "",
                        "gen_batch_failed": ["h1"], "gen_rewait": {}}
    applied = _record_spec("Keep the outcome of each restarted service that stays", variables, tmp_path)
    assert (applied["outcome"], applied["units"]) == ("applied", ["sglang-b.service"])
    rolled = _record_spec("Keep the outcome of each rolled-back service", variables, tmp_path)
    assert (rolled["outcome"], rolled["units"], rolled["reasons"]) == \
        ("rolled back", ["sglang-a.service"], {"sglang-a.service": "RuntimeError: boom"})
    assert rolled["reason"] == "rolled back with its batch: h1 failed" and rolled["down"] == []


def test_the_outcome_line_is_one_printable_line_whatever_the_host_kept() -> None:
    """The reason is a line of the service's journal (it may hold what a client sent): a newline
    or ESC in it must not start a fake CI line or reach the terminal raw."""
    doc = {"outcome": "rolled back\x1b[2J", "at": "2026-12-02T03:00:00Z",
           "reason": "error: x\n::error::forged\x1b]8;;http://e\x07"}
    line = outcome_line(doc)
    assert "\n" not in line and "\x1b" not in line and "\x07" not in line
    assert line == ("last rollout: rolled back\\x1b[2J at 2026-12-02T03:00:00Z: "
                    "error: x\\n::error::forged\\x1b]8;;http://e\\x07")
