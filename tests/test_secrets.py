"""Secrets (issue 10, item 3): no rendered name reaches a secret path; secret flags and variables are
refused with a position and the fix; ``secret_args`` hands them to SGLang through a systemd
credential and ``--config``, so no value is in the unit, the argv, output/ or the playbook.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ansible.parsing.dataloader import DataLoader
from click.testing import CliRunner, Result
from repo_builder import host_yaml, model_yaml, write_repo
from systemd_unquote import analyze_verify, systemd_load

from generator.cli.main import main
from generator.emit.render import env_path, unit_path
from generator.emit.secrets import (CONFIG_ARG, credential_path, is_secret_action, is_secret_env_name,
                                    secret_env_path)
from generator.sglang.catalog import load_catalog

ROOT = Path(__file__).resolve().parent.parent
UNIT = "output/llm-two/etc/systemd/system/sglang-qwen.service"
PORT_LINE = "    port: 30000\n"


def _gen(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _service_lines(repo: Path, extra: str) -> None:
    host = repo / "hosts/llm-two.yaml"
    text = host.read_text()
    assert PORT_LINE in text
    host.write_text(text.replace(PORT_LINE, PORT_LINE + extra, 1))


@pytest.mark.parametrize(("pin", "secret"), [
    ("0.5.9", {"--admin-api-key", "--api-key"}),
    ("0.5.23", {"--admin-api-key", "--api-key", "--ssl-keyfile-password"}),
])
def test_secret_flags_are_found_from_the_catalog_names_and_help(pin: str, secret: set[str]) -> None:
    catalog = load_catalog(ROOT, pin)
    found = {a.canonical for a in catalog.actions if is_secret_action(a)}
    assert found == secret  # and not the dozen "*-token" flags about LLM tokens
    assert not is_secret_action(catalog.by_option("--kt-max-deferred-experts-per-token"))


@pytest.mark.parametrize(("name", "secret"), [
    ("HF_TOKEN", True), ("HUGGING_FACE_HUB_TOKEN", True), ("OPENAI_API_KEY", True), ("MY_APIKEY", True),
    ("GITHUB_TOKEN", True), ("DB_PASSWORD", True), ("X_SECRET", True), ("aws_secret_access_key", True),
    ("api_key", True), ("CUDA_VISIBLE_DEVICES", False), ("SGLANG_MAX_TOKENS", False), ("TOKENIZERS_PARALLELISM", False),
    ("NCCL_SOCKET_IFNAME", False), ("KEYRING", False),
])
def test_secret_env_names(name: str, secret: bool) -> None:
    assert is_secret_env_name(name) is secret


def test_no_rendered_name_can_reach_a_secret_path() -> None:
    """The reported collision, and the class: names that try to form another service's secret path."""
    names = ["qwen", "qwen.secret", "secrets", "sglang-qwen", "qwen.yaml", "sglang-qwen.yaml", "credstore", "x.env",
             "secrets.qwen", "a", "a.b"]
    rendered = {p(n) for n in names for p in (unit_path, env_path)}
    secret = {p(n) for n in names for p in (secret_env_path, credential_path)}
    assert not rendered & secret
    assert all(s.startswith(("etc/sglang/secrets/", "etc/credstore/")) for s in secret)
    assert len({secret_env_path(n) for n in names}) == len({credential_path(n) for n in names}) == len(names)


def test_qwen_dot_secret_service_renders_nothing_on_qwens_secret_file(tmp_path: Path) -> None:
    """The reported case: services qwen (secret_env) and qwen.secret on one host."""
    services = ("  - {name: qwen, model: m, port: 30000, gpus: [0], secret_env: true, secret_args: [--api-key]}\n"
                "  - {name: qwen.secret, model: m, port: 30001, gpus: [1]}\n")
    root = write_repo(tmp_path / "repo", {"h": host_yaml("h", services=services)}, {"m": model_yaml("m")})
    for part in ("templates", "catalogs"):
        shutil.copytree(ROOT / part, root / part)
    result = _gen("render", "--all", "--root", str(root))
    assert result.exit_code == 0, result.stderr
    files = {str(p.relative_to(root / "output/h")) for p in (root / "output/h").rglob("*") if p.is_file()}
    assert "etc/sglang/qwen.secret.env" in files  # qwen.secret's own env file, no longer anyone's secret
    assert not files & {secret_env_path("qwen"), credential_path("qwen")}
    unit = (root / "output/h/etc/systemd/system/sglang-qwen.service").read_text()
    assert "EnvironmentFile=/etc/sglang/secrets/qwen.env" in unit.splitlines()


