"""Suggestions rank by meaning and spelling together, never another model's name (issue 22 item 12).

A table of wrong spellings with their right answers, on both pins: flags (a value run on,
a typo, another server's or SGLang's older name), choices (parsers, quantizations,
backends, dtypes) and environment variables. For each, gen's finding names the right
answer and none of the wrong ones it used to propose (``--tp8`` -> ``--expert-parallel-size``,
``minimax-m2`` -> ``minimax-m3``, ``quark`` -> ``quark_int4fp8_moe``,
``SGLANG_ENABLE_SPECV2`` -> ``SGLANG_ENABLE_PP_SPEC``), and an inverted successor says
the value inverts. The ``sglang`` tests prove the answers against the real SGLang: the
wrong flag or choice is refused by its parser, the suggested one is accepted with the
value meant; the inverted variable does what gen says it does when SGLang reads it.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from parser_oracle import parse_many
from sglang_env import sglang_python

from generator.errors import Diagnostic
from generator.importer.build import import_command
from generator.sglang.catalog import known_pins, load_catalog
from generator.sglang.sense import opposite_sense, same_model, slip, typo_distance

ROOT = Path(__file__).resolve().parent.parent
BOTH = ("0.5.9", "0.5.23")
TP = {"0.5.9": "--tensor-parallel-size", "0.5.23": "--tp-size"}
DP = {"0.5.9": "--data-parallel-size", "0.5.23": "--dp-size"}

# (pins, flags after --model-path, the code, the answer gen must give, answers it must not give,
#  the argv that fixes it: the real parser must accept it)
FLAGS = [
    (BOTH, "--tp8", "F001", "{tp} 8", ["--expert-parallel-size", "--ep-size", "--dtype"], "--tp 8"),
    (BOTH, "--tp-size8", "F001", "{tp} 8", ["--expert"], "--tp-size 8"),
    (BOTH, "--dp2", "F001", "{dp} 2", ["--dtype"], "--dp 2"),
    (BOTH, "--mem-fraction-static0.85", "F001", "--mem-fraction-static 0.85", [], "--mem-fraction-static 0.85"),
    (BOTH, "--context-length32768", "F001", "--context-length 32768", [], "--context-length 32768"),
    (BOTH, "--dtypebfloat16", "F001", "--dtype bfloat16", [], "--dtype bfloat16"),
    (BOTH, "--port30000", "F001", "--port 30000", [], "--port 30000"),
    (BOTH, "--mem-fraction-statc 0.8", "F001", "--mem-fraction-static", [], "--mem-fraction-static 0.8"),
    (BOTH, "--reasoning-parsr qwen3", "F001", "--reasoning-parser", [], "--reasoning-parser qwen3"),
    (BOTH, "--chunk-prefill-size 4096", "F001", "--chunked-prefill-size", [], "--chunked-prefill-size 4096"),
    (BOTH, "--contex-length 4096", "F001", "--context-length", [], "--context-length 4096"),
    (BOTH, "--schedule-polcy lpm", "F001", "--schedule-policy", [], "--schedule-policy lpm"),
    (BOTH, "--attention-backnd triton", "F001", "--attention-backend", [], "--attention-backend triton"),
    (BOTH, "--quantisation fp8", "F001", "--quantization", [], "--quantization fp8"),
    (BOTH, "--tp8x", "F001", "no SGLang flag is close", ["--dtype", "--expert"], None),
    (BOTH, "--gpu-memory-utilization 0.9", "F001", "--mem-fraction-static", [], "--mem-fraction-static 0.9"),
    (BOTH, "--max-model-len 8192", "F001", "--context-length", [], "--context-length 8192"),
    # a word left out is found; a flag that only looks alike is another setting
    (BOTH, "--enable-gc", "F001", "use '--enable-cudagraph-gc'", ["--enable-trace", "--enable-lora"],
     "--enable-cudagraph-gc"),
    (BOTH, "--soft-timeout 3", "F001", "use '--soft-watchdog-timeout'", ["--dist-timeout"], "--soft-watchdog-timeout 3"),
    (BOTH, "--log-format x", "F001", "use '--log-requests-format'", ["--load-format"], None),
    (("0.5.23",), "--enable-store", "F001", "use '--enable-response-store'", ["--enable-lora"], "--enable-response-store"),
    (("0.5.9",), "--no-enable-fused-qk-norm-rope", "F007", "leave '--enable-fused-qk-norm-rope' out",
     ["did you mean"], ""),
    (("0.5.9",), "--no-mm-enable-dp-encoder", "F007", "leave '--mm-enable-dp-encoder' out", ["did you mean"], ""),
]
CHOICES = [
    (BOTH, "--reasoning-parser minimax-m2", "F003", "minimax-append-think", ["minimax-m3", "'minimax'"],
     "--reasoning-parser minimax-append-think"),
    (("0.5.9",), "--quantization quark", "F003", "'quark' is a choice of '--quantization' in SGLang 0.5.23",
     ["quark_int4fp8_moe'?"], None),
    (BOTH, "--quantization FP8", "F003", "did you mean 'fp8'?", [], "--quantization fp8"),
    (BOTH, "--tool-call-parser qwen3", "F003", "did you mean 'qwen3_coder'?", ["'qwen'", "qwen25"],
     "--tool-call-parser qwen3_coder"),
    (BOTH, "--reasoning-parser deepseek_r1", "F003", "did you mean 'deepseek-r1'?", [], "--reasoning-parser deepseek-r1"),
    (BOTH, "--tool-call-parser deepseek-v3", "F003", "did you mean 'deepseekv3'?", ["deepseekv31", "deepseekv32"],
     "--tool-call-parser deepseekv3"),
    (BOTH, "--tool-call-parser deepseekv3.1", "F003", "did you mean 'deepseekv31'?", ["'deepseekv3'", "deepseekv32"],
     "--tool-call-parser deepseekv31"),
    (BOTH, "--tool-call-parser glm4.5", "F003", "did you mean 'glm45'?", ["glm47"], "--tool-call-parser glm45"),
    (BOTH, "--tool-call-parser glm46", "F003", "invalid choice", ["glm45", "glm47'?"], None),
    (BOTH, "--tool-call-parser qwen2.5", "F003", "did you mean 'qwen25'?", ["qwen3_coder"], "--tool-call-parser qwen25"),
    (BOTH, "--attention-backend flash_attn", "F003", "did you mean 'fa3'?", ["flashmla", "dual_chunk"],
     "--attention-backend fa3"),
    (BOTH, "--dtype bf16", "F003", "did you mean 'bfloat16'?", ["flashinfer", "deepep"], "--dtype bfloat16"),
    (BOTH, "--kv-cache-dtype fp8", "F003", "did you mean 'fp8_e4m3'?", ["fp8_e5m2'"], "--kv-cache-dtype fp8_e4m3"),
    (BOTH, "--grammar-backend flashinfer", "F003", "is a choice of '--attention-backend'", [], None),
    (BOTH, "--tool-call-parser deepseek-r1", "F003", "is a choice of '--reasoning-parser'", [], None),
    (BOTH, "--load-format safetensor", "F003", "did you mean 'safetensors'?", [], "--load-format safetensors"),
    # spelling alone proposes no other thing: a scheme, a model or a backend more than a typo away
    (BOTH, "--quantization nvfp4", "F003", "invalid choice", ["mxfp4"], None),
    (BOTH, "--quantization fp4", "F003", "invalid choice", ["mxfp4", "did you mean"], None),
    (("0.5.23",), "--quantization quark_int4", "F003", "invalid choice", ["quark_mxfp4", "quark_int4fp8_moe"], None),
    (BOTH, "--tool-call-parser lfm3", "F003", "invalid choice", ["llama3", "lfm2"], None),
    (BOTH, "--tool-call-parser lfm", "F003", "invalid choice", ["'glm'"], None),
    (BOTH, "--reasoning-parser deepseek-v31", "F003", "invalid choice", ["'deepseek-v3'", "did you mean"], None),
    (BOTH, "--dtype lfoat16", "F003", "did you mean 'float16'?", ["bfloat16"], "--dtype float16"),
    (BOTH, "--attention-backend native", "F003", "invalid choice", ["wave"], None),
    (("0.5.23",), "--reasoning-parser thinking", "F003", "invalid choice", ["granite_thinking_parser"], None),
    (BOTH, "--tool-call-parser pythonc", "F003", "did you mean 'pythonic'?", [], "--tool-call-parser pythonic"),
    (BOTH, "--attention-backend trtllm", "F003", "'trtllm_mla' or 'trtllm_mha'", [], "--attention-backend trtllm_mha"),
    (("0.5.23",), "--kv-cache-dtype block16", "F003", "invalid choice", ["bfloat16"], None),
    (("0.5.9",), "--reasoning-parser v3", "F003", "invalid choice", ["nano_v3", "deepseek-v3"], None),
]
# (pins, VAR=value, the code, the answer, what it must not say)
VARIABLES = [
    (("0.5.9",), "SGLANG_ENABLE_SPECV2=1", "E001", "did you mean 'SGLANG_ENABLE_SPEC_V2'?", ["PP_SPEC"]),
    (("0.5.23",), "SGLANG_ENABLE_SPECV2=1", "E001", "'SGLANG_ENABLE_SPEC_V2' (SGLang 0.5.9)", ["PP_SPEC"]),
    (("0.5.9",), "SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK=1", "E006",
     "write SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK=0", ["did you mean 'SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK'?"]),
    (("0.5.9",), "SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK=false", "E006",
     "write SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK=true", []),
    (("0.5.23",), "SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK=1", "E003",
     "its successor 'SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK' means the opposite: write "
     "SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK=0", []),
    (BOTH, "SGLANG_ENABLE_JIT_DEEP_GEMM=1", "E001", "did you mean 'SGLANG_ENABLE_JIT_DEEPGEMM'?", []),
    (BOTH, "SGLANG_SETCPU_AFFINITY=1", "E001", "did you mean 'SGLANG_SET_CPU_AFFINITY'?", []),
    (BOTH, "SGLANG_TORCH_PROFILER_DIRR=/tmp/p", "E001", "did you mean 'SGLANG_TORCH_PROFILER_DIR'?", []),
    # a word left out is found; a neighbour by likeness alone is another variable
    (BOTH, "SGLANG_DISAGGREGATION_THREAD_SIZE=4", "E001", "did you mean 'SGLANG_DISAGGREGATION_THREAD_POOL_SIZE'?",
     ["QUEUE_SIZE"]),
    (("0.5.23",), "SGLANG_AITER_MEGA_SYNC=1", "E001", "did you mean 'SGLANG_AITER_MEGA_RANK_SYNC'?", ["TRACE_ASYNC"]),
    (BOTH, "SGLANG_DISABLE_JIT_DEEPGEMM=1", "E001",
     "did you mean 'SGLANG_ENABLE_JIT_DEEPGEMM' (the opposite sense: invert the value)?", []),
]


def _import(pin: str, text: str) -> list[Diagnostic]:
    catalog = load_catalog(ROOT, pin)
    others = [load_catalog(ROOT, p) for p in known_pins(ROOT) if p != pin]
    return list(import_command(text, "<command>", catalog, others).diagnostics)


def _expand(rows: list[tuple]) -> list[tuple]:  # type: ignore[type-arg]
    return [(pin, *row[1:]) for row in rows for pin in row[0]]


def _says(diags: list[Diagnostic], code: str) -> str:
    """What the findings of ``code`` suggest: their text and fix, without argparse's list of choices."""
    found = [f"{re.sub(r' [(]choose from [^)]*[)]', '', d.message)} ({d.hint})" for d in diags if d.code == code]
    assert found, [str(d) for d in diags]
    return " ".join(found)


