"""Run the real SGLang's own argument validation on a corpus of argvs (one process, many cases).

Runs inside an SGLang venv (tests/sglang_env.py), not in gen's: reads a JSON list of
cases ``{"id", "argv", "env"}`` on stdin and prints one JSON list of results
``{"id", "ok", "error", "draft_tokens"}``. Each case goes through
``prepare_server_args(["--model-path", FAKE, "--device", "cpu", *argv])`` and, where
the pin has them (0.5.23), ``resolve_once()``; then ``check_server_args()``.

The model is a stand-in: ``fake_model_*/config.json`` of a tiny LlamaForCausalLM made
here, since no real checkpoint (and no GPU) exists on a test machine; the argv word
``fake_draft_model`` is replaced by a second such folder (a stand-in drafter).

A case with ``"platform": {"capability": [12, 0], "cuda": "12.8", ...}`` is validated as
on that NVIDIA GPU (``--device cuda``, the pin's device checks answered by
tests/sglang_platform.py: 0.5.23's own override_platform, 0.5.9's probes patched); its
result also carries the attention backend SGLang picked (``attention_backend``).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
import tempfile
from typing import Any

FAKE_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256,
    "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 4,
    "num_hidden_layers": 2, "vocab_size": 1000, "max_position_embeddings": 2048,
    "torch_dtype": "bfloat16", "rms_norm_eps": 1e-5,
}


DRAFT_WORD = "fake_draft_model"


def _draft_tokens(args: Any) -> Any:
    """num_draft_tokens after SGLang's own adjustments (0.5.23 keeps them in a resolved view)."""
    try:
        from sglang.srt.arg_groups.model_override_base import resolved_view
    except ImportError:
        return args.speculative_num_draft_tokens
    return resolved_view(args).speculative_num_draft_tokens


def _attention_backend(args: Any) -> Any:
    """The attention backend after SGLang's own choice (0.5.23 keeps it in a resolved view)."""
    try:
        from sglang.srt.arg_groups.model_override_base import resolved_view
    except ImportError:
        return args.attention_backend
    return resolved_view(args).attention_backend


def _one(model: str, draft: str, case: dict[str, Any]) -> dict[str, Any]:
    from sglang.srt.server_args import prepare_server_args
    from sglang_cases import case_environment
    from sglang_platform import platform

    out: dict[str, Any] = {"id": case["id"], "ok": False, "error": None, "draft_tokens": None,
                           "attention_backend": None}
    sink = io.StringIO()
    facts = case.get("platform")
    device = "cuda" if facts else "cpu"
    with case_environment(case.get("env")):
        try:
            with contextlib.redirect_stderr(sink), contextlib.redirect_stdout(sink), \
                    (platform(facts) if facts else contextlib.nullcontext()):
                argv = [draft if w == DRAFT_WORD else w for w in case["argv"]]
                args = prepare_server_args(["--model-path", model, "--device", device, *argv])
                if hasattr(args, "resolve_once"):
                    args.resolve_once()
                args.check_server_args()
                out["attention_backend"] = _attention_backend(args)
            out["ok"] = True
            out["draft_tokens"] = _draft_tokens(args)
        except SystemExit as exc:  # argparse: usage error
            out["error"] = f"SystemExit({exc.code}): {sink.getvalue().strip().splitlines()[-1:]}"
        except Exception as exc:  # SGLang's own checks: AssertionError, ValueError, TypeError
            out["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    return out


def main() -> None:
    """Validate every case of stdin; print the results as JSON."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tests/: the helpers (the worker restores sys.path)
    from sglang_cases import config_folder

    cases = json.load(sys.stdin)
    logging.disable(logging.CRITICAL)  # SGLang warns a lot; only outcomes matter here
    with tempfile.TemporaryDirectory(prefix="gen-differential-") as folder:
        model = config_folder(folder, "fake_model_llama", FAKE_CONFIG)
        draft = config_folder(folder, "fake_draft_llama", FAKE_CONFIG)
        results = [_one(model, draft, case) for case in cases]
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
