"""``env:`` cannot override a variable gen sets itself (issue 22 item 13), the list read from the rendered unit.

systemd reads the environment file after the unit's ``Environment=`` (systemd.exec(5)),
so ``env: {HOME: /root}`` silently replaced the unit's ``HOME=%S/sglang-qwen``. Every
variable the rendered unit assigns, every variable systemd defines for a setting the unit
has, and every variable gen writes into the environment file is E004 in ``env:``, naming
gen's setting. The list is derived, not kept: a template that assigns one more variable
makes it gen's too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.main import main
from generator.emit.owned_env import owned_variables
from generator.pipeline.fleet import run

ROOT = Path(__file__).resolve().parent.parent
# What the example repository's units make gen's own (its hosts run as root and as sglang,
# one multi-node pair; qwen on llm-two gets secret_args below).
EXPECTED = {"HOME", "XDG_CACHE_HOME", "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "CUDA_CACHE_PATH", "USER",
            "LOGNAME", "SHELL", "CACHE_DIRECTORY", "STATE_DIRECTORY", "MAINPID", "INVOCATION_ID", "SYSTEMD_EXEC_PID",
            "JOURNAL_STREAM", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}
NOT_OWNED = ["PATH", "LANG", "OMP_NUM_THREADS", "NCCL_DEBUG", "HF_HUB_OFFLINE", "PYTORCH_CUDA_ALLOC_CONF"]


def _with_env(repo: Path, host: str, service: str, env: dict[str, str]) -> None:
    path = repo / "hosts" / f"{host}.yaml"
    text = path.read_text()
    anchor = f"  - name: {service}\n"
    assert anchor in text
    lines = "".join(f"      {k}: {v!r}\n" for k, v in env.items())
    path.write_text(text.replace(anchor, anchor + "    env:\n" + lines, 1))


def test_the_example_units_own_these_variables() -> None:
    result = run(ROOT, None)
    assert result.ok
    for render in result.renders:
        for svc in render.services:
            unit = next(f.text for f in render.tree.files if f.relpath == svc.unit_path)
            owned = owned_variables(unit, {k: v for k, v in svc.environment if k.startswith("CUDA_")})
            assert EXPECTED <= set(owned), EXPECTED - set(owned)
            assert not set(NOT_OWNED) & set(owned)
            assert owned["HOME"].startswith("the unit's Environment=HOME=%S/sglang-")
            assert owned["USER"].startswith("systemd, for the unit's User=")


@pytest.mark.parametrize("name", sorted(EXPECTED) + ["CREDENTIALS_DIRECTORY", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"])
def test_env_cannot_override_what_gen_sets(repo_copy: Path, name: str) -> None:
    host, service = "llm-two", "qwen"
    if name in ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"):
        host, service = "gpu-a", "deepseek"  # a multi-node service: gen writes the NIC
    if name == "CREDENTIALS_DIRECTORY":  # LoadCredential= (secret_args) makes systemd define it
        path = repo_copy / "hosts" / "llm-two.yaml"
        path.write_text(path.read_text().replace("    port: 30000\n", "    port: 30000\n    secret_args: [--api-key]\n", 1))
    _with_env(repo_copy, host, service, {name: "/tmp/elsewhere"})
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code == 1
    [line] = [ln for ln in result.stderr.splitlines() if "error[E004]" in ln]
    assert f"'{name}' is set by gen for service {service}: " in line
    assert any(word in line for word in ("Environment=", "systemd, for the unit's", "environment file")), line


def test_other_variables_stay_allowed(repo_copy: Path) -> None:
    _with_env(repo_copy, "llm-two", "qwen", {n: "1" for n in NOT_OWNED if n != "NCCL_DEBUG"})
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert "E004" not in result.stderr, result.stderr


def test_a_variable_the_template_adds_becomes_gen_s(repo_copy: Path) -> None:
    """Derived from what renders: no list to keep in step with the templates."""
    templates = repo_copy / "templates"
    if templates.is_symlink():
        target = templates.resolve()
        templates.unlink()
        shutil.copytree(target, templates)
    hardening = templates / "hardening.j2"
    hardening.write_text(hardening.read_text().replace(
        'Environment={{ "HOME" | environment_under("%S", service_name) }}\n',
        'Environment={{ "HOME" | environment_under("%S", service_name) }}\n'
        'Environment={{ "PYTORCH_KERNEL_CACHE_PATH" | environment_under("%C", service_name ~ "/kernels") }}\n'))
    _with_env(repo_copy, "llm-two", "qwen", {"PYTORCH_KERNEL_CACHE_PATH": "/tmp/k"})
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert "error[E004]: 'PYTORCH_KERNEL_CACHE_PATH' is set by gen for service qwen: the unit's " \
           "Environment=PYTORCH_KERNEL_CACHE_PATH=%C/sglang-qwen/kernels" in result.stderr, result.stderr


def test_reported_with_the_other_findings_of_the_service(repo_copy: Path) -> None:
    path = repo_copy / "models" / "qwen3.5-122b-a10b.yaml"
    text = path.read_text()
    assert text.endswith("args:\n  --attention-backend: triton\n")  # the example's own args: (G015)
    path.write_text(text + "  --no-such-flag: 1\n")
    _with_env(repo_copy, "llm-two", "qwen", {"TRITON_CACHE_DIR": "/tmp/t"})
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert "error[F001]" in result.stderr and "error[E004]" in result.stderr, result.stderr
