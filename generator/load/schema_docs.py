"""What every manifest and inventory key means, keyed by its dotted schema path.

The cerberus schemas in :mod:`generator.load.schema` say what is valid; this module says
what each key is for, so they need no edits for documentation. Keys are dotted paths
from the document's top: ``model.weights.size_gb``, ``host.services.port`` (a list's
items add no step). ``gen schema`` puts ``description``, ``default`` and ``examples`` into
the JSON Schemas and ``docs/manifests.md`` is generated from the same entries (with
``flag``: the SGLang ``dest`` the key becomes, rendered as the pin's option string).
tests/test_schema_docs.py fails when a schema key has no entry or an entry no key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class KeyDoc:
    """One key: what it is for, its default (as text), an example value, the SGLang dest."""

    description: str
    default: str | None = None  # None: no default (optional keys then render nothing)
    example: Any = None
    flag: str | None = None  # SGLang's dest; the option string comes from the host's pin


_SVC = "host.services"

# The keys of rollout.yaml, also a model's `rollout:` (generator/load/rollout.py).
_ROLLOUT_KEYS: dict[str, KeyDoc] = {
    "canary": KeyDoc("Hosts rolled out first, on their own, before any batch (0: no canary). If the canary "
                     "fails, nothing else is touched.", default="1", example=1),
    "batch": KeyDoc("Hosts per batch after the canary: a number, or a percentage of the hosts the play "
                    "rolls out (rounded down, at least 1). Ansible's `serial`; A001 when text is no percentage.",
                    default="25%", example="10%"),
    "max_fail_percentage": KeyDoc("The failure budget: the percentage of a batch's hosts that may fail "
                                  "(each rolled back) before the run stops. Past it the whole batch rolls "
                                  "back and the hosts after it are not touched. 0: the first failure stops "
                                  "the run. Ansible's own `max_fail_percentage`.", default="0", example=10),
    "max_unavailable": KeyDoc("Replicas of one model (its services on different hosts) that may restart "
                              "at once: a number, or a percentage of the model's hosts (at least 1). The "
                              "default keeps two replicas of a model from ever being down together; "
                              "batches are made so, and each batch checks it before it touches anything.",
                              default="1", example=2),
}


def _ack_keys(kind: str, code: str, reason: str) -> dict[str, KeyDoc]:
    """The ``ack:`` keys of a model manifest or a host inventory (``kind``): one text for both
    files, each with an example of a warning that file typically acknowledges."""
    return {
        f"{kind}.ack": KeyDoc("Warnings acknowledged in this file, each with its reason: a warning of an acknowledged "
                              "code positioned in this file is no longer printed (`gen show` lists the acks and what "
                              "they match, `--format json` puts them under `acknowledged`, SARIF as suppressions). "
                              "Only warnings: acknowledging an error or an unknown code is an error (S020, S021), "
                              "an ack that matches nothing any more is warning S022.",
                              example=[{"code": code, "reason": reason}]),
        f"{kind}.ack.code": KeyDoc(f"The warning's code, as printed in brackets (`warning[{code}]`).", example=code),
        f"{kind}.ack.reason": KeyDoc("Why the warning is accepted: for the reviewer and for `gen show`.",
                                     example=reason),
    }

DOCS: dict[str, KeyDoc] = {
    # --- model manifests (models/<name>.yaml) -------------------------------------------
    "model.name": KeyDoc("The model's name; services refer to it with `model:`. Must equal the file "
                         "name without `.yaml` (R003).", example="qwen3.5-122b-a10b"),
    "model.description": KeyDoc("Free text for people; rendered into no file.",
                                example="Qwen3.5-122B-A10B on four GPUs"),
    "model.weights": KeyDoc("The checkpoint on disk."),
    "model.weights.path": KeyDoc("Absolute path of the checkpoint folder on the host; must lie under the "
                                 "host's `storage.model_root` (P009) and not under a retired path (P008).",
                                 example="/shared/models/Qwen3.5-122B-A10B", flag="model_path"),
    "model.weights.format": KeyDoc("The checkpoint's file format. Informational: gen renders no flag for "
                                   "it (SGLang's `--load-format` auto-detects; set it under `args:` to force).",
                                   default="safetensors", example="safetensors"),
    "model.weights.size_gb": KeyDoc("Size of the weights on disk in GB (decimal). Without a checkpoint snapshot "
                                    "the memory check charges it to the GPUs (P030: the weights leave no KV "
                                    "cache); the unit's start timeout grows with it (0.5 GB/s). With a snapshot "
                                    "(`catalogs/models/<name>.json`, `gen model snapshot`) it comes from the "
                                    "index's total_size and may be left out; a value that disagrees is M010. "
                                    "Without a snapshot it is required.", example=234),
    "model.weights.shards": KeyDoc("How many weight files the checkpoint has. Informational; from the snapshot "
                                   "when there is one (a value that disagrees is M011); `gen verify` and "
                                   "`gen preflight` count the shards on the host from the index file.",
                                   example=39),
    "model.weights.params_b": KeyDoc("Total parameters in billions. Informational; from the snapshot when it "
                                     "knows the count (a value that disagrees is M012).", example=122),
    "model.weights.active_params_b": KeyDoc("Parameters active per token in billions (MoE). Informational.",
                                            example=10),
    "model.weights.quantization": KeyDoc(
        "How the checkpoint is quantized, as free text. Informational: gen renders no `--quantization` "
        "(SGLang reads the quantization from the checkpoint's config). A value that is one of the pin's "
        "`--quantization` choices draws warning F105; to force SGLang's flag, write it under `args:`.",
        example="int4 (compressed-tensors)"),
    "model.served_model_name": KeyDoc("The model name the OpenAI API reports and accepts.",
                                      default="SGLang's: the model path", example="qwen3.5",
                                      flag="served_model_name"),
    "model.dtype": KeyDoc("Weight and activation dtype; checked against the pin's choices (F003).",
                          default="SGLang's (auto)", example="bfloat16", flag="dtype"),
    "model.trust_remote_code": KeyDoc("Allow the checkpoint's own Python code (true renders the switch).",
                                      default="false", example=True, flag="trust_remote_code"),
    "model.context_length": KeyDoc("Maximum context length in tokens.", default="SGLang's (from the model config)",
                                   example=262144, flag="context_length"),
    "model.parallel": KeyDoc("Parallelism. The service needs tp x pp GPUs on one host (P004, P006)."),
    "model.parallel.tp": KeyDoc("Tensor parallel size: GPUs per replica (per node for a multi-node model).",
                                default="1 (renders nothing)", example=4, flag="tp_size"),
    "model.parallel.pp": KeyDoc("Pipeline parallel size.", default="1 (renders nothing)", example=1,
                                flag="pp_size"),
    "model.parallel.dp": KeyDoc("Data parallel size.", default="1 (renders nothing)", example=2, flag="dp_size"),
    "model.parallel.ep": KeyDoc("Expert parallel size (MoE).", default="SGLang's", example=8, flag="ep_size"),
    "model.parallel.dp_attention": KeyDoc("Data-parallel attention (true renders the switch).", default="false",
                                          example=True, flag="enable_dp_attention"),
    "model.speculative": KeyDoc("Speculative decoding. SGLang's cross-flag rules for the pin apply "
                                "(catalogs/rules.yaml: X0xx)."),
    "model.speculative.algorithm": KeyDoc("The algorithm; checked against the pin's choices.", example="EAGLE3",
                                          flag="speculative_algorithm"),
    "model.speculative.num_steps": KeyDoc("Draft steps per verification.", example=3,
                                          flag="speculative_num_steps"),
    "model.speculative.eagle_topk": KeyDoc("Top-k branching of the draft tree.", example=1,
                                           flag="speculative_eagle_topk"),
    "model.speculative.num_draft_tokens": KeyDoc("Draft tokens verified per step (with top-k 1: steps + 1).",
                                                 example=4, flag="speculative_num_draft_tokens"),
    "model.speculative.draft_model_path": KeyDoc("Absolute path of the draft model (EAGLE/EAGLE3 drafter) under "
                                                 "the model root.", example="/shared/models/Kimi-K2.5-eagle3",
                                                 flag="speculative_draft_model_path"),
    "model.parsers": KeyDoc("Output parsers of the OpenAI API."),
    "model.parsers.reasoning": KeyDoc("Reasoning parser; checked against the pin's choices.", example="qwen3",
                                      flag="reasoning_parser"),
    "model.parsers.tool_call": KeyDoc("Tool-call parser; checked against the pin's choices.", example="qwen3_coder",
                                      flag="tool_call_parser"),
    "model.memory": KeyDoc("GPU memory."),
    "model.memory.mem_fraction_static": KeyDoc(
        "Fraction of the free GPU memory SGLang keeps for weights and KV cache (between 0 and 1, a "
        "fraction: 0.85, not 85). The memory check sizes the KV cache as the pinned SGLang will (P030 no "
        "room for the KV cache, with the smallest fraction that works; P031 shorter than the context "
        "length; P032 less reserve than SGLang's own rule keeps; P033 at or above 0.95).",
        default="SGLang's own, from the GPU's memory, chunked prefill, CUDA graph batch size, TP x PP and "
        "speculative decoding (`gen show` prints it)", example=0.88, flag="mem_fraction_static"),
    "model.args": KeyDoc(
        "Any other SGLang flag, written in full with its leading `--` (`--chunked-prefill-size: 8192`). "
        "Checked against the pin's catalog like a command line (F0xx): unknown, abbreviated, renamed and "
        "removed flags are reported. `true` renders a switch, `false` nothing, a list repeats the value "
        "words. A service's own `args` win over the model's for the same flag.",
        example={"--chunked-prefill-size": 8192, "--enable-metrics": True}),
    "model.env": KeyDoc("Environment variables for the server, written to `/etc/sglang/<service>.env` "
                        "(a service's own `env` wins for the same name). Booleans are refused: quote them.",
                        example={"SGLANG_ENABLE_JIT_DEEPGEMM": "0"}),
    "model.multinode": KeyDoc("One replica over several hosts. Every node renders the same flags except "
                              "`--node-rank`; `--nnodes` and `--dist-init-addr` (rank 0's `network.address` "
                              "and this port) are derived.", flag="nnodes"),
    "model.multinode.hosts": KeyDoc("The hosts in rank order (rank 0 first); each must run a service of "
                                    "this model and have `network:`.", example=["gpu-a", "gpu-b"],
                                    flag="node_rank"),
    "model.multinode.port": KeyDoc("The port of rank 0 that the other nodes dial.", example=5000,
                                   flag="dist_init_addr"),
    "model.rollout": KeyDoc("This model's own rollout strategy: any key of `rollout.yaml` (the repository's "
                            "settings), in force for this model's services only. Models that agree on "
                            "`canary`, `batch` and `max_fail_percentage` roll out in one play; a multi-node "
                            "model ignores it (A003: its ranks restart together).",
                            example={"canary": 2, "batch": "10%"}),
    **{f"model.rollout.{key}": doc for key, doc in _ROLLOUT_KEYS.items()},
    **_ack_keys("model", "F104", "the runbooks still use the old flag until OPS-412 lands"),
    # --- host inventories (hosts/<name>.yaml) --------------------------------------------
    "host.name": KeyDoc("The host's name; must equal the file name without `.yaml`. `output/<name>/` "
                        "holds its tree.", example="llm-two"),
    "host.description": KeyDoc("Free text for people.", example="8x RTX PRO 6000, GPUs 4-7 in a VM"),
    "host.address": KeyDoc("What ssh dials for verify, status, preflight and snapshot (a name or an address).",
                           example="llm-two.example"),
    "host.ssh": KeyDoc("How ssh reaches the host (an ssh config given with --ssh-config still applies)."),
    "host.ssh.user": KeyDoc("The ssh user.", default="root", example="root"),
    "host.ssh.port": KeyDoc("The ssh port.", default="22", example=22),
    "host.ssh.shared_with": KeyDoc("Other inventories that reach the same ssh address and port (an alternative configuration of the same machine); each must name the other, else gen check refuses the pair (R011).", example=["llm-two"]),
    "host.gpus": KeyDoc("Every GPU of the host, as `nvidia-smi` reports it (also those passed to VMs)."),
    "host.gpus.index": KeyDoc("The GPU index (`CUDA_VISIBLE_DEVICES` order: PCI bus order, P012).", example=0),
    "host.gpus.pci_bus_id": KeyDoc("The PCI bus id as `nvidia-smi --query-gpu=pci.bus_id` prints it; "
                                   "`gen verify` finds each GPU by it.", example="00000000:01:00.0"),
    "host.gpus.memory_mib": KeyDoc("GPU memory in MiB as `nvidia-smi --query-gpu=memory.total` prints it "
                                   "(`gen host snapshot` writes it); each GPU gives this or `memory_gb`.",
                                   example=97887),
    "host.gpus.memory_gb": KeyDoc("GPU memory in GB from the data sheet, for an inventory typed by hand "
                                  "(placement's fit and KV estimate read it as GiB); each GPU gives this or "
                                  "`memory_mib`, and where both are given they agree within 10% (R041).",
                                  example=96),
    "host.gpus.compute_cap": KeyDoc("The CUDA compute capability as `nvidia-smi --query-gpu=compute_cap` "
                                    "prints it, quoted (`gen host snapshot` writes it). Without it the "
                                    "GPU capability checks are skipped.", example="12.0"),
    "host.gpus.numa_node": KeyDoc("The NUMA node the GPU is attached to; a TP group stays in one node "
                                  "when it can (P005).", example=0),
    "host.gpus.model": KeyDoc("The GPU model. Informational.", example="RTX PRO 6000 Blackwell"),
    "host.numa": KeyDoc("The host's NUMA nodes: a service on one node is bound to its CPUs and memory "
                        "(`CPUAffinity=`, `NUMAPolicy=bind`)."),
    "host.numa.node": KeyDoc("The NUMA node number.", example=0),
    "host.numa.cpus": KeyDoc("The node's CPU list, as `lscpu` prints it.", example="0-31,64-95"),
    "host.facts": KeyDoc("What `gen host snapshot` captured from the host (keep it as captured); "
                         "`gen verify` fails when the host no longer matches (a new driver, another "
                         "torch, a changed topology)."),
    "host.facts.driver_version": KeyDoc("The NVIDIA driver, as `nvidia-smi --query-gpu=driver_version` prints it.",
                                        example="580.95.05"),
    "host.facts.cuda_version": KeyDoc("The newest CUDA the driver supports (the `CUDA Version` of "
                                      "`nvidia-smi`'s header).", example="13.0"),
    "host.facts.torch_cuda": KeyDoc("`torch.version.cuda` of the host's SGLang Python (`sglang.python`); "
                                    "null for a torch built without CUDA.", example="12.8"),
    "host.facts.torch_arch_list": KeyDoc("`torch.cuda.get_arch_list()` of the host's SGLang Python: the GPU "
                                         "architectures its kernels are built for (`sm_120`), and PTX "
                                         "(`compute_120`).", example=["sm_90", "sm_100", "sm_120", "compute_120"]),
    "host.facts.topology": KeyDoc("The GPU link matrix of `nvidia-smi topo -m`, between the GPUs the host "
                                  "sees; placement puts a TP group on the best-joined GPUs."),
    "host.facts.topology.gpus": KeyDoc("The GPUs of the matrix (inventory indexes), in its row order.",
                                       example=[0, 1, 2, 3]),
    "host.facts.topology.links": KeyDoc("One row per GPU: the link to each GPU of `gpus` (`X` itself, `NV18` "
                                        "18 NVLinks, `PIX`/`PXB` under PCIe switches, `PHB` one host bridge, "
                                        "`NODE` one NUMA node, `SYS` across NUMA nodes).",
                                        example=[["X", "NODE"], ["NODE", "X"]]),
    "host.vm_passthrough": KeyDoc("GPUs passed through to virtual machines: never placed (P002); "
                                  "`gen verify` checks the host does not see them."),
    "host.vm_passthrough.vm": KeyDoc("The VM's name.", example="vm-gpu-101"),
    "host.vm_passthrough.gpus": KeyDoc("The GPU indexes the VM owns.", example=[4, 5, 6, 7]),
    "host.storage": KeyDoc("Where checkpoints live."),
    "host.storage.model_root": KeyDoc("Every weights path must lie under it (P009); the unit may read "
                                      "only there.", example="/shared/models"),
    "host.storage.retired": KeyDoc("Paths being retired: no service may use them (P008); `gen verify` "
                                   "checks none is in use.", example=["/data"]),
    "host.sglang": KeyDoc("The SGLang install the services run."),
    "host.sglang.pin": KeyDoc("The SGLang version: every flag is checked against "
                              "`catalogs/sglang/<pin>.json` (C001 when missing).", example="0.5.9"),
    "host.sglang.python": KeyDoc("The interpreter the unit starts (`<python> -m sglang.launch_server`).",
                                 example="/opt/sglang/.venv/bin/python"),
    "host.sglang.source_dir": KeyDoc("A source install's checkout (snapshot records its `git rev-parse HEAD`).",
                                     example="/root/sglang-main"),
    "host.sglang.commit": KeyDoc("The commit a source install must be at (`gen verify` checks it).",
                                 example="0123abc"),
    "host.sglang.user": KeyDoc("The system user the services run as (`root` hides /root and /home and "
                               "binds the install back read-only).", default="sglang", example="sglang"),
    "host.services": KeyDoc("The SGLang servers of this host, one systemd unit `sglang-<name>.service` each."),
    f"{_SVC}.name": KeyDoc("The service's name (unit `sglang-<name>.service`, env file `/etc/sglang/<name>.env`).",
                           example="qwen"),
    f"{_SVC}.model": KeyDoc("The model manifest it serves (`models/<model>.yaml`).", example="qwen3.5-122b-a10b"),
    f"{_SVC}.port": KeyDoc("The HTTP port; unique on the host (P007).", example=30000, flag="port"),
    f"{_SVC}.listen": KeyDoc("The address the server binds.", default="127.0.0.1", example="0.0.0.0",
                             flag="host"),
    f"{_SVC}.gpus": KeyDoc("The GPU indexes to run on; without it gen picks free GPUs (in one NUMA node "
                           "when it can). The count must equal tp x pp (P004). Rendered as "
                           "`CUDA_VISIBLE_DEVICES`.", default="chosen by placement", example=[0, 1, 2, 3]),
    f"{_SVC}.allow_cross_numa": KeyDoc("Accept GPUs from several NUMA nodes (the unit is then not bound "
                                       "to a node).", default="false", example=False),
    f"{_SVC}.enabled": KeyDoc("false: the unit is rendered and installed but not enabled or started; "
                              "`gen verify` expects it disabled and stopped.", default="true", example=True),
    f"{_SVC}.timeout_start_min": KeyDoc("Minutes systemd waits for `/health` before failing the start.",
                                        default="10 + weights.size_gb / 0.5 GB/s, in minutes", example=30),
    f"{_SVC}.secret_env": KeyDoc("The unit also reads `/etc/sglang/secrets/<name>.env` (root, 0600; `KEY=value` "
                                 "lines such as `HF_TOKEN=...`), which gen never writes (README: Secrets).",
                                 default="false", example=False),
    f"{_SVC}.secret_args": KeyDoc("SGLang flags whose values are secrets (`--api-key`): SGLang reads them from "
                                  "`/etc/credstore/sglang-<name>.yaml` (root, 0600, `--config` form), loaded with "
                                  "`LoadCredential=`; gen renders `--config` for it and never sees the values "
                                  "(K003, K004; README: Secrets).", example=["--api-key"]),
    f"{_SVC}.args": KeyDoc("SGLang flags for this service only, as in the model's `args` (they win over "
                           "the model's).", example={"--log-level": "info"}),
    f"{_SVC}.env": KeyDoc("Environment for this service only, as in the model's `env`.",
                          example={"NCCL_DEBUG": "WARN"}),
    **_ack_keys("host", "R010", "behind the site's authenticating proxy (OPS-412)"),
    "host.network": KeyDoc("For multi-node models: how the other nodes reach this host."),
    "host.network.address": KeyDoc("The address other nodes dial (`--dist-init-addr` of rank 0), no port.",
                                   example="10.0.0.11"),
    "host.network.interface": KeyDoc("The NIC for NCCL and Gloo (`NCCL_SOCKET_IFNAME`, `GLOO_SOCKET_IFNAME`).",
                                     example="enp65s0f0"),
    # --- the repository's rollout strategy (rollout.yaml) ----------------------------------
    **{f"rollout.{key}": doc for key, doc in _ROLLOUT_KEYS.items()},
}


def doc_for(path: str) -> KeyDoc:
    """The entry of a dotted schema path (KeyError names the path when it has none)."""
    return DOCS[path]