@pytest.mark.parametrize(("lines", "expected"), [
    ("    args: {--api-key: sk-123}\n", "hosts/llm-two.yaml:38:12: error[K001]: --api-key carries a secret"),
    ("    args: {--api-k: sk-123}\n", "hosts/llm-two.yaml:38:12: error[K001]: --api-key carries a secret"),
    ("    args: {--admin-api-key: sk-123}\n", "hosts/llm-two.yaml:38:12: error[K001]: --admin-api-key carries a secret"),
    ("    env: {HF_TOKEN: hf_abc}\n", "hosts/llm-two.yaml:38:11: error[K002]: HF_TOKEN holds a secret"),
    ("    env: {OPENAI_API_KEY: x}\n", "hosts/llm-two.yaml:38:11: error[K002]: OPENAI_API_KEY holds a secret"),
    ("    secret_args: [--api-keyy]\n", "hosts/llm-two.yaml:38:19: error[K003]: secret_args: --api-keyy is not a flag"),
    ("    secret_args: [--trust-remote-code]\n", "hosts/llm-two.yaml:38:19: error[K003]: secret_args: --trust-remote-code"),
    ("    secret_args: [--api-key]\n    args: {--api-key: x}\n", "hosts/llm-two.yaml:38:19: error[K003]: secret_args: "
     "--api-key is also given"),
    ("    secret_args: [--api-key]\n    args: {--config: /etc/x.yaml}\n", "hosts/llm-two.yaml:39:12: error[K003]: "
     "--config is given here"),
])
def test_secret_flags_and_variables_are_refused_with_position_and_fix(repo_copy: Path, lines: str,
                                                                        expected: str) -> None:
    _service_lines(repo_copy, lines)
    before = {p: p.read_bytes() for p in (repo_copy / "output").rglob("*") if p.is_file()}
    result = _gen("render", "--all", "--root", str(repo_copy))
    assert result.exit_code == 1, result.stderr
    assert any(ln.startswith(expected) for ln in result.stderr.splitlines()), result.stderr
    assert "sk-123" not in result.stderr and "hf_abc" not in result.stderr  # the value is never echoed
    if "K001" in expected or "K002" in expected:
        assert "secret_args: [" in result.stderr or "secret_env: true" in result.stderr  # the fix is named
    assert {p: p.read_bytes() for p in (repo_copy / "output").rglob("*") if p.is_file()} == before


def test_model_env_secret_is_refused_at_the_model(repo_copy: Path) -> None:
    model = repo_copy / "models/qwen3.5-122b-a10b.yaml"
    model.write_text(model.read_text() + "env:\n  HUGGING_FACE_HUB_TOKEN: hf_abc\n")
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 1
    assert [ln for ln in result.stderr.splitlines() if "K002" in ln][0].startswith(
        "models/qwen3.5-122b-a10b.yaml:")


def test_secret_args_render_a_credential_and_config_and_no_value(repo_copy: Path) -> None:
    _service_lines(repo_copy, "    secret_args: [--api-key, --admin-api-key]\n")
    result = _gen("render", "--all", "--root", str(repo_copy))
    assert result.exit_code == 0, result.stderr
    unit = (repo_copy / UNIT).read_text()
    assert "LoadCredential=sglang-secrets.yaml:/etc/credstore/sglang-qwen.yaml" in unit.splitlines()
    assert analyze_verify("sglang-qwen.service", unit.replace("/root/sglang-main/.venv/bin/python", "/bin/echo")) == ""
    parsed = systemd_load("sglang-qwen.service", unit, system_units=True)
    [argv] = parsed.commands["ExecStart"]
    # systemd keeps ${CREDENTIALS_DIRECTORY} for exec time (shown escaped as \$ in the dump)
    assert argv[-2:] == ["--config", "\\" + CONFIG_ARG] or argv[-2:] == ["--config", CONFIG_ARG], argv
    assert _gen("ansible", "--root", str(repo_copy)).exit_code == 0
    hosts = DataLoader().load((repo_copy / "ansible/inventory.yml").read_text())["all"]["children"]
    assert hosts["sglang_hosts"]["hosts"]["llm-two"]["gen_secret_env"] == ["/etc/credstore/sglang-qwen.yaml"]
    everything = "".join(p.read_text() for p in (repo_copy / "output").rglob("*") if p.is_file())
    assert "credstore/sglang-qwen.yaml" in everything and "api-key: " not in everything


def test_gen_import_refuses_secrets_spelled_with_equals_and_prints_no_manifest() -> None:
    """``--api-key=sk-...`` and ``HF_TOKEN=...`` in an imported command: K001/K002, no value echoed."""
    result = _gen("import", "--sglang", "0.5.9", "--", "HF_TOKEN=hf_abc", "python", "-m", "sglang.launch_server",
                  "--model-path", "/shared/models/x", "--api-key=sk-123", "--admin-api-key", "sk-456")
    assert result.exit_code == 1, result.output
    errors = [ln for ln in result.stderr.splitlines() if ": error[" in ln]
    assert [e.split(": error[")[1][:4] for e in errors] == ["K002", "K001", "K001"], result.stderr
    assert "sk-123" not in result.output and "sk-456" not in result.output and "hf_abc" not in result.output
    assert result.stdout == ""


def test_verify_expects_the_credentials_directory_systemd_252_sets() -> None:
    """The live plan compares the running argv with /run/credentials/<unit>/ (seen live in the test host)."""
    from generator.emit.secrets import runtime_argv

    assert runtime_argv(("/py", "--config", CONFIG_ARG, "--x", "${CREDENTIALS_DIRECTORY}"), "sglang-q.service") == (
        "/py", "--config", "/run/credentials/sglang-q.service/sglang-secrets.yaml", "--x", "${CREDENTIALS_DIRECTORY}")
