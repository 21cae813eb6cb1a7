"""One setting given twice: the same value is a warning (F106, the second left out), another an error (F008).

argparse keeps the last occurrence, so two flags of one dest that agree change nothing:
``--tp 8 --tensor-parallel-size 8`` is what ``--tp 8`` alone gives SGLang. "Agree" is what
argparse stores: a value after the action's type (``8``/``08``, ``0.85``/``0.850``, JSON by its
data), a BooleanOptional by its form, a switch by itself; aliases, abbreviations, deprecated
spellings rendered as their successor, and a structured manifest field all count. The
``sglang`` test proves with the real parsers that the command written twice and the argv
gen renders from its import parse to the same namespace.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from import_render import rendered_argv
from parser_oracle import parse_many

from generator.importer.build import import_command
from generator.sglang.catalog import known_pins, load_catalog

ROOT = Path(__file__).resolve().parent.parent

# (pin, flags after --model-path /m, codes of the duplicates: F106 same value, F008 another)
CASES = [
    ("0.5.9", "--tp 8 --tensor-parallel-size 8", ["F106"]),
    ("0.5.23", "--tp 8 --tp-size 8", ["F106"]),
    ("0.5.23", "--tp-size 8 --tensor-parallel-size 08", ["F106"]),
    ("0.5.9", "--tp 8 --tensor-parallel-size 4", ["F008"]),
    ("0.5.9", "--mem-fraction-static 0.85 --mem-frac 0.850", ["F106"]),
    ("0.5.9", "--mem-fraction-static 0.85 --mem-frac 0.8", ["F008"]),
    ("0.5.9", "--enable-metrics --enable-metrics", ["F106"]),
    ("0.5.23", "--trust-remote-code --trust-remote", ["F106"]),
    ("0.5.9", "--cuda-graph-bs 1 2 4 --cuda-graph-bs 1 2 4", ["F106"]),
    ("0.5.9", "--cuda-graph-bs 1 2 4 --cuda-graph-bs 1 2", ["F008"]),
    # a str-typed flag (0.5.9 reads the JSON later): argparse stores two different strings
    ("0.5.9", "--json-model-override-args '{\"a\": 1}' --json-model-override-args '{\"a\":1}'", ["F008"]),
    ("0.5.9", "--json-model-override-args '{\"a\": 1}' --json-model-override-args '{\"a\": 1}'", ["F106"]),
    ("0.5.9", "--json-model-override-args '{\"a\": 1}' --json-model-override-args '{\"a\": 2}'", ["F008"]),
    ("0.5.23", "--enable-fused-qk-norm-rope --no-enable-fused-qk-norm-rope", ["F008"]),
    ("0.5.23", "--no-enable-fused-qk-norm-rope --no-enable-fused-qk-norm-rope", ["F106"]),
    ("0.5.9", "--tool-call-parser qwen25 --tool-call-parser=qwen25", ["F106"]),
    ("0.5.9", "--served-model-name a --served-model-name b", ["F008"]),
    ("0.5.9", "--reasoning-parser qwen3 --reasoning-parser qwen3 --reasoning-parser qwen3", ["F106", "F106"]),
]


def run_import(pin: str, flags: str):  # type: ignore[no-untyped-def]
    cat = load_catalog(ROOT, pin)
    others = [load_catalog(ROOT, p) for p in known_pins(ROOT) if p != pin]
    return import_command(f"python -m sglang.launch_server --model-path /shared/models/m {flags}", "<command>", cat, others)


@pytest.mark.parametrize(("pin", "flags", "codes"), CASES, ids=[f"{c[0]} {c[1]}" for c in CASES])
def test_a_setting_given_twice(pin: str, flags: str, codes: list[str]) -> None:
    result = run_import(pin, flags)
    assert [d.code for d in result.diagnostics if d.code in ("F106", "F008")] == codes
    if "F008" in codes:
        assert result.manifest is None
    else:
        assert result.manifest is not None
        # the manifest says what it left out
        assert result.manifest.count("\n# F106: ") == len(codes)


@pytest.mark.sglang
@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_same_value_twice_parses_as_once(pin: str) -> None:
    """Both parsers agree: the doubled command is what the rendered argv (once) gives SGLang."""
    cases = [(flags, codes) for p, flags, codes in CASES if p == pin and "F008" not in codes]
    argvs: list[list[str]] = []
    for flags, _ in cases:
        result = run_import(pin, flags)
        assert result.manifest is not None
        argvs += [["--model-path", "/shared/models/m", *shlex.split(flags)], rendered_argv(pin, result.manifest)]
    parsed = parse_many(pin, argvs)
    for k, (flags, _) in enumerate(cases):
        written, rendered = parsed[2 * k], parsed[2 * k + 1]
        assert written.exit is None and rendered.exit is None, (flags, written.said, rendered.said)
        assert written.values is not None and rendered.values is not None
        for dest in ("host", "port", "model_path"):
            written.values.pop(dest), rendered.values.pop(dest)
        assert written.values == rendered.values, flags
