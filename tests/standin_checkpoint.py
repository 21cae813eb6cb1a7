"""Stand-in checkpoints for tests: real safetensors files with tiny weights, and a hub cache.

A real checkpoint is hundreds of GB; these are a few KB and have exactly the real formats
(safetensors: 8-byte little-endian header length, JSON header, data; the index
``model.safetensors.index.json``; the Hugging Face cache layout ``models--ORG--NAME/{blobs,
refs,snapshots}``), so the real reader and the real ``huggingface_hub`` read them. Named
stand-ins: the weights are zeros.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path
from typing import Any

BYTES = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4, "F8_E4M3": 1, "U8": 1}

LLAMA_CONFIG: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
    "intermediate_size": 128, "num_attention_heads": 16, "num_key_value_heads": 8,
    "num_hidden_layers": 2, "vocab_size": 128, "max_position_embeddings": 8192, "torch_dtype": "bfloat16",
}


def write_shard(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> int:
    """A safetensors file holding ``tensors`` (name -> (dtype, shape)) of zeros; its data bytes."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in sorted(tensors.items()):
        count = 1
        for dim in shape:
            count *= dim
        size = count * BYTES[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * offset)
    return offset


def llama_tensors(layers: int = 2, prefix: str = "model.") -> dict[str, tuple[str, list[int]]]:
    """The tensor names and shapes of a tiny Llama (as LLAMA_CONFIG describes)."""
    out: dict[str, tuple[str, list[int]]] = {f"{prefix}embed_tokens.weight": ("BF16", [128, 64]),
                                             "lm_head.weight": ("BF16", [128, 64]),
                                             f"{prefix}norm.weight": ("BF16", [64])}
    for i in range(layers):
        for part, shape in (("self_attn.q_proj", [64, 64]), ("self_attn.k_proj", [32, 64]),
                            ("self_attn.v_proj", [32, 64]), ("self_attn.o_proj", [64, 64]),
                            ("mlp.gate_proj", [128, 64]), ("mlp.up_proj", [128, 64]),
                            ("mlp.down_proj", [64, 128])):
            out[f"{prefix}layers.{i}.{part}.weight"] = ("BF16", shape)
    return out


def write_checkpoint(folder: Path, config: dict[str, Any] | None = None,
                     tensors: dict[str, tuple[str, list[int]]] | None = None, shards: int = 2,
                     index: bool = True) -> Path:
    """A stand-in checkpoint folder: config.json, ``shards`` safetensors files and the index."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config or LLAMA_CONFIG, indent=2))
    tensors = tensors or llama_tensors()
    names = sorted(tensors)
    if not index:
        write_shard(folder / "model.safetensors", tensors)
        return folder
    weight_map: dict[str, str] = {}
    total = 0
    for n in range(shards):
        part = names[n::shards]
        file = f"model-{n + 1:05d}-of-{shards:05d}.safetensors"
        total += write_shard(folder / file, {t: tensors[t] for t in part})
        weight_map.update({t: file for t in part})
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2))
    return folder


def write_hub_cache(hf_home: Path, repo: str, folder: Path, commit: str = "a" * 40,
                    ref: str = "main") -> Path:
    """Lay ``folder``'s files out as huggingface_hub's cache does under ``hf_home/hub``.

    ``models--ORG--NAME/blobs/<sha256>`` holds each file, ``snapshots/<commit>/NAME`` links to
    it (``../../blobs/<sha256>``), ``refs/<ref>`` holds the commit: the layout the library
    reads in offline mode (HF_HUB_OFFLINE=1).
    """
    repo_dir = hf_home / "hub" / ("models--" + repo.replace("/", "--"))
    blobs, snap = repo_dir / "blobs", repo_dir / "snapshots" / commit
    blobs.mkdir(parents=True, exist_ok=True)
    snap.mkdir(parents=True, exist_ok=True)
    (repo_dir / "refs").mkdir(exist_ok=True)
    (repo_dir / "refs" / ref).write_text(commit)
    for item in sorted(folder.iterdir()):
        data = item.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        (blobs / digest).write_bytes(data)
        link = snap / item.name
        if link.exists() or link.is_symlink():
            link.unlink()
        os.symlink(f"../../blobs/{digest}", link)
    return repo_dir
