"""``--format json`` of verify and status against the real systemd test host (marker ``live``).

The clean deploy of tests/live/test_verify_live.py (same fixture repo and stand-ins): the
JSON document carries every check the text mode prints, with the same exit code.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.main import main

from .deploy import HOST, deploy, fixture_repo, provision, render_plan, stop_units, write_ssh_config
from .host import TestHost, free_port

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def deployed(test_host: TestHost, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """The fixture repo deployed and started once; the units stopped at the end."""
    tmp = tmp_path_factory.mktemp("live-formats")
    root = fixture_repo(tmp / "repo", free_port())
    plan, files = render_plan(root)
    ssh_config = write_ssh_config(test_host, tmp / "ssh_config")
    provision(test_host, plan)
    deploy(test_host, plan, files)
    try:
        yield root, ssh_config
    finally:
        stop_units(test_host, plan)


def _run(*args: str) -> tuple[int, dict, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, json.loads(res.stdout), res.stderr


def test_verify_json_of_a_clean_deploy(deployed: tuple[Path, Path]) -> None:
    root, ssh_config = deployed
    code, doc, stderr = _run("verify", "--host", HOST, "--ssh-config", str(ssh_config), "--root", str(root),
                             "--format", "json")
    assert code == 0 and doc["exit_code"] == 0, doc
    assert stderr == ""
    [host] = doc["hosts"]
    assert host["verdict"] == "ok" and host["failed"] == 0 and host["passed"] == len(host["checks"]) > 15
    names = {c["check"] for c in host["checks"]}
    assert {"file-content", "active", "health", "process-argv", "gpus-visible"} <= names
    assert all(c["status"] == "PASS" and c["host"] == HOST for c in host["checks"])
    # The same checks as the text mode, one line each.
    text = CliRunner().invoke(main, ["verify", "--host", HOST, "--ssh-config", str(ssh_config), "--root", str(root)])
    assert len([ln for ln in text.stdout.splitlines() if ln.startswith("PASS ")]) == host["passed"]


def test_status_json_of_a_clean_deploy(deployed: tuple[Path, Path]) -> None:
    root, ssh_config = deployed
    code, doc, _ = _run("status", "--host", HOST, "--ssh-config", str(ssh_config), "--root", str(root),
                        "--format", "json")
    assert code == 0, doc
    assert doc["services"] and all(s["healthy"] for s in doc["services"])
    svc = doc["services"][0]
    assert svc["state"]["ActiveState"] == "active" and svc["unit"].startswith("sglang-")
