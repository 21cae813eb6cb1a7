"""What the pinned SGLang picks itself for a checkpoint's real config.json on a stand-in GPU.

Runs inside an SGLang venv (tests/sglang_env.py): reads a JSON list of cases ``{"id", "config",
"capability", "argv"}`` on stdin and prints ``[{"id", "attention_backend"} | {"id", "error"}]``.
Each case writes ``config`` as a checkpoint folder's config.json (no weights: a stand-in
checkpoint) and runs the pin's ``prepare_server_args(["--model-path", FOLDER, "--device",
"cuda", *argv])`` (and ``resolve_once()`` on 0.5.23) while tests/sglang_platform.py, the
stand-in GPU, answers its device checks for that compute capability under torch CUDA 12.8.
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


def _pick(path: str, case: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tests/: the stand-in GPU
    from sglang_platform import platform

    from sglang.srt.server_args import prepare_server_args

    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), \
                platform({"capability": case["capability"], "cuda": "12.8"}):
            args = prepare_server_args(["--model-path", path, "--device", "cuda", *case["argv"]])
            if hasattr(args, "resolve_once"):
                args.resolve_once()
            try:
                from sglang.srt.arg_groups.model_override_base import resolved_view
            except ImportError:
                return {"id": case["id"], "attention_backend": args.attention_backend}
            return {"id": case["id"], "attention_backend": resolved_view(args).attention_backend}
    except Exception as exc:  # noqa: BLE001 - the pin refuses the case, whatever the class: say so
        return {"id": case["id"], "error": f"{type(exc).__name__}: {str(exc)[:300]}"}


def main() -> None:
    """Each case of stdin: the attention backend the pin picks (module docstring)."""
    cases = json.load(sys.stdin)
    logging.disable(logging.CRITICAL)
    out = []
    with tempfile.TemporaryDirectory(prefix="gen-gpu-picks-") as root:
        for case in cases:
            path = os.path.join(root, case["id"].replace("/", "_").replace("@", "_"))
            os.makedirs(path)
            with open(os.path.join(path, "config.json"), "w", encoding="utf-8") as fh:
                json.dump(case["config"], fh)
            out.append(_pick(path, case))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