@pytest.mark.parametrize(("pin", "flags", "code", "right", "wrong", "fix"), _expand(FLAGS + CHOICES),
                         ids=[f"{r[0]} {r[1]}" for r in _expand(FLAGS + CHOICES)])
def test_flag_and_choice_suggestions(pin: str, flags: str, code: str, right: str, wrong: list[str],
                                     fix: str | None) -> None:
    said = _says(_import(pin, f"python -m sglang.launch_server --model-path /shared/models/x {flags}"), code)
    assert right.format(tp=TP[pin], dp=DP[pin]) in said, said
    for bad in wrong:
        assert bad not in said, (bad, said)


@pytest.mark.parametrize(("pin", "word", "code", "right", "wrong"), _expand(VARIABLES),
                         ids=[f"{r[0]} {r[1]}" for r in _expand(VARIABLES)])
def test_variable_suggestions(pin: str, word: str, code: str, right: str, wrong: list[str]) -> None:
    said = _says(_import(pin, f"{word} python -m sglang.launch_server --model-path /shared/models/x"), code)
    assert right in said, said
    for bad in wrong:
        assert bad not in said, (bad, said)


@pytest.mark.parametrize(("a", "b", "opposite"), [
    ("SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK", "SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK", True),
    ("--no-enable-fused-qk-norm-rope", "--enable-fused-qk-norm-rope", True),
    ("--disable-radix-cache", "--enable-radix-cache", True),
    ("--enable-x", "--disable-x", True), ("SGLANG_SKIP_WARMUP", "SGLANG_WARMUP", True),
    ("SGLANG_GC_LOG", "SGLANG_LOG_GC", False), ("--hybrid-kvcache-ratio", "--swa-full-tokens-ratio", False),
    ("SGL_ENABLE_JIT_DEEPGEMM", "SGLANG_ENABLE_JIT_DEEPGEMM", False), ("--tp", "--tp", False),
])
def test_opposite_sense(a: str, b: str, opposite: bool) -> None:
    assert opposite_sense(a, b) is opposite
    assert opposite_sense(b, a) is opposite


