"""``gen show --host`` (text and json) and the decisions ``-v`` prints, from the pipeline's placements."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from generator.cli.main import main


def _gen(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_show_text_has_the_gpu_map_and_services(repo_root: Path) -> None:
    result = _gen("show", "--host", "llm-two", "--root", str(repo_root))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "host llm-two (llm-two.lan), SGLang 0.5.9"
    assert lines[1] == "  GPU  PCI bus id        NUMA     memory    cc  owner"
    assert lines[2] == "    0  00000000:01:00.0     0  97887 MiB  12.0  service:qwen"
    assert lines[6] == "    4  00000000:81:00.0     1  97887 MiB  12.0  vm:vm-gpu-101"
    assert lines[-3] == ("  qwen: qwen3.5-122b-a10b on 127.0.0.1:30000, TP 4, GPUs 0,1,2,3, weights 234 GB at "
                         "/shared/models/Qwen3.5-122B-A10B, CPUs 0-31,64-95 (NUMA 0)")
    # The example snapshot holds only the config keys cited pages state (too few to size a token):
    # 234 GB / 4 of weights on 97887 MiB cards, 1.1 GiB of CUDA context
    # (PCIe: no NVLink buffers), the manifest's 0.85 against SGLang 0.5.9's own 0.833 (EAGLE: +2 GiB)
    assert lines[-2] == ("    memory per GPU (95.6 GiB, 94.5 free before load): weights 54.5 GiB, KV pool ~25.8 GiB "
                         "(tokens unknown: the snapshot's config.json has no number 'num_attention_heads' (SGLang "
                         "reads it to size the KV cache)), reserve 14.2 GiB; mem_fraction_static 0.85 "
                         "(SGLang's default 0.833)")
    # What SGLang 0.5.9 picks itself on the RTX PRO 6000's compute capability 12.0 (the manifest writes no
    # attention backend): its own choice per architecture, as `gen sglang snapshot` captured it.
    assert lines[-1] == ("    SGLang 0.5.9 picks on compute capability 12.0 (torch CUDA 12.8): attention backend "
                         "flashinfer for an MHA model (Llama) and a hybrid linear-attention model (Qwen3-Next); "
                         "triton for an MLA model (DeepSeek-V3), moe runner backend auto (the MoE layer's own choice "
                         "at load)")


def test_show_says_a_written_backend_is_taken_as_written(repo_copy: Path) -> None:
    manifest = repo_copy / "models" / "qwen3.5-122b-a10b.yaml"
    manifest.write_text(manifest.read_text() + "args:\n  --attention-backend: triton\n")
    result = _gen("show", "--host", "llm-two", "--root", str(repo_copy))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        "    SGLang 0.5.9 picks on compute capability 12.0 (torch CUDA 12.8): attention backend as written "
        "(attention_backend triton), moe runner backend auto (the MoE layer's own choice at load)")
    doc = json.loads(_gen("show", "--host", "llm-two", "--format", "json", "--root", str(repo_copy)).stdout)
    attention = doc["services"][0]["sglang_picks"]["settings"]["attention_backend"]
    assert attention == {"written": {"attention_backend": "triton"}, "picked": None}


def test_show_json(repo_root: Path) -> None:
    result = _gen("show", "--host", "llm-two", "--format", "json", "--root", str(repo_root))
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["format_version"] == 1 and doc["command"] == "show" and doc["host"] == "llm-two"
    owners = [g["owner"] for g in doc["gpus"]]
    assert owners == ["service:qwen"] * 4 + ["vm:vm-gpu-101"] * 4
    [svc] = doc["services"]
    assert (svc["port"], svc["tp"], svc["gpus"], svc["cpu_binding"]) == (30000, 4, [0, 1, 2, 3], "0-31,64-95")
    memory = svc["memory"]
    pre = 97887 / 1024 - 1.1
    assert memory["free_before_load_gib"] == round(pre, 2)
    assert memory["weights_gib_per_gpu"] == round(234e9 / 4 / 2**30, 2)
    assert memory["kv_pool_gib"] == round(pre - 234e9 / 4 / 2**30 - pre * (1 - 0.85), 2)
    assert (memory["mem_fraction_static"], memory["mem_fraction_static_default"]) == (0.85, False)
    assert memory["sglang_default_fraction"] == 0.833
    assert memory["max_total_num_tokens"] is None and memory["skipped"] == (
        "the snapshot's config.json has no number 'num_attention_heads' (SGLang reads it to size the KV cache)")
    assert svc["sglang_picks"] == {"compute_cap": "12.0", "torch_cuda": "12.8", "settings": {
        "attention_backend": {"written": None, "picked": {"DeepseekV3ForCausalLM": "triton",
                                                          "LlamaForCausalLM": "flashinfer",
                                                          "Qwen3NextForCausalLM": "flashinfer"}},
        "moe_runner_backend": {"written": None, "picked": {"DeepseekV3ForCausalLM": "auto",
                                                           "LlamaForCausalLM": "auto",
                                                           "Qwen3NextForCausalLM": "auto"}}}}


def test_show_without_measured_facts_prints_the_typed_memory(repo_copy: Path) -> None:
    host = repo_copy / "hosts/llm-two.yaml"
    host.write_text(host.read_text().replace(', memory_mib: 97887, compute_cap: "12.0"', ""))
    lines = _gen("show", "--host", "llm-two", "--root", str(repo_copy)).stdout.splitlines()
    assert lines[1:3] == ["  GPU  PCI bus id        NUMA  memory  owner",
                          "    0  00000000:01:00.0     0   96 GB  service:qwen"]
    assert not any("picks on compute capability" in ln for ln in lines)  # no capability: SGLang's pick unknown


def test_show_draws_the_link_matrix_beside_the_gpu_map(repo_copy: Path) -> None:
    """The host GPUs' rows of `nvidia-smi topo -m`; the VM's GPUs are not in it."""
    host = repo_copy / "hosts/llm-two.yaml"
    rows = "".join("      - [" + ", ".join("X" if a == b else "NODE" for b in range(4)) + "]\n" for a in range(4))
    host.write_text(host.read_text().replace("vm_passthrough:", "facts:\n  topology:\n    gpus: [0, 1, 2, 3]\n"
                                             "    links:\n" + rows + "vm_passthrough:"))
    result = _gen("show", "--host", "llm-two", "--root", str(repo_copy))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == "  GPU  PCI bus id        NUMA     memory    cc  owner          links:     0     1     2     3"
    assert lines[2] == "    0  00000000:01:00.0     0  97887 MiB  12.0  service:qwen              X  NODE  NODE  NODE"
    assert lines[5] == "    3  00000000:61:00.0     0  97887 MiB  12.0  service:qwen           NODE  NODE  NODE     X"
    assert lines[6] == "    4  00000000:81:00.0     1  97887 MiB  12.0  vm:vm-gpu-101"
    doc = json.loads(_gen("show", "--host", "llm-two", "--format", "json", "--root", str(repo_copy)).stdout)
    assert doc["topology"]["gpus"] == [0, 1, 2, 3] and doc["topology"]["links"][1] == ["NODE", "X", "NODE", "NODE"]


def test_show_marks_free_gpus(repo_copy: Path) -> None:
    host = repo_copy / "hosts/llm-two.yaml"
    host.write_text(host.read_text().replace("vm_passthrough:\n  - {vm: vm-gpu-101, gpus: [4, 5, 6, 7]}\n", ""))
    doc = json.loads(_gen("show", "--host", "llm-two", "--format", "json", "--root", str(repo_copy)).stdout)
    assert [g["owner"] for g in doc["gpus"]][4:] == ["free"] * 4


def test_show_of_a_multinode_host_names_the_rank(repo_root: Path) -> None:
    doc = json.loads(_gen("show", "--host", "gpu-b", "--format", "json", "--root", str(repo_root)).stdout)
    [svc] = doc["services"]
    assert svc["node"]["rank"] == 1 and svc["node"]["nnodes"] == 2


def test_show_unknown_host_is_usage(repo_root: Path) -> None:
    result = _gen("show", "--host", "llm-too", "--root", str(repo_root))
    assert result.exit_code == 2
    assert "did you mean 'llm-two'?" in result.stderr


def test_verbose_render_says_what_placement_decided(repo_copy: Path) -> None:
    result = _gen("render", "--host", "llm-two", "-v", "--root", str(repo_copy))
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        "gen: llm-two/qwen: placement: GPUs 0,1,2,3 (from the inventory)",
        "gen: llm-two/qwen: NUMA: node 0, unit bound to CPUs 0-31,64-95",
        "gen: llm-two/qwen: defaults: timeout_start_min 18",
        "gen: llm-two/qwen: memory per GPU (95.6 GiB, 94.5 free before load): weights 54.5 GiB, KV pool "
        "~25.8 GiB (tokens unknown: the snapshot's config.json has no number 'num_attention_heads' (SGLang reads "
        "it to size the KV cache)), reserve 14.2 GiB; mem_fraction_static 0.85 "
        "(SGLang's default 0.833)",
    ]
