"""scripts/sglang-coverage/triage.py: carry-over by function and condition, then by condition token."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("triage", ROOT / "scripts" / "sglang-coverage" / "triage.py")
assert _spec is not None and _spec.loader is not None
triage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(triage)


def _repo(tmp_path: Path, reset: list[str]) -> Path:
    """A copy of the two pins' inventories and coverage files, with ``reset`` ids unreviewed."""
    for sub in ("catalogs/sglang", "catalogs/coverage"):
        (tmp_path / sub).mkdir(parents=True)
    for pin in ("0.5.9", "0.5.23"):
        shutil.copy(ROOT / f"catalogs/sglang/{pin}.checks.json", tmp_path / f"catalogs/sglang/{pin}.checks.json")
    shutil.copy(ROOT / "catalogs/coverage/0.5.9.yaml", tmp_path / "catalogs/coverage/0.5.9.yaml")
    lines = (ROOT / "catalogs/coverage/0.5.23.yaml").read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        key = line.split('": {', 1)[0].strip()[1:] if line.startswith('  "') else None
        if key is not None and json.loads(f'"{key}"') in reset:
            line = f'  "{key}": {{waive: unreviewed, why: "not reviewed"}}'
        out.append(line)
    (tmp_path / "catalogs/coverage/0.5.23.yaml").write_text("\n".join(out) + "\n", encoding="utf-8")
    return tmp_path


def test_carry_over_and_reading(tmp_path: Path) -> None:
    carried_id = "arg_groups.validation_hook:validate_buckets_rule | base > 1"  # same check in 0.5.9
    gpu_id = "arg_groups.kv_cache_hook:handle_mxfp8_kv_cache_compatibility | not get_platform().is_blackwell"
    gap_id = "arg_groups.serving_hook:handle_tokenizer_batching | cfg.enable_tokenizer_batch_encode and cfg.enable_dynamic_batch_tokenizer"
    internal_id = "arg_groups.fields:collect_input_fields | field.name in annotations"
    carried, reading = triage.triage("0.5.23", "0.5.9", _repo(tmp_path, [carried_id, gpu_id, gap_id, internal_id]))
    assert set(carried) == {carried_id, gap_id}  # the tokenizer check is 0.5.9's too
    assert carried[carried_id] == {"rule": "buckets-rule"}  # 0.5.9's entry, carried over
    assert reading[gpu_id] == {"waive": "gpu", "why": "reads the device or its compute capability: "
                                                     "the condition reads 'get_platform()'"}
    assert reading[internal_id]["waive"] == "internal"


def test_nothing_is_left_to_triage_in_the_committed_files() -> None:
    assert triage.triage("0.5.23", "0.5.9", ROOT) == ({}, {})
