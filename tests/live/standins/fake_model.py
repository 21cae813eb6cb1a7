"""Write FAKE safetensors checkpoints for tests (standard library only, tiny tensors).

A safetensors file is an 8-byte little-endian header length, a JSON header mapping
tensor names to dtype/shape/data_offsets, then the raw data. The folders written here
have a ``config.json`` (a small LlamaForCausalLM, enough for SGLang's ServerArgs on
CPU), shards and ``model.safetensors.index.json``; no real weights anywhere.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

LLAMA_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
    "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
    "num_key_value_heads": 4, "vocab_size": 256, "max_position_embeddings": 512,
    "rms_norm_eps": 1e-5, "torch_dtype": "bfloat16",
}


def safetensors_bytes(names: list[str], elements: int = 4) -> bytes:
    """A safetensors file holding one F32 tensor of ELEMENTS zeros per name."""
    header: dict[str, object] = {"__metadata__": {"format": "pt", "standin": "fake"}}
    offset = 0
    for name in names:
        header[name] = {"dtype": "F32", "shape": [elements], "data_offsets": [offset, offset + 4 * elements]}
        offset += 4 * elements
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)  # the format pads the header to 8 bytes
    return struct.pack("<Q", len(raw)) + raw + bytes(offset)


def write_sharded(folder: Path, shards: dict[str, list[str]], config: dict | None = None) -> Path:
    """Write FOLDER with config.json, the given shards (file -> tensor names) and an index."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config or LLAMA_CONFIG))
    weight_map: dict[str, str] = {}
    for file, names in shards.items():
        (folder / file).write_bytes(safetensors_bytes(names))
        weight_map.update({n: file for n in names})
    total = 16 * len(weight_map)  # every fake tensor is 4 F32 zeros; a real index says its bytes
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}))
    return folder


def write_model(folder: Path) -> Path:
    """A two-shard fake base model."""
    return write_sharded(folder, {
        "model-00001-of-00002.safetensors": ["model.embed_tokens.weight", "model.layers.0.mlp.up_proj.weight"],
        "model-00002-of-00002.safetensors": ["model.layers.1.mlp.up_proj.weight", "lm_head.weight"],
    })


def write_eagle3_draft(folder: Path, layer_prefix: str = "midlayer") -> Path:
    """A one-shard fake EAGLE3 drafter; ``layers.0`` gives the unrenamed (incident 1) form."""
    return write_sharded(folder, {"model.safetensors": [
        f"{layer_prefix}.self_attn.q_proj.weight", f"{layer_prefix}.mlp.up_proj.weight", "fc.weight",
    ]})
