"""G015: a backend the pin picks itself (nothing written) that its own attention registry refuses.

0.5.9 picks flashinfer on compute capability 11.x/12.x for a hybrid Gated-DeltaNet model
(Qwen3-Next, Qwen3.5) and its registry's ``attn_backend_wrapper`` asserts triton or trtllm_mha
for such a model on every Blackwell GPU (``is_blackwell``: majors 10, 11, 12): the seed
Qwen3.5 on llm-two's RTX PRO 6000 (12.0) with nothing written would stop at start. The rule
reads 0.5.9's pick from the devices file (the Qwen3-Next stand-in's); the sglang-marked test here
runs the pin's own ServerArgs on the seed's real config.json on the stand-in GPU and finds the
same pick on 0.5.9, and on 0.5.23 picks (another on SM100) that its registry all allows. The registry's assertion itself
is read, not run: its GDN backend imports CUDA-only packages (sgl_kernel) before it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sglang_worker
from rule_tables.gpu_facts import GPU_MODEL_ROWS, QWEN35
from test_gpu_rules import _codes

from generator.checkpoint.facts import CheckpointFacts

ROOT = Path(__file__).resolve().parent.parent
RUNNER = Path(__file__).resolve().parent / "gpu_picks_runner.py"
# 0.5.23's attention registry on Blackwell for hybrid GDN models (HYBRID_GDN_SM100_BACKENDS; SM120's own set)
SM100_ALLOWED = {"triton", "trtllm_mha", "fa4", "flashinfer"}
SM120_ALLOWED = {"triton", "trtllm_mha", "flashinfer"}


def _checkpoint(model: str) -> CheckpointFacts:
    data = json.loads((ROOT / "catalogs" / "models" / f"{model}.json").read_text(encoding="utf-8"))
    return CheckpointFacts(data["checkpoint"])


@pytest.mark.parametrize(("pin", "argv", "gpu", "model", "fires"), GPU_MODEL_ROWS)
def test_hybrid_gdn_backends_on_blackwell(pin: str, argv: list[str], gpu: str, model: str | None,
                                          fires: bool) -> None:
    assert [c for c in _codes(pin, argv, {}, gpu, model) if c == "G015"] == (["G015"] if fires else [])


@pytest.mark.sglang
@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_the_pins_pick_for_the_seed_qwen35_is_the_stand_ins(pin: str) -> None:
    """The pin's own ServerArgs on the seed's real config.json, with the seed's speculative settings,
    picks on each capability what the devices file records for the Qwen3-Next stand-in."""
    devices = json.loads((ROOT / "catalogs" / "sglang" / f"{pin}.devices.json").read_text(encoding="utf-8"))
    stand_in = devices["auto_choices"]["models"]["Qwen3NextForCausalLM"]
    config = _checkpoint(QWEN35).config
    argv = ["--tp-size", "4", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
    caps = ["9.0", "10.0", "11.0", "12.0"]
    cases = [{"id": cap, "config": config, "capability": [int(x) for x in cap.split(".")], "argv": argv}
             for cap in caps]
    proc = sglang_worker.run(pin, RUNNER.read_text(encoding="utf-8"), json.dumps(cases), str(RUNNER), 600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    said = {r["id"]: r for r in json.loads(proc.stdout)}
    picks = {cap: said[cap].get("attention_backend") for cap in caps}
    if pin == "0.5.9":
        assert picks == {cap: stand_in[cap]["attention_backend"] for cap in caps}, said
        assert picks["12.0"] == "flashinfer"  # what G015 says of the seed
    else:
        # 0.5.23 picks otherwise than the stand-in for it (trtllm_mha on SM100), and each pick is in
        # the set its registry allows on that Blackwell GPU: no pick of 0.5.23 fails here
        assert picks["10.0"] == "trtllm_mha", said
        assert picks["10.0"] in SM100_ALLOWED and picks["11.0"] in SM100_ALLOWED and picks["12.0"] in SM120_ALLOWED
