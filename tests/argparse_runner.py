"""Parse argvs with the real SGLang parser (``ServerArgs.add_cli_args``) and print what it stores.

Runs inside an SGLang venv (tests/sglang_env.py), not in gen's: reads a JSON list of argv
lists on stdin (``--model-path`` is added to each) and prints one JSON list of results,
``{"ok": true, "values": {dest: value}}`` or ``{"ok": false, "error": ...}`` when argparse
or an action refuses the words. Values JSON cannot hold become ``{"repr": type name}``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import sys
from typing import Any


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return {"repr": type(value).__name__}


def main() -> None:
    """Parse every argv of stdin; print the results as JSON."""
    from sglang.srt.server_args import ServerArgs

    logging.disable(logging.CRITICAL)
    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    out = []
    for argv in json.load(sys.stdin):
        sink = io.StringIO()
        try:
            with contextlib.redirect_stderr(sink), contextlib.redirect_stdout(sink):
                namespace = parser.parse_args(["--model-path", "m", *argv])
            out.append({"ok": True, "values": {k: _plain(v) for k, v in vars(namespace).items()}})
        except SystemExit:
            out.append({"ok": False, "error": sink.getvalue().strip().splitlines()[-1:]})
        except Exception as exc:  # noqa: BLE001  (an action's own failure: LoRAPathAction's json.loads, assert)
            out.append({"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
