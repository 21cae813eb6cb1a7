"""The real SGLang (0.5.9 and 0.5.23) gets the API key from the credential file gen points --config at.

A repo whose service lists ``secret_args: [--api-key, --admin-api-key]`` is rendered; the
unit's ExecStart is read back with the real systemd (``systemd --test``); the
``${CREDENTIALS_DIRECTORY}`` systemd expands at exec time is replaced by a folder holding the
operator's file; then SGLang's own parser, with SGLang's own ``ConfigArgumentMerger`` (what
``prepare_server_args`` runs for ``--config``), parses that argv. It must end up with both
keys set, while the argv itself holds neither.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sglang_worker
from systemd_unquote import systemd_load

from generator.pipeline.fleet import run

pytestmark = pytest.mark.sglang

ORACLE = r'''
import argparse, contextlib, json, sys
with contextlib.redirect_stdout(sys.stderr):
    from sglang.srt.server_args import ServerArgs
    try:
        from sglang.srt.server_args_config_parser import ConfigArgumentMerger  # 0.5.9
    except ImportError:
        from sglang.srt.utils.server_args_config_parser import ConfigArgumentMerger  # 0.5.23
argv = json.load(sys.stdin)
parser = argparse.ArgumentParser()
ServerArgs.add_cli_args(parser)
merged = ConfigArgumentMerger(parser).merge_config_with_args(argv)
ns = parser.parse_args(merged)
print("ORACLE " + json.dumps({"api_key": ns.api_key, "admin_api_key": ns.admin_api_key,
                              "model_path": ns.model_path}))
'''
KEY, ADMIN = "sk-oracle-4711", "adm-oracle-0815"


@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_sglang_reads_the_key_from_the_credential_not_the_argv(repo_copy: Path, tmp_path: Path, pin: str) -> None:
    host = repo_copy / "hosts/llm-two.yaml"
    text = host.read_text().replace('pin: "0.5.9"', f'pin: "{pin}"')
    host.write_text(text.replace("    port: 30000\n", "    port: 30000\n    secret_args: [--api-key, --admin-api-key]\n", 1))
    result = run(repo_copy, ["llm-two"])
    assert result.ok, "\n".join(map(str, result.diagnostics))
    [unit] = [f.text for f in result.renders[0].tree.files if f.relpath.endswith("sglang-qwen.service")]
    [argv] = systemd_load("sglang-qwen.service", unit, system_units=True).commands["ExecStart"]
    creds = tmp_path / "credentials"  # what systemd makes $CREDENTIALS_DIRECTORY
    creds.mkdir()
    (creds / "sglang-secrets.yaml").write_text(f"api-key: {KEY}\nadmin-api-key: {ADMIN}\n")
    words = [w.replace("\\${CREDENTIALS_DIRECTORY}", str(creds)).replace("${CREDENTIALS_DIRECTORY}", str(creds))
             for w in argv[3:]]
    assert f"{creds}/sglang-secrets.yaml" in words
    assert not any(KEY in w or ADMIN in w for w in argv), "a key in the argv"
    proc = sglang_worker.run(pin, ORACLE, json.dumps(words), "test_sglang_secrets_oracle.ORACLE")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("ORACLE ")]
    parsed = json.loads(line.removeprefix("ORACLE "))
    assert parsed == {"api_key": KEY, "admin_api_key": ADMIN, "model_path": "/shared/models/Qwen3.5-122B-A10B"}
