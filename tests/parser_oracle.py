"""The real SGLang parser of a pin, asked about many argv lists in one process (tests marked ``sglang``).

``parse_many(pin, argvs)`` builds SGLang's own parser exactly as ``prepare_server_args``
does (a plain ``argparse.ArgumentParser()`` with ``ServerArgs.add_cli_args``: abbreviations
on) inside the pin's real venv (tests/sglang_env.py), parses every argv and returns, per
argv, argparse's exit status (None when it parsed), its last stderr line, and the parsed
namespace (every dest; values argparse stored, as JSON with ``repr`` for anything else).
Importing SGLang takes seconds, so one process answers all argvs of a pin.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from typing import Any, Sequence

from sglang_env import sglang_python

_SCRIPT = r'''
import argparse, contextlib, io, json, sys
with contextlib.redirect_stdout(sys.stderr):  # SGLang may print while importing
    from sglang.srt.server_args import ServerArgs
results = []
for argv in json.load(sys.stdin):
    parser = argparse.ArgumentParser(prog="sglang")
    ServerArgs.add_cli_args(parser)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            ns = parser.parse_args(argv)
    except SystemExit as exc:
        lines = err.getvalue().strip().splitlines()
        results.append({"exit": exc.code, "said": lines[-1] if lines else "", "values": None})
        continue
    results.append({"exit": None, "said": "", "values": vars(ns)})
print("PARSER-ORACLE " + json.dumps(results, default=repr))
'''


@dataclass(frozen=True)
class Parsed:
    """What SGLang's parser made of one argv."""

    exit: int | None  # argparse's exit status (2 for a refusal), None when it parsed
    said: str  # the last line argparse printed on stderr ("sglang: error: ...")
    values: dict[str, Any] | None  # every dest, when it parsed


def parse_many(pin: str, argvs: Sequence[Sequence[str]]) -> list[Parsed]:
    """Parse each argv with the real SGLang ``pin``'s parser, in one subprocess."""
    proc = subprocess.run([sglang_python(pin), "-c", _SCRIPT], input=json.dumps([list(a) for a in argvs]),
                          capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("PARSER-ORACLE ")]
    results = json.loads(line.removeprefix("PARSER-ORACLE "))
    assert len(results) == len(argvs)
    return [Parsed(r["exit"], r["said"], r["values"]) for r in results]
