"""Secrets in the real systemd test host: the key reaches the service only through its credential.

The fixture service gets ``secret_args: [--api-key]``; the operator's file
``/etc/credstore/sglang-chat.yaml`` (root, 0600) holds the key. systemd 252 must expand
``${CREDENTIALS_DIRECTORY}`` in ExecStart, the running stand-in's ``/proc/<pid>/cmdline`` must
not hold the key, the stand-in (running as the service user, sandboxed) must have read the
file, and ``systemctl show`` (the real parse) must show every escaped setting as written.
gen verify passes with the file in place and fails when it is 0644 or a symlink.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.live import verify
from generator.pipeline.fleet import run

from .deploy import HOST, deploy, fixture_repo, provision, push, render_plan, sh, write_ssh_config
from .host import TestHost, free_port

pytestmark = pytest.mark.live
ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-live-credential-4711"
CRED = "/etc/credstore/sglang-chat.yaml"
UNIT = "sglang-chat.service"


def test_api_key_only_through_the_credential(test_host: TestHost, tmp_path: Path) -> None:
    root = fixture_repo(tmp_path / "repo", free_port())
    inventory = root / "hosts" / f"{HOST}.yaml"
    inventory.write_text(inventory.read_text().replace("    gpus: [0]\n", "    gpus: [0]\n    secret_args: [--api-key]\n"))
    plan, files = render_plan(root)
    assert not any(KEY in data.decode() for data, _ in files.values())
    provision(test_host, plan)
    push(test_host, {CRED: (f"# the operator's secret options\napi-key: {KEY}\n".encode(), 0o600)})
    try:
        deploy(test_host, plan, files)
        pid = sh(test_host, f"systemctl show -P MainPID {UNIT}").stdout.strip()
        assert pid not in ("", "0")
        argv = sh(test_host, f"tr '\\0' '\\n' < /proc/{pid}/cmdline").stdout.splitlines()
        assert KEY not in "\n".join(argv)
        assert argv[-2:] == ["--config", f"/run/credentials/{UNIT}/sglang-secrets.yaml"], argv
        journal = sh(test_host, f"journalctl -b --no-pager -o cat -u {UNIT}").stdout
        assert f"--config /run/credentials/{UNIT}/sglang-secrets.yaml read, keys: api-key" in journal, journal
        assert KEY not in journal
        # systemctl show prints "[unprintable]" for LoadCredential= in 252; the bus property is the parse.
        bus_path = "/org/freedesktop/systemd1/unit/" + UNIT.replace("-", "_2d").replace(".", "_2e")
        loaded = sh(test_host, f"busctl get-property org.freedesktop.systemd1 {bus_path}"
                               " org.freedesktop.systemd1.Service LoadCredential").stdout.strip()
        assert loaded == f'a(ss) 1 "sglang-secrets.yaml" "{CRED}"', loaded
        ssh_config = write_ssh_config(test_host, tmp_path / "ssh_config")
        args = ["--host", HOST, "--ssh-config", str(ssh_config), "--root", str(root)]
        good = CliRunner().invoke(verify, args)
        assert good.exit_code == 0, good.output  # process-argv too: /run/credentials/... is the rendered word
        assert any(ln.startswith("PASS ") and "secret-config" in ln for ln in good.output.splitlines()), good.output
        sh(test_host, f"chmod 0644 {CRED}")
        loose = CliRunner().invoke(verify, args)
        assert any(ln.startswith("FAIL") and "secret-config" in ln and "mode 0644" in ln
                   for ln in loose.output.splitlines()), loose.output
        sh(test_host, f"mv {CRED} {CRED}.real && chmod 0600 {CRED}.real && ln -s {CRED}.real {CRED}")
        linked = CliRunner().invoke(verify, args)
        assert any(ln.startswith("FAIL") and "secret-config" in ln and "is a symlink" in ln
                   for ln in linked.output.splitlines()), linked.output
    finally:
        sh(test_host, f"systemctl disable --now {UNIT}; systemctl reset-failed {UNIT}; rm -f {CRED} {CRED}.real",
           check=False)


def test_hostile_settings_read_back_by_the_hosts_systemd(test_host: TestHost, tmp_path: Path) -> None:
    """The hostile fixture's unit, loaded (not started) by the test host's systemd: `systemctl show`."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "tests" / "fixtures" / "hostile" / "repo", repo)
    for part in ("templates", "catalogs"):
        shutil.copytree(ROOT / part, repo / part)
    result = run(repo, None)
    assert result.ok, "\n".join(map(str, result.diagnostics))
    [unit] = [f.text for f in result.renders[0].tree.files if f.relpath.endswith("/sglang-evil.service")]
    path = "/etc/systemd/system/sglang-evil.service"
    push(test_host, {path: (unit.encode(), 0o644)})
    try:
        sh(test_host, "systemctl daemon-reload")
        lines = sh(test_host, "systemctl show -p RequiresMountsFor -p ReadOnlyPaths -p BindReadOnlyPaths"
                              " -p EnvironmentFiles -p LoadState sglang-evil.service").stdout.splitlines()
        shown: dict[str, list[str]] = {}
        for ln in lines:  # systemctl quotes a value with blanks; one line per EnvironmentFiles entry
            key, _, value = ln.partition("=")
            shown.setdefault(key, []).append(value)
        assert shown["LoadState"] == ["loaded"]
        assert set(shlex.split(shown["RequiresMountsFor"][0])) == {
            "/shared/mo dels%n", "/var/lib/sglang-evil", "/var/tmp", "/var/cache/sglang-evil"}, shown
        assert shlex.split(shown["ReadOnlyPaths"][0]) == ["/shared/mo dels%n"]
        assert shown["BindReadOnlyPaths"] == ["/root/sg:/etc:norbind:/root/sg:/etc:norbind:rbind"], shown
        assert shown["EnvironmentFiles"] == ["/etc/sglang/evil.env (ignore_errors=no)",
                                             "/etc/sglang/secrets/evil.env (ignore_errors=no)"], shown
    finally:
        sh(test_host, f"rm -f {path}; systemctl daemon-reload", check=False)