@pytest.mark.parametrize(("a", "b", "same"), [
    ("minimax-m2", "minimax-m3", False), ("quark", "quark_int4fp8_moe", False), ("glm45", "glm47", False),
    ("deepseekv3", "deepseekv31", False), ("deepseekv3.1", "deepseekv31", True), ("qwen3", "qwen3_coder", True),
    ("glm4.5", "glm45", True), ("--fp4-gemm-backend", "--fp8-gemm-backend", False), ("kimi", "kimi_k2", False),
])
def test_same_model(a: str, b: str, same: bool) -> None:
    assert same_model(a, b) is same


@pytest.mark.parametrize(("written", "candidate", "edits"), [
    ("contex-length", "context-length", 1), ("chunk-prefill-size", "chunked-prefill-size", 2),
    ("enable-store", "enable-lora", None), ("log-format", "load-format", None), ("quark_int4", "quark_mxfp4", None),
    ("nvfp4", "mxfp4", None), ("lfoat16", "float16", 1), ("SGLANG_TORCH_PROFILER_DIRR", "SGLANG_TORCH_PROFILER_DIR", 1),
    ("tp", "ep", None), ("deepseek_v3", "deepseekv3", 1),
])
def test_a_slip_is_judged_by_the_words_that_differ(written: str, candidate: str, edits: int | None) -> None:
    assert slip(written, candidate) == edits


