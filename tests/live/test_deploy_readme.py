"""The README's Deploy section, run as written (issue 23 item 5).

The shell block of "Try it all on a local test host" is taken from README.md and run line
by line in one bash from the checkout's root, as an operator would paste it: boot a
stand-in host, render, write the playbook, check, preview, preflight, apply, verify,
status, stop. Only the state folder is this test's own (and the container is tied to
this process, so a crash cannot leave it running). Then the change the section suggests
next: one flag, one restart, ``last rollout: applied``.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
DEMO = "/tmp/gen-demo"


def readme_block() -> list[str]:
    """The commands of the README's local test host walk-through."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Try it all on a local test host", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def run(lines: list[str], state: Path) -> subprocess.CompletedProcess[str]:
    script = "set -e\n" + "\n".join(line.replace(DEMO, str(state)) for line in lines) + "\n"
    return subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=1200,
                          check=False, env=os.environ | {"NO_COLOR": "1", "ANSIBLE_NOCOLOR": "1"})


def test_the_deploy_section_runs_as_written_to_a_verified_service(tmp_path: Path) -> None:
    lines = readme_block()
    assert lines[0].startswith("scripts/test-host boot demo --standin --state-dir " + DEMO), lines
    assert lines[-1].endswith("scripts/test-host stop --state-dir " + DEMO), lines
    state = tmp_path / "demo"
    # The container ends with this process whatever happens (the README's command plus a guard).
    lines[0] += f" --owner-pid {os.getpid()}"
    try:
        done = run(lines[:-1], state)
        assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-6000:]
        out = done.stdout
        assert "preview: preflight would pass (sglang-chat.service)" in out, out
        assert re.search(r"^gen: demo: \d+ passed, 0 failed$", out, re.M), out  # gen verify
        assert "sglang-chat.service: loaded active (running)" in out and "last rollout: applied at " in out, out
        # The next round the section suggests: one flag, one restart, applied.
        host = state / "repo" / "hosts" / "demo.yaml"
        host.write_text(host.read_text() + "    args:\n      --max-running-requests: 16\n")
        again = run(lines[1:3] + ["gen render --all && gen ansible",
                                  "ansible-playbook -i ansible/inventory.yml ansible/site.yml",
                                  f"gen status --host demo --ssh-config {DEMO}/ssh_config"], state)
        assert again.returncode == 0, again.stdout[-6000:] + again.stderr[-6000:]
        assert re.search(r"demo\s+: ok=\d+\s+changed=[1-9]", again.stdout), again.stdout
        assert "last rollout: applied at " in again.stdout
    finally:
        stop = run([lines[-1].split("&& ", 1)[1]], state)  # the stop itself, from the checkout's root
        assert stop.returncode == 0, stop.stderr
