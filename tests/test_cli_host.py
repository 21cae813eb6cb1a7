"""CLI tests of ``gen host snapshot`` that need no host: usage, a broken inventory, an unreachable host.

The capture itself runs over real SSH against the systemd test host (tests/live/test_host_snapshot_live.py).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

from click.testing import CliRunner, Result

from generator.cli.main import main


def _gen(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    print("stdout:", result.stdout, "\nstderr:", result.stderr)
    return result


def test_an_unknown_host_is_a_usage_error(repo_copy: Path) -> None:
    result = _gen("host", "snapshot", "nope", "--root", str(repo_copy))
    assert result.exit_code == 2 and "nope" in result.stderr


def test_an_inventory_with_errors_is_not_captured(repo_copy: Path) -> None:
    path = repo_copy / "hosts" / "llm-two.yaml"
    text = path.read_text()
    path.write_text(text.replace('memory_mib: 97887, compute_cap: "12.0", ', "", 1).replace("memory_gb: 96, ", "", 1))
    result = _gen("host", "snapshot", "llm-two", "--root", str(repo_copy))
    assert result.exit_code == 1
    assert "error[R040]: GPU 0 gives neither memory_mib nor memory_gb" in result.stderr


def test_an_unreachable_host_is_an_environment_failure(repo_copy: Path, tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = repo_copy / "hosts" / "llm-two.yaml"
    before = path.read_text().replace("address: llm-two.lan\nssh:\n  user: root\n",
                                      f"address: 127.0.0.1\nssh:\n  user: root\n  port: {port}\n")
    path.write_text(before)
    config = tmp_path / "ssh_config"
    config.write_text("Host *\n  BatchMode yes\n  ConnectTimeout 5\n  StrictHostKeyChecking no\n"
                      "  UserKnownHostsFile /dev/null\n")
    result = _gen("host", "snapshot", "llm-two", "--root", str(repo_copy), "--ssh-config", str(config),
                  "--format", "json")
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert doc["command"] == "host snapshot" and "127.0.0.1" in doc["errors"][0]
    assert path.read_text() == before
