"""The GPU rules (G codes) on their table (tests/rule_tables/gpu_facts.py), and through `gen check`.

Each row's GPU becomes ``Settings.gpu`` the way ``check_rules`` makes it from an inventory
(generator/sglang/gpu.py: the placed GPUs' compute_cap, the host's facts, the pin's
devices file); without it every G rule is silent.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner
from rule_tables.gpu_facts import GPU_ROWS, GPUS

from generator.cli.main import main
from generator.load.resolve import Gpu, HostFacts
from generator.sglang.catalog import Catalog, load_catalog
from generator.sglang.gpu import gpu_facts
from generator.sglang.rules import Settings, evaluate, load_rules, rules_path, settings_from_argv

ROOT = Path(__file__).resolve().parent.parent


def _settings(catalog: Catalog, argv: list[str], env: dict[str, str], gpu: str | None) -> Settings:
    """The settings of ``argv`` on two GPUs of ``gpu`` (None: GPU facts unknown), as check_rules makes them."""
    settings = settings_from_argv(catalog, argv, env)
    if gpu is None:
        return settings
    spec = GPUS[gpu]
    gpus = [Gpu(i, f"00000000:{i + 1:02X}:00.0", spec["memory_mib"] / 1024, 0, gpu, spec["memory_mib"],
                spec["compute_cap"]) for i in range(2)]
    facts = HostFacts(torch_cuda=spec["torch_cuda"], torch_known=True, torch_arch_list=spec["arch"])
    return dataclasses.replace(settings, gpu=gpu_facts(gpus, facts, catalog.source_file))


def _codes(pin: str, argv: list[str], env: dict[str, str], gpu: str | None) -> list[str]:
    catalog = load_catalog(ROOT, pin)
    return [f.rule.code for f in evaluate(_settings(catalog, argv, env, gpu), load_rules(rules_path(catalog)))]


@pytest.mark.parametrize(("pin", "argv", "env", "gpu", "expected"), GPU_ROWS,
                         ids=[f"{r[0]}:{' '.join(r[1])}:{r[3]}:{i}" for i, r in enumerate(GPU_ROWS)])
def test_gpu_rule_table(pin: str, argv: list[str], env: dict[str, str], gpu: str, expected: list[str]) -> None:
    found = [c for c in _codes(pin, argv, env, gpu) if c.startswith("G")]
    assert found == expected


def test_gpu_rules_are_silent_without_facts() -> None:
    for pin, argv, env, _gpu, _ in GPU_ROWS:
        assert not [c for c in _codes(pin, argv, env, None) if c.startswith("G")]


def test_every_gpu_rule_fires_and_stays_quiet_on_each_of_its_pins() -> None:
    for rule in (r for r in load_rules(ROOT / "catalogs" / "rules.yaml") if r.code.startswith("G")):
        for pin in ("0.5.9", "0.5.23"):
            if not rule.versions.contains(tuple(int(x) for x in pin.split("."))):
                assert not any(rule.code in r[4] for r in GPU_ROWS if r[0] == pin), (rule.code, pin)
                continue
            rows = [r for r in GPU_ROWS if r[0] == pin]
            assert any(rule.code in r[4] for r in rows), (rule.code, pin, "no row where it fires")
            assert any(rule.code not in r[4] for r in rows), (rule.code, pin, "no row where it is quiet")


def test_trtllm_mla_on_the_h200_example_hosts_is_refused(repo_copy: Path) -> None:
    """The issue's case: ``--attention-backend trtllm_mla`` on gpu-a's and gpu-b's H200s (compute_cap 9.0)."""
    manifest = repo_copy / "models" / "deepseek-v3-bf16.yaml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text + "args:\n  --attention-backend: trtllm_mla\n", encoding="utf-8")
    line = text.count("\n") + 2
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code == 1, result.output
    assert (f"models/deepseek-v3-bf16.yaml:{line}:3: error[G002]: the trtllm_mla attention backend on this "
            f"service's H200, compute capability 9.0 (gpus[].compute_cap): SGLang 0.5.9 says \"TRTLLM MLA backend is "
            "only supported on Blackwell GPUs (SM100/SM12x)\"") in result.output, result.output
    assert result.output.count("error[G002]") == 1  # both nodes' finding is one line of the one manifest


def test_without_compute_cap_the_same_case_passes(repo_copy: Path) -> None:
    """A host that does not declare its GPUs' capability: the GPU rules stay silent."""
    manifest = repo_copy / "models" / "deepseek-v3-bf16.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "args:\n  --attention-backend: trtllm_mla\n",
                        encoding="utf-8")
    for host in ("gpu-a", "gpu-b"):
        path = repo_copy / "hosts" / f"{host}.yaml"
        path.write_text(path.read_text(encoding="utf-8").replace(', compute_cap: "9.0"', ""), encoding="utf-8")
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert "G002" not in result.output, result.output
    notes = [ln for ln in result.stderr.splitlines() if ln.startswith("gen: note: GPU")]
    assert notes == ["gen: note: GPU capability checks (G001-G014: trtllm_mha/trtllm_mla backends, FP8/FP4 KV cache "
                     "dtypes, quantization minimum capability, the attention backend registry, the host torch's "
                     "kernels, SGLang's SM90/SM100/SM120-only features) skipped on gpu-a, gpu-b: GPUs without "
                     "compute_cap (`gen host snapshot NAME` captures it)"], result.stderr


def test_hosts_with_compute_cap_get_no_gpu_note(repo_root: Path) -> None:
    """Every example host declares compute_cap: no GPU checks were skipped, so no line says so."""
    result = CliRunner().invoke(main, ["check", "--root", str(repo_root)])
    assert result.exit_code == 0, result.output
    assert "gen: note: GPU" not in result.stderr, result.stderr