@pytest.mark.parametrize(("a", "b", "edits"), [
    ("", "", 0), ("abc", "", 3), ("", "ab", 2), ("lfoat16", "float16", 1), ("fbloat16", "bfloat16", 1),
    ("safetensor", "safetensors", 1), ("nvfp4", "mxfp4", 2), ("quark_int4", "quark_mxfp4", 4),
    ("kitten", "sitting", 3), ("ca", "abc", 3),  # OSA: a swapped pair is not edited again
])
def test_typo_distance(a: str, b: str, edits: int) -> None:
    assert typo_distance(a, b) == edits
    assert typo_distance(b, a) == edits


@pytest.mark.sglang
@pytest.mark.parametrize("pin", BOTH)
def test_the_real_parser_refuses_the_wrong_and_takes_the_answer(pin: str) -> None:
    rows = [r for r in _expand(FLAGS + CHOICES) if r[0] == pin]
    wrong = [["--model-path", "/m", *r[1].split()] for r in rows]
    fixes = [(r, ["--model-path", "/m", *r[5].split()]) for r in rows if r[5] is not None]
    parsed = parse_many(pin, wrong + [f for _, f in fixes])
    for row, result in zip(rows, parsed):
        assert result.exit == 2, (row[1], "SGLang accepts what gen calls wrong")
    for (row, argv), result in zip(fixes, parsed[len(rows):]):
        assert result.exit is None, (row[1], argv, result.said)


ENV_ORACLE = r'''
import json, os, sys
os.environ.update(json.loads(sys.argv[1]))
import contextlib, io
with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
    from sglang.srt.environ import envs
print(json.dumps({name: getattr(envs, name).get() for name in json.loads(sys.argv[2])}))
'''


@pytest.mark.sglang
def test_the_inverted_variable_does_what_gen_says() -> None:
    """SGLang 0.5.9 copies SGL_DISABLE_..._CHECK=1 to SGLANG_ENABLE_..._CHECK unchanged: the check
    stays on; gen's answer (SGLANG_ENABLE_..._CHECK=0) turns it off."""
    python = sglang_python("0.5.9")
    name = "SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK"

    def read(env: dict[str, str]) -> bool:
        out = subprocess.run([python, "-c", ENV_ORACLE, json.dumps(env), json.dumps([name])],
                             capture_output=True, text=True, timeout=600, check=True).stdout
        return bool(json.loads(out.strip().splitlines()[-1])[name])

    assert read({"SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK": "1"}) is True  # "disable" left it on
    assert read({name: "0"}) is False
    # and the variables gen names as the right spelling are ones SGLang reads
    for pin, var in (("0.5.9", "SGLANG_ENABLE_SPEC_V2"), ("0.5.9", "SGLANG_ENABLE_JIT_DEEPGEMM"),
                     ("0.5.23", "SGLANG_ENABLE_JIT_DEEPGEMM"), ("0.5.9", "SGLANG_SET_CPU_AFFINITY")):
        subprocess.run([sglang_python(pin), "-c", ENV_ORACLE, "{}", json.dumps([var])],
                       capture_output=True, text=True, timeout=600, check=True)
