"""Tests for generator/sglang/flags/: every written SGLang flag resolved against a pin's catalog.

Tables of (input args, expected diagnostics with exact code and message, expected words).
The small catalogs come from real argparse parsers (``catalog_from_parser`` in
test_catalog.py), and every rendered argv is parsed back by that same parser, so the
words are known to be what argparse accepts without relying on abbreviations.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest

from generator.sglang.catalog import Catalog, known_pins, load_catalog, load_flag_tables, tables_dir
from generator.errors import Diagnostic, Diagnostics, Position, Severity
from generator.sglang.flags import Arg, ArgValue, check_args
from test_catalog import catalog_from_parser

POS = Position("models/m.yaml", 7, 3)
E, W = Severity.ERROR, Severity.WARNING


class DeprecatedAliasStoreAction(argparse.Action):
    """Shape of SGLang 0.5.23's action of that name: a renamed valued flag, same dest."""

    def __init__(self, option_strings: list[str], dest: str, new_flag: str | None = None,
                 **kwargs: Any) -> None:
        self.new_flag = new_flag
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        setattr(namespace, self.dest, values)


class DeprecatedAction(argparse.Action):
    """Shape of SGLang's retired flag: with an error_message the parser refuses it."""

    def __init__(self, option_strings: list[str], dest: str, error_message: str | None = None,
                 **kwargs: Any) -> None:
        self.error_message = error_message
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        if self.error_message is not None:
            parser.error(self.error_message)


class DeprecatedStoreTrueAction(argparse.Action):
    """Shape of SGLang's deprecated boolean: stores True, points at a replacement text."""

    def __init__(self, option_strings: list[str], dest: str, new_flag: str | None = None,
                 **kwargs: Any) -> None:
        self.new_flag = new_flag
        super().__init__(option_strings, dest, nargs=0, default=False, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        setattr(namespace, self.dest, True)


def old_parser() -> argparse.ArgumentParser:
    """An SGLang-0.5.9-shaped parser: the flags and quirks the cases below need."""
    p = argparse.ArgumentParser()
    p.add_argument("--model-path", "--model")
    p.add_argument("--tensor-parallel-size", "--tp-size", type=int, default=1)
    p.add_argument("--context-length", type=int)
    p.add_argument("--speculative-algorithm", choices=["EAGLE", "EAGLE3", "NEXTN"])
    p.add_argument("--speculative-draft-model-path", "--speculative-draft-model")
    p.add_argument("--speculative-draft-model-revision")
    p.add_argument("--speculative-num-steps", type=int)
    p.add_argument("--speculative-eagle-topk", type=int)
    p.add_argument("--speculative-num-draft-tokens", type=int)
    p.add_argument("--mem-fraction-static", type=float)
    p.add_argument("--enable-metrics", action="store_true")
    p.add_argument("--enable-overlap", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--json-model-override-args", type=json.loads, default="{}")
    p.add_argument("--cuda-graph-bs", type=int, nargs="+")
    p.add_argument("--lora-paths", nargs="*")
    p.add_argument("--draft-pair", nargs=2)
    p.add_argument("--page-size", type=int, choices=[1, 16, 64], default=1)
    p.add_argument("--verbosity", action="count", default=0)
    p.add_argument("--weird-bool", type=bool, default=False)
    p.add_argument("--chat-template")
    p.add_argument("--middleware", action="append")
    p.add_argument("--mamba-scheduler-strategy", choices=["auto", "no_buffer"])
    p.add_argument("--hybrid-kvcache-ratio", action=DeprecatedAliasStoreAction,
                   dest="swa_full_tokens_ratio", type=float, new_flag="--swa-full-tokens-ratio")
    p.add_argument("--swa-full-tokens-ratio", type=float)
    p.add_argument("--enable-dp-attention", action=DeprecatedStoreTrueAction,
                   new_flag="--attn-dp-size <dp-size>")
    p.add_argument("--cuda-graph-max-bs", type=int)
    p.add_argument("--enable-fused-norm", action="store_true")
    p.add_argument("--old-fatal", action=DeprecatedAction,
                   error_message="--old-fatal was removed; use --context-length.")
    return p


OLD_DEPRECATED = {
    "--hybrid-kvcache-ratio": {"replacement": "--swa-full-tokens-ratio",
                               "message": "Use --swa-full-tokens-ratio instead."},
    "--enable-dp-attention": {"replacement": None, "fatal": False,
                              "message": "Deprecated. Use --attn-dp-size <dp-size> instead."},
    "--old-fatal": {"replacement": "--context-length", "fatal": True,
                    "message": "--old-fatal was removed; use --context-length."},
}


def new_parser() -> argparse.ArgumentParser:
    """An SGLang-0.5.23-shaped parser: free-text algorithm, renamed and new flags."""
    p = argparse.ArgumentParser()
    p.add_argument("--model-path", "--model")
    p.add_argument("--tp-size", "--tensor-parallel-size", type=int, default=1)
    p.add_argument("--speculative-algorithm", type=str)
    p.add_argument("--mamba-radix-cache-strategy", choices=["auto", "no_buffer"])
    p.add_argument("--attn-dp-size", type=int, default=1)
    p.add_argument("--cuda-graph-max-bs-decode", type=int)
    p.add_argument("--cuda-graph-max-bs-prefill", type=int)
    p.add_argument("--enable-fused-norm-quant", action="store_true")
    return p


@pytest.fixture(scope="module")
def old() -> Catalog:
    return catalog_from_parser(old_parser(), "0.5.9", OLD_DEPRECATED)


@pytest.fixture(scope="module")
def new() -> Catalog:
    return catalog_from_parser(new_parser(), "0.5.23")


def run(catalog: Catalog, args: list[Arg], others: tuple[Catalog, ...] = ()
        ) -> tuple[list[tuple[str, Severity, str, str | None]], list[tuple[str, ...]]]:
    """check_args, flattened to (code, severity, message, hint) rows and word groups."""
    diags = Diagnostics()
    checked = check_args(catalog, args, diags, others)
    rows = [(d.code, d.severity, d.message, d.hint) for d in diags.items]
    return rows, [c.words for c in checked]


def a(name: str, value: ArgValue = True, *, dest: bool = False, line: int = 7) -> Arg:
    return Arg(name, value, Position("models/m.yaml", line, 3), by_dest=dest)


def argparse_accepts(parser: argparse.ArgumentParser, words: list[str]) -> argparse.Namespace:
    """Parse ``words`` with allow_abbrev off: rendered words must never need a prefix."""
    strict = argparse.ArgumentParser(allow_abbrev=False, parents=[parser], add_help=False,
                                     conflict_handler="resolve")
    return strict.parse_args(words)


# ----- accepted flags: (args, expected warnings, expected words) -----

OK_CASES: list[tuple[str, list[Arg], list[tuple[str, Severity, str, str | None]],
                     list[tuple[str, ...]]]] = [
    ("canonical int", [a("--tensor-parallel-size", 4)], [], [("--tensor-parallel-size", "4")]),
    ("string int", [a("--tensor-parallel-size", "8")], [], [("--tensor-parallel-size", "8")]),
    ("alias", [a("--tp-size", 4)],
     [("F102", W, "'--tp-size' is an alias of '--tensor-parallel-size'; "
                  "rendered as '--tensor-parallel-size'", "did you mean '--tensor-parallel-size'?")],
     [("--tensor-parallel-size", "4")]),
    ("prefix of an alias", [a("--tp", 2)],
     [("F101", W, "'--tp' is an abbreviation of '--tp-size', an alias of '--tensor-parallel-size'; "
                  "rendered as '--tensor-parallel-size' (abbreviations break when SGLang adds a "
                  "flag with the same prefix)", "did you mean '--tensor-parallel-size'?")],
     [("--tensor-parallel-size", "2")]),
    ("incident 2 abbreviation", [a("--speculative-algo", "NEXTN")],
     [("F101", W, "'--speculative-algo' is an abbreviation of '--speculative-algorithm'; rendered "
                  "as '--speculative-algorithm' (abbreviations break when SGLang adds a flag with "
                  "the same prefix)", "did you mean '--speculative-algorithm'?")],
     [("--speculative-algorithm", "NEXTN")]),
    ("underscores", [a("--tp_size", 4)],
     [("F103", W, "'--tp_size' is written with underscores, which SGLang's parser does not "
                  "accept; rendered as '--tensor-parallel-size'",
       "did you mean '--tensor-parallel-size'?")],
     [("--tensor-parallel-size", "4")]),
    ("--x=value form", [a("--mem-fraction-static=0.85")], [], [("--mem-fraction-static", "0.85")]),
    ("float", [a("--mem-fraction-static", 0.1)], [], [("--mem-fraction-static", "0.1")]),
    ("float exponent", [a("--mem-fraction-static", 1e-05)], [], [("--mem-fraction-static", "1e-05")]),
    ("int given to float", [a("--mem-fraction-static", 1)], [], [("--mem-fraction-static", "1")]),
    ("store_true on", [a("--enable-metrics", True)], [], [("--enable-metrics",)]),
    ("store_true off", [a("--enable-metrics", False)], [], [()]),
    ("store_true 'true' text", [a("--enable-metrics", "true")], [], [("--enable-metrics",)]),
    ("BooleanOptional on", [a("--enable-overlap", True)], [], [("--enable-overlap",)]),
    ("BooleanOptional off", [a("--enable-overlap", False)], [], [("--no-enable-overlap",)]),
    ("BooleanOptional negative written", [a("--no-enable-overlap", True)], [],
     [("--no-enable-overlap",)]),
    ("BooleanOptional by dest", [a("enable_overlap", False, dest=True)], [],
     [("--no-enable-overlap",)]),
    ("json", [a("--json-model-override-args", '{"rope_scaling": null}')], [],
     [("--json-model-override-args", '{"rope_scaling": null}')]),
    ("json from a YAML mapping", [a("--json-model-override-args", {"rope_scaling": None})],  # type: ignore[arg-type]
     [], [("--json-model-override-args", '{"rope_scaling": null}')]),
    ("nargs +", [a("--cuda-graph-bs", (1, 2, 4))], [], [("--cuda-graph-bs", "1", "2", "4")]),
    ("nargs + one scalar", [a("--cuda-graph-bs", 8)], [], [("--cuda-graph-bs", "8")]),
    ("nargs *, empty", [a("--lora-paths", ())], [], [("--lora-paths",)]),
    ("nargs 2", [a("--draft-pair", ("a", "b"))], [], [("--draft-pair", "a", "b")]),
    ("int choices", [a("--page-size", 16)], [], [("--page-size", "16")]),
    ("count", [a("--verbosity", 2)], [], [("--verbosity", "--verbosity")]),
    ("append", [a("--middleware", ("x", "y"))], [], [("--middleware", "x", "--middleware", "y")]),
    ("negative number stays a word", [a("--tensor-parallel-size", -1)], [],
     [("--tensor-parallel-size", "-1")]),
    ("dash value joined with =", [a("--chat-template", "-weird")], [],
     [("--chat-template=-weird",)]),
    ("null omits", [a("--context-length", None)], [], [()]),
    ("by dest", [a("tensor_parallel_size", 4, dest=True)], [], [("--tensor-parallel-size", "4")]),
    ("by dest synonym (renames.yaml dests)", [a("tp_size", 4, dest=True)], [],
     [("--tensor-parallel-size", "4")]),
    ("deprecated, one-to-one", [a("--hybrid-kvcache-ratio", 0.5)],
     [("F104", W, "'--hybrid-kvcache-ratio' is deprecated in SGLang 0.5.9; rendered as "
                  "'--swa-full-tokens-ratio'", "did you mean '--swa-full-tokens-ratio'?")],
     [("--swa-full-tokens-ratio", "0.5")]),
    ("deprecated, no one-to-one successor", [a("--enable-dp-attention", True)],
     [("F104", W, "'--enable-dp-attention' is deprecated in SGLang 0.5.9 (SGLang: Deprecated. "
                  "Use --attn-dp-size <dp-size> instead.)", None)],
     [("--enable-dp-attention",)]),
    ("incident 1, fixed", [a("--speculative-algorithm", "EAGLE3"), a("--speculative-eagle-topk", 1),
                           a("--speculative-num-steps", 3), a("--speculative-num-draft-tokens", 4),
                           a("--speculative-draft-model-path", "/shared/models/drafter")], [],
     [("--speculative-algorithm", "EAGLE3"), ("--speculative-eagle-topk", "1"),
      ("--speculative-num-steps", "3"), ("--speculative-num-draft-tokens", "4"),
      ("--speculative-draft-model-path", "/shared/models/drafter")]),
]


@pytest.mark.parametrize(("case", "args", "diags", "words"), OK_CASES, ids=[c[0] for c in OK_CASES])
def test_accepted(old: Catalog, case: str, args: list[Arg],
                  diags: list[tuple[str, Severity, str, str | None]],
                  words: list[tuple[str, ...]]) -> None:
    got_diags, got_words = run(old, args)
    assert got_diags == diags
    assert got_words == words
    argv = [w for group in got_words for w in group]
    argparse_accepts(old_parser(), argv)


def test_values_reach_argparse_as_written(old: Catalog) -> None:
    """The parser reads back the very values the manifest gave (no Python reprs)."""
    _, words = run(old, [a("--tensor-parallel-size", 4), a("--mem-fraction-static", 0.85),
                         a("--enable-overlap", False), a("--cuda-graph-bs", (1, 2)),
                         a("--json-model-override-args", '{"a": [1, 2]}'),
                         a("--chat-template", "-weird")])
    ns = argparse_accepts(old_parser(), [w for g in words for w in g])
    assert (ns.tensor_parallel_size, ns.mem_fraction_static, ns.enable_overlap) == (4, 0.85, False)
    assert ns.cuda_graph_bs == [1, 2] and ns.json_model_override_args == {"a": [1, 2]}
    assert ns.chat_template == "-weird"


# ----- rejected flags: (args, expected diagnostics, expected words of what survived) -----

ERR_CASES: list[tuple[str, list[Arg], list[tuple[str, Severity, str, str | None]],
                      list[tuple[str, ...]]]] = [
    ("incident 1: vLLM spelling",
     [a("--speculative-algorithm", "EAGLE3"), a("--speculative-eagle-topk", 1),
      a("--num-speculative-tokens", 16), a("--speculative-draft-model-path", "/d")],
     [("F001", E, "unknown flag '--num-speculative-tokens': it is vLLM's spelling; SGLang 0.5.9 "
                  "uses '--speculative-num-draft-tokens' and also needs '--speculative-num-steps', "
                  "'--speculative-eagle-topk' (with '--speculative-eagle-topk' 1 SGLang uses "
                  "num-steps + 1 draft tokens)", "did you mean '--speculative-num-draft-tokens'?")],
     [("--speculative-algorithm", "EAGLE3"), ("--speculative-eagle-topk", "1"),
      ("--speculative-draft-model-path", "/d")]),
    ("foreign, no SGLang setting", [a("--enable-auto-tool-choice")],
     [("F001", E, "unknown flag '--enable-auto-tool-choice': it is vLLM's spelling; SGLang 0.5.9 "
                  "has no such flag (not needed in SGLang: tool calls are parsed whenever "
                  "'--tool-call-parser' is set)", None)], []),
    ("foreign, dest this pin lacks", [a("--gpu-memory-utilization", 0.9)],
     [("F001", E, "unknown flag '--gpu-memory-utilization': it is vLLM's spelling; SGLang 0.5.9 "
                  "uses '--mem-fraction-static' (SGLang's fraction covers weights and KV cache "
                  "only; leave headroom for activations)",
       "did you mean '--mem-fraction-static'?")], []),
    ("misspelt", [a("--speculative-num-draft-tokes", 4)],
     [("F001", E, "unknown flag '--speculative-num-draft-tokes' for SGLang 0.5.9: use "
                  "'--speculative-num-draft-tokens'", "did you mean '--speculative-num-draft-tokens'?")],
     []),
    ("nothing close", [a("--zzzz", 1)],
     [("F001", E, "unknown flag '--zzzz' for SGLang 0.5.9: remove it (no SGLang flag is close to it)",
       None)], []),
    ("ambiguous prefix", [a("--speculative-draft", "/d")],
     [("F002", E, "ambiguous option: --speculative-draft could match --speculative-draft-model, "
                  "--speculative-draft-model-path, --speculative-draft-model-revision; write the "
                  "full flag", "did you mean '--speculative-draft-model-path' or "
                                "'--speculative-draft-model-revision'?")], []),
    ("bad choice", [a("--speculative-algorithm", "MTP")],
     [("F003", E, "invalid choice for '--speculative-algorithm': 'MTP' (choose from 'EAGLE', "
                  "'EAGLE3', 'NEXTN')", None)], []),
    ("bad choice, case", [a("--speculative-algorithm", "eagle3")],
     [("F003", E, "invalid choice for '--speculative-algorithm': 'eagle3' (choose from 'EAGLE', "
                  "'EAGLE3', 'NEXTN')", "did you mean 'EAGLE3'?")], []),
    ("int choices after type", [a("--page-size", 32)],
     [("F003", E, "invalid choice for '--page-size': '32' (choose from '1', '16', '64')",
       None)], []),
    ("bad int", [a("--tensor-parallel-size", 4.5)],
     [("F004", E, "invalid int value for '--tensor-parallel-size': '4.5'; it takes an integer",
       None)], []),
    ("bad int from a structured field", [a("tp_size", "four", dest=True)],
     [("F004", E, "invalid int value for '--tensor-parallel-size': 'four'; it takes an integer",
       None)], []),
    ("bad float", [a("--mem-fraction-static", "most")],
     [("F004", E, "invalid float value for '--mem-fraction-static': 'most'; it takes a number",
       None)], []),
    ("bad json", [a("--json-model-override-args", "{rope: 1}")],
     [("F004", E, "invalid loads value for '--json-model-override-args': '{rope: 1}' (Expecting "
                  "property name enclosed in double quotes); it takes JSON", None)], []),
    ("type=bool trap", [a("--weird-bool", "false")],
     [("F004", E, "'--weird-bool' converts its value with Python bool(), so 'false' would turn "
                  "it on; leave the flag out to keep it off", None)], []),
    ("nargs None given two", [a("--chat-template", ("a", "b"))],
     [("F005", E, "'--chat-template' expects one argument, got 2 ([a, b])", None)], []),
    ("nargs + given none", [a("--cuda-graph-bs", ())],
     [("F005", E, "'--cuda-graph-bs' expects at least one argument, got 0 ([])", None)], []),
    ("nargs 2 given 3", [a("--draft-pair", ("a", "b", "c"))],
     [("F005", E, "'--draft-pair' expects 2 arguments, got 3 ([a, b, c])", None)], []),
    ("bare valued flag", [a("--context-length", True)],
     [("F005", E, "'--context-length' expects one argument, got a bare true; give it a value",
       None)], []),
    ("value twice", [a("--context-length=4096", 8192)],
     [("F005", E, "'--context-length=4096' carries a value after '=' and another one (8192); "
                  "give the value once", None)], []),
    ("value to a switch", [a("--enable-metrics", "yes")],
     [("F006", E, "'--enable-metrics' is a switch and takes no value, got 'yes': write true to "
                  "pass it or false to leave it out", None)], []),
    ("given twice", [a("--tp", 4, line=3), a("tp_size", 8, dest=True, line=9)],
     [("F101", W, "'--tp' is an abbreviation of '--tp-size', an alias of '--tensor-parallel-size'; "
                  "rendered as '--tensor-parallel-size' (abbreviations break when SGLang adds a "
                  "flag with the same prefix)", "did you mean '--tensor-parallel-size'?"),
      ("F008", E, "setting 'tp_size' sets '--tensor-parallel-size' again: '--tp' already set it "
                  "at models/m.yaml:3:3, to another value (SGLang would take the last one); keep one", None)],
     [("--tensor-parallel-size", "4")]),
    ("deprecated and its successor", [a("--swa-full-tokens-ratio", 0.5),
                                      a("--hybrid-kvcache-ratio", 0.5)],
     [("F104", W, "'--hybrid-kvcache-ratio' is deprecated in SGLang 0.5.9; rendered as "
                  "'--swa-full-tokens-ratio'", "did you mean '--swa-full-tokens-ratio'?"),
      ("F106", W, "'--hybrid-kvcache-ratio' sets '--swa-full-tokens-ratio' again: "
                  "'--swa-full-tokens-ratio' already set it at models/m.yaml:7:3, to the same value; "
                  "this one is left out: keep one", None)],
     [("--swa-full-tokens-ratio", "0.5")]),
    ("deprecated and refused by SGLang", [a("--old-fatal")],
     [("F010", E, "'--old-fatal' is retired in SGLang 0.5.9, which refuses it; use "
                  "'--context-length' instead (SGLang: --old-fatal was removed; use "
                  "--context-length.)", "did you mean '--context-length'?")], []),
    ("same flag twice", [a("--context-length", 4096, line=3), a("--context-length", 8192)],
     [("F008", E, "'--context-length' is given twice, first at models/m.yaml:3:3, to another value "
                  "(SGLang would take the last one); keep one", None)], [("--context-length", "4096")]),
    ("help", [a("--help")],
     [("F009", E, "'--help' makes SGLang print its help and exit; remove it", None)], []),
    ("unknown dest", [a("no_such_setting", 1, dest=True)],
     [("F001", E, "setting 'no_such_setting' has no SGLang flag in SGLang 0.5.9 (no action "
                  "stores dest 'no_such_setting'); remove it or use a pin that has it", None)], []),
]


@pytest.mark.parametrize(("case", "args", "diags", "words"), ERR_CASES,
                         ids=[c[0] for c in ERR_CASES])
def test_rejected(old: Catalog, case: str, args: list[Arg],
                  diags: list[tuple[str, Severity, str, str | None]],
                  words: list[tuple[str, ...]]) -> None:
    got_diags, got_words = run(old, args)
    assert got_diags == diags
    assert got_words == words


RAW_REJECTED_BY_ARGPARSE = [
    ["--num-speculative-tokens", "16"],
    ["--speculative-draft", "/d"],
    ["--speculative-algorithm", "MTP"],
    ["--page-size", "32"],
    ["--tensor-parallel-size", "4.5"],
    ["--json-model-override-args", "{rope: 1}"],
    ["--chat-template", "a", "b"],
    ["--enable-metrics", "yes"],
    ["--tp_size", "4"],
    ["--chat-template", "-weird"],
    ["--old-fatal"],
]


@pytest.mark.parametrize("argv", RAW_REJECTED_BY_ARGPARSE, ids=" ".join)
def test_argparse_agrees_these_fail(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """What we report (or rewrite) is what the real parser would have rejected as written."""
    with pytest.raises(SystemExit) as info:
        old_parser().parse_args(argv)
    assert info.value.code == 2
    capsys.readouterr()


# ----- flags of another pin (F007) -----


def test_removed_in_newer_pin(old: Catalog, new: Catalog) -> None:
    rows, words = run(new, [a("--mamba-scheduler-strategy", "auto"), a("--context-length", 4096),
                            a("--speculative-num-steps", 3)], (old,))
    assert rows == [
        ("F007", E, "'--mamba-scheduler-strategy' was removed in SGLang 0.5.23 (it exists in "
                    "SGLang 0.5.9); use '--mamba-radix-cache-strategy'",
         "did you mean '--mamba-radix-cache-strategy'?"),
        ("F007", E, "'--context-length' was removed in SGLang 0.5.23 (it exists in SGLang 0.5.9); "
                    "no successor is known: remove it", None),
        ("F007", E, "'--speculative-num-steps' was removed in SGLang 0.5.23 (it exists in SGLang "
                    "0.5.9); no successor is known: remove it", None),
    ]
    assert words == []


def test_removed_flag_that_became_a_prefix(old: Catalog, new: Catalog) -> None:
    """argparse would call these ambiguous, or silently read another flag: report the removal."""
    rows, words = run(new, [a("--cuda-graph-max-bs", 64), a("--enable-fused-norm")], (old,))
    assert rows == [
        ("F007", E, "'--cuda-graph-max-bs' was removed in SGLang 0.5.23 (it exists in SGLang "
                    "0.5.9), and in SGLang 0.5.23 it is an ambiguous prefix of "
                    "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill; use "
                    "'--cuda-graph-max-bs-decode' or '--cuda-graph-max-bs-prefill'",
         "did you mean '--cuda-graph-max-bs-decode' or '--cuda-graph-max-bs-prefill'?"),
        ("F007", E, "'--enable-fused-norm' was removed in SGLang 0.5.23 (it exists in SGLang "
                    "0.5.9), and SGLang 0.5.23 would read it as an abbreviation of "
                    "'--enable-fused-norm-quant'; no successor is known: remove it", None),
    ]
    assert words == []
    # without the other pin to compare with, argparse's own view is all there is
    rows, words = run(new, [a("--enable-fused-norm")])
    assert [r[0] for r in rows] == ["F101"] and words == [("--enable-fused-norm-quant",)]


def test_not_yet_in_older_pin(old: Catalog, new: Catalog) -> None:
    rows, _ = run(old, [a("--mamba-radix-cache-strategy", "auto"), a("--attn-dp-size", 2)], (new,))
    assert rows == [
        ("F007", E, "'--mamba-radix-cache-strategy' is not in SGLang 0.5.9 (it appears in SGLang "
                    "0.5.23); use '--mamba-scheduler-strategy'",
         "did you mean '--mamba-scheduler-strategy'?"),
        ("F007", E, "'--attn-dp-size' is not in SGLang 0.5.9 (it appears in SGLang 0.5.23); no "
                    "successor is known: remove it", None),
    ]


def test_free_text_algorithm_has_no_choices(new: Catalog) -> None:
    rows, words = run(new, [a("--speculative-algorithm", "MTP")])
    assert rows == [] and words == [("--speculative-algorithm", "MTP")]


def test_diagnostics_print_position_code_and_hint(old: Catalog) -> None:
    diags = Diagnostics()
    check_args(old, [a("--speculative-num-draft-tokes", 4)], diags)
    assert [str(d) for d in diags.items] == [
        "models/m.yaml:7:3: error[F001]: unknown flag '--speculative-num-draft-tokes' for SGLang "
        "0.5.9: use '--speculative-num-draft-tokens' (did you mean "
        "'--speculative-num-draft-tokens'?)"
    ]
    assert isinstance(diags.items[0], Diagnostic) and diags.has_errors


# ----- the committed catalogs, captured from the real SGLang 0.5.9 and 0.5.23 -----

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def real9() -> Catalog:
    return load_catalog(REPO, "0.5.9")


@pytest.fixture(scope="module")
def real23() -> Catalog:
    return load_catalog(REPO, "0.5.23")


INCIDENT_1 = [a("--speculative-algorithm", "EAGLE3", line=20), a("--speculative-eagle-topk", 1, line=21),
              a("--num-speculative-tokens", 16, line=22),
              a("--speculative-draft-model-path", "/shared/models/kimi-k2.5-eagle3", line=23)]


@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_incident_1_vllm_spelling(pin: str) -> None:
    rows, words = run(load_catalog(REPO, pin), INCIDENT_1)
    assert rows == [
        ("F001", E, f"unknown flag '--num-speculative-tokens': it is vLLM's spelling; SGLang {pin} "
                    "uses '--speculative-num-draft-tokens' and also needs '--speculative-num-steps', "
                    "'--speculative-eagle-topk' (with '--speculative-eagle-topk' 1 SGLang uses "
                    "num-steps + 1 draft tokens)", "did you mean '--speculative-num-draft-tokens'?"),
    ]
    assert words == [("--speculative-algorithm", "EAGLE3"), ("--speculative-eagle-topk", "1"),
                     ("--speculative-draft-model-path", "/shared/models/kimi-k2.5-eagle3")]


def test_incident_1_fixed(real9: Catalog) -> None:
    args = [a("--speculative-algorithm", "EAGLE3"), a("--speculative-eagle-topk", 1),
            a("--speculative-num-steps", 3), a("--speculative-num-draft-tokens", 4),
            a("--speculative-draft-model-path", "/shared/models/kimi-k2.5-eagle3"),
            a("--tp", 8), a("--trust-remote-code"), a("--tool-call-parser", "kimi_k2"),
            a("--reasoning-parser", "kimi_k2")]
    rows, words = run(real9, args)
    assert [r[0] for r in rows] == ["F101"]  # only the "--tp" abbreviation
    assert words == [("--speculative-algorithm", "EAGLE3"), ("--speculative-eagle-topk", "1"),
                     ("--speculative-num-steps", "3"), ("--speculative-num-draft-tokens", "4"),
                     ("--speculative-draft-model-path", "/shared/models/kimi-k2.5-eagle3"),
                     ("--tensor-parallel-size", "8"), ("--trust-remote-code",),
                     ("--tool-call-parser", "kimi_k2"), ("--reasoning-parser", "kimi_k2")]


INCIDENT_2 = [a("--speculative-algo", "NEXTN"), a("--speculative-num-steps", 3),
              a("--speculative-eagle-topk", 1), a("--speculative-num-draft-tokens", 4)]


@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_incident_2_model_card_abbreviation(pin: str) -> None:
    rows, words = run(load_catalog(REPO, pin), INCIDENT_2)
    assert rows == [
        ("F101", W, "'--speculative-algo' is an abbreviation of '--speculative-algorithm'; rendered "
                    "as '--speculative-algorithm' (abbreviations break when SGLang adds a flag with "
                    "the same prefix)", "did you mean '--speculative-algorithm'?"),
    ]
    assert words == [("--speculative-algorithm", "NEXTN"), ("--speculative-num-steps", "3"),
                     ("--speculative-eagle-topk", "1"), ("--speculative-num-draft-tokens", "4")]


def test_real_bad_choices(real9: Catalog, real23: Catalog) -> None:
    args = [a("--speculative-algorithm", "MTP"), a("--tool-call-parser", "qwen3"),
            a("--reasoning-parser", "qwen3")]
    rows, words = run(real9, args)
    assert rows == [
        ("F003", E, "invalid choice for '--speculative-algorithm': 'MTP' (choose from 'EAGLE', "
                    "'EAGLE3', 'NEXTN', 'STANDALONE', 'NGRAM')", None),
        ("F003", E, "invalid choice for '--tool-call-parser': 'qwen3' (choose from 'deepseekv3', "
                    "'deepseekv31', 'deepseekv32', 'glm', 'glm45', 'glm47', 'gpt-oss', 'kimi_k2', "
                    "'lfm2', 'llama3', 'mimo', 'mistral', 'pythonic', 'qwen', 'qwen25', "
                    "'qwen3_coder', 'step3', 'step3p5', 'minimax-m2', 'trinity', 'interns1', "
                    "'hermes', 'gigachat3')", "did you mean 'qwen3_coder'?"),
    ]
    assert words == [("--reasoning-parser", "qwen3")]
    # 0.5.23: the algorithm is free text (its names are checked by rules, not argparse)
    rows, words = run(real23, args)
    assert [(r[0], r[3]) for r in rows] == [("F003", "did you mean 'qwen3_coder'?")]
    assert words == [("--speculative-algorithm", "MTP"), ("--reasoning-parser", "qwen3")]


def test_real_tp_spellings(real9: Catalog, real23: Catalog) -> None:
    rows, words = run(real9, [a("tp_size", 4, dest=True), a("--tensor-parallel-size", 4)])
    assert rows == [("F106", W, "'--tensor-parallel-size' sets '--tensor-parallel-size' again: "
                                "setting 'tp_size' already set it at models/m.yaml:7:3, to the same value; "
                                "this one is left out: keep one", None)]
    assert words == [("--tensor-parallel-size", "4")]
    rows, words = run(real23, [a("--tensor-parallel-size", 4), a("dp_size", 2, dest=True)])
    assert rows == [("F102", W, "'--tensor-parallel-size' is an alias of '--tp-size'; rendered as "
                                "'--tp-size'", "did you mean '--tp-size'?")]
    assert words == [("--tp-size", "4"), ("--dp-size", "2")]
    _, words = run(real9, [a("dp_size", 2, dest=True), a("ep_size", 8, dest=True),
                           a("pp_size", 2, dest=True)])
    assert words == [("--data-parallel-size", "2"), ("--expert-parallel-size", "8"),
                     ("--pipeline-parallel-size", "2")]


def test_real_removed_and_renamed(real9: Catalog, real23: Catalog) -> None:
    rows, words = run(real23, [a("--mamba-scheduler-strategy", "auto"),
                               a("--nsa-prefill-backend", "flashmla_sparse"),
                               a("--cuda-graph-max-bs", 64),
                               a("--speculative-ngram-branch-length", 4)], (real9,))
    assert rows == [
        ("F007", E, "'--mamba-scheduler-strategy' was removed in SGLang 0.5.23 (it exists in SGLang "
                    "0.5.9); use '--mamba-radix-cache-strategy'",
         "did you mean '--mamba-radix-cache-strategy'?"),
        ("F007", E, "'--nsa-prefill-backend' was removed in SGLang 0.5.23 (it exists in SGLang "
                    "0.5.9); use '--dsa-prefill-backend'", "did you mean '--dsa-prefill-backend'?"),
        ("F007", E, "'--cuda-graph-max-bs' was removed in SGLang 0.5.23 (it exists in SGLang 0.5.9), "
                    "and in SGLang 0.5.23 it is an ambiguous prefix of --cuda-graph-max-bs-decode, "
                    "--cuda-graph-max-bs-prefill; use '--cuda-graph-max-bs-decode' or "
                    "'--cuda-graph-max-bs-prefill'",
         "did you mean '--cuda-graph-max-bs-decode' or '--cuda-graph-max-bs-prefill'?"),
        ("F007", E, "'--speculative-ngram-branch-length' was removed in SGLang 0.5.23 (it exists in "
                    "SGLang 0.5.9); no successor is known: remove it", None),
    ]
    assert words == []
    rows, _ = run(real9, [a("--mamba-radix-cache-strategy", "auto"), a("--attn-dp-size", 2)], (real23,))
    assert rows == [
        ("F007", E, "'--mamba-radix-cache-strategy' is not in SGLang 0.5.9 (it appears in SGLang "
                    "0.5.23); use '--mamba-scheduler-strategy'",
         "did you mean '--mamba-scheduler-strategy'?"),
        ("F007", E, "'--attn-dp-size' is not in SGLang 0.5.9 (it appears in SGLang 0.5.23); no "
                    "successor is known: remove it", None),
    ]


def test_real_deprecations(real9: Catalog, real23: Catalog) -> None:
    rows, words = run(real23, [a("enable_dp_attention", True, dest=True)])
    assert rows == [("F104", W, "'--enable-dp-attention' is deprecated in SGLang 0.5.23; use "
                                "'--attn-dp-size' instead (SGLang: Deprecated. Use --attn-dp-size "
                                "<dp-size> instead of --dp-size <dp-size> --enable-dp-attention.)",
                     "did you mean '--attn-dp-size'?")]
    assert words == [("--enable-dp-attention",)]
    rows, words = run(real9, [a("enable_dp_attention", True, dest=True)])
    assert rows == [] and words == [("--enable-dp-attention",)]
    # 0.5.9's --hybrid-kvcache-ratio is a no-op switch: a ratio given to it is an error
    rows, words = run(real9, [a("--hybrid-kvcache-ratio", 0.5)])
    assert [r[0] for r in rows] == ["F104", "F006"] and words == []


def test_real_values(real9: Catalog, real23: Catalog) -> None:
    rows, words = run(real23, [a("--enable-tf32-matmul", False), a("--mem-frac", 0.8),
                               a("--preferred-sampling-params", "{bad"),
                               a("--log-requests-level", 5)])
    assert rows == [
        ("F101", W, "'--mem-frac' is an abbreviation of '--mem-fraction-static'; rendered as "
                    "'--mem-fraction-static' (abbreviations break when SGLang adds a flag with the "
                    "same prefix)", "did you mean '--mem-fraction-static'?"),
        ("F004", E, "invalid loads value for '--preferred-sampling-params': '{bad' (Expecting "
                    "property name enclosed in double quotes); it takes JSON", None),
        ("F003", E, "invalid choice for '--log-requests-level': '5' (choose from '0', '1', '2', "
                    "'3')", None),
    ]
    assert words == [("--no-enable-tf32-matmul",), ("--mem-fraction-static", "0.8")]


def test_real_foreign_spellings(real9: Catalog) -> None:
    args = [a("--max-model-len", 32768), a("--gpu-memory-utilization", 0.9),
            a("--max-num-seqs", 64), a("--speculative-model", "/d"),
            a("--max-num-batched-tokens", 8192), a("-tp", 4)]
    rows, _ = run(real9, args)
    assert [(r[0], r[3]) for r in rows] == [
        ("F001", "did you mean '--context-length'?"),
        ("F001", "did you mean '--mem-fraction-static'?"),
        ("F001", "did you mean '--max-running-requests'?"),
        ("F001", "did you mean '--speculative-draft-model-path'?"),
        ("F001", "did you mean '--chunked-prefill-size'?"),
        ("F001", "did you mean '--tensor-parallel-size'?"),
    ]
    rows, _ = run(real9, [a("--enable-auto-tool-choice")])
    assert rows == [("F001", E, "unknown flag '--enable-auto-tool-choice': it is vLLM's spelling; "
                                "SGLang 0.5.9 has no such flag (not needed in SGLang: tool calls "
                                "are parsed whenever '--tool-call-parser' is set)", None)]


# ----- the curated tables, checked against every committed catalog -----


def _all_real() -> list[Catalog]:
    return [load_catalog(REPO, pin) for pin in known_pins(REPO)]


def test_foreign_table_against_real_catalogs() -> None:
    cats = _all_real()
    assert len(cats) >= 2
    tables = load_flag_tables(cats[0].source_file)
    assert len(tables.foreign) >= 30
    assert tables_dir(cats[0].source_file) == REPO / "catalogs"
    for spelling, entry in tables.foreign.items():
        for cat in cats:
            # SGLang's parser must reject the spelling as written, or the table would
            # shadow a real flag (e.g. --tensor-parallel-size is valid in SGLang)
            assert cat.by_option(spelling) is None, (spelling, cat.pin)
            assert cat.prefix_matches(spelling) == [], (spelling, cat.pin)
            for dest in ([entry.dest] if entry.dest else []) + list(entry.also):
                assert any(cat.by_dest(d) for d in tables.dest_names(dest)), (spelling, dest, cat.pin)
            for dest in re.findall(r"\{([a-z0-9_]+)\}", entry.note):
                assert any(cat.by_dest(d) for d in tables.dest_names(dest)), (spelling, dest, cat.pin)


def test_renames_table_against_real_catalogs() -> None:
    cats = _all_real()
    tables = load_flag_tables(cats[0].source_file)
    assert tables.renames
    for old, news in tables.renames.items():
        for new in news:
            # a rename: the two spellings never live in one pin, and each lives in some pin
            assert any(c.by_option(old) for c in cats) and any(c.by_option(new) for c in cats)
            assert not any(c.by_option(old) and c.by_option(new) for c in cats), (old, new)
    for group in tables.dest_groups:
        for cat in cats:
            assert sum(cat.by_dest(d) is not None for d in group) == 1, (group, cat.pin)


def _rebuild_parser(cat: Catalog) -> argparse.ArgumentParser:
    """An argparse parser rebuilt from catalog data (kinds, nargs, types, choices), no abbrevs.

    A stand-in for SGLang's parser where SGLang's own type functions cannot run here;
    the real-parser oracle lives with the SGLang venv tests.
    """
    types = {"int": int, "float": float, "callable:json.loads": json.loads}
    parser = argparse.ArgumentParser(allow_abbrev=False, add_help=False)
    for act in cat.actions:
        opts = [o for o in act.option_strings if o != act.negative]
        if act.kind == "help":
            continue
        if act.kind == "boolean_optional":
            parser.add_argument(*opts, dest=act.dest, action=argparse.BooleanOptionalAction)
        elif act.nargs == 0:
            parser.add_argument(*opts, dest=act.dest, action="count")
        else:
            convert = types.get(act.type or "", str)
            choices = None if act.choices is None else [convert(c) for c in act.choices]
            parser.add_argument(*opts, dest=act.dest, nargs=act.nargs, type=convert,
                                choices=choices, action="append" if act.kind == "append" else None)
    return parser


def _sample_value(act: Any) -> tuple[ArgValue, Any]:
    """A valid manifest value for ``act`` and what argparse should store for it."""
    if act.nargs == 0:
        return True, (True if act.kind == "boolean_optional" else 1)
    if act.choices:
        word = act.choices[-1]
        one: Any = {"int": int, "float": float}.get(act.type or "", str)(word)
    elif act.type == "int":
        word, one = "7", 7
    elif act.type == "float":
        word, one = "0.5", 0.5
    elif act.type == "callable:json.loads":
        word, one = '{"a": 1}', {"a": 1}
    elif act.type == "callable:sglang.srt.utils.common.json_list_type":
        word, one = "[1]", "[1]"  # the stand-in parser keeps SGLang's own types as text
    elif act.type == "callable:sglang.srt.utils.common.human_readable_int":
        word, one = "4k", "4k"
    elif act.type == "callable:sglang.srt.model_executor.cuda_graph_config.parse_cuda_graph_config_arg":
        word, one = '{"decode": {}}', '{"decode": {}}'
    else:
        word, one = "x", "x"
    if act.nargs in ("+", "*") or isinstance(act.nargs, int) and act.nargs > 1:
        n = act.nargs if isinstance(act.nargs, int) else 2
        return tuple([word] * n), [one] * n
    return word, one


@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_every_real_action_renders_parseable_words(pin: str) -> None:
    """Each action of a real catalog, given a valid value, renders words argparse reads back."""
    cat = load_catalog(REPO, pin)
    parser = _rebuild_parser(cat)
    checked = 0
    for act in cat.actions:
        if act.kind == "help":
            continue
        value, expected = _sample_value(act)
        diags = Diagnostics()
        groups = check_args(cat, [Arg(act.canonical, value, POS)], diags)
        assert not diags.has_errors, (act.canonical, [str(d) for d in diags.items])
        assert [d.code for d in diags.items] in ([], ["F104"]), act.canonical
        words = [w for g in groups for w in g.words]
        assert words and words[0].split("=")[0] in act.option_strings
        got = getattr(parser.parse_args(words), act.dest)
        assert got == ([expected] if act.kind == "append" else expected), act.canonical
        checked += 1
    assert checked == len(cat.actions) - 1


@pytest.mark.parametrize(("written", "value"), [
    ("--no-enable-over", True), ("--no-enable-ov", True), ("--no-enable-overlap", True),
    ("--no-enable-ov", False), ("--enable-ov", True), ("--enable-ov", False),
])
def test_abbreviated_negative_keeps_its_setting(old: Catalog, written: str, value: bool) -> None:
    """An abbreviated ``--no-X`` means X off, as argparse reads it: never the positive flag.

    The oracle is argparse itself (allow_abbrev on, as SGLang parses): what it makes of the
    written words must equal what it makes of the rendered ones.
    """
    rows, words = run(old, [a(written, value)])
    assert [r[0] for r in rows] == ([] if written == "--no-enable-overlap" else ["F101"])
    rendered = [w for group in words for w in group]
    as_written = [written] if value else []
    if not value:  # "--no-X: false" and "--X: false" flip once more
        as_written = ["--enable-overlap" if written.startswith("--no-") else "--no-enable-overlap"]
    expected = old_parser().parse_args(as_written).enable_overlap
    assert argparse_accepts(old_parser(), rendered).enable_overlap is expected
    if rows:  # the warning names the form written, and what is rendered (the value may flip it)
        negative = written.startswith("--no-")
        matched = "--no-enable-overlap" if negative else "--enable-overlap"
        of = f"'{matched}'" + (", an alias of '--enable-overlap'" if negative else "")
        assert rows[0][2] == (f"'{written}' is an abbreviation of {of}; rendered as '{rendered[0]}' "
                              f"(abbreviations break when SGLang adds a flag with the same prefix)")
        assert rows[0][3] == f"did you mean '{matched}'?"  # the full spelling of the form written


# Every message that says how a flag written another way is rendered (abbreviation F101,
# alias F102, underscores F103, deprecated with a successor F104), for switches written
# true and false: the message must name the rendered words, which the value can flip
# ("--no-x: false" is "--x") or leave out ("--x: false" of a store_true).
SPELLED_SWITCHES = [
    ("--enable-met", "F101"), ("--enable_metrics", "F103"), ("--enable-ov", "F101"),
    ("--no-enable-ov", "F101"), ("--no_enable_overlap", "F103"), ("--enable_overlap", "F103"),
    ("--enable-fused", "F101"),
]


@pytest.mark.parametrize("value", [True, False, "false", None])
@pytest.mark.parametrize(("written", "code"), SPELLED_SWITCHES)
def test_spelled_switch_messages_name_what_is_rendered(old: Catalog, written: str, code: str,
                                                       value: ArgValue) -> None:
    rows, words = run(old, [a(written, value)])
    assert [r[0] for r in rows] == [code]
    rendered = [w for group in words for w in group]
    message = rows[0][2]
    if rendered:
        assert len(rendered) == 1 and f"rendered as '{rendered[0]}'" in message
    else:
        assert "rendered as" not in message and "left out (its value turns the flag off)" in message


def test_spelled_switch_of_another_kind(new: Catalog, old: Catalog) -> None:
    """F102 (an alias of a store_true) and F104 (a deprecated store_true with a successor):
    false leaves the flag out, and the message says so."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--enable-metrics", "--metrics", action="store_true")
    parser.add_argument("--old-metrics", action=DeprecatedStoreTrueAction, dest="enable_metrics",
                        new_flag="--enable-metrics")
    cat = catalog_from_parser(parser, "0.5.9", {"--old-metrics": {"replacement": "--enable-metrics"}})
    for written, code in (("--metrics", "F102"), ("--old-metrics", "F104")):
        rows, words = run(cat, [a(written, True)])
        assert [r[0] for r in rows] == [code] and words == [("--enable-metrics",)]
        assert "rendered as '--enable-metrics'" in rows[0][2]
        rows, words = run(cat, [a(written, False)])
        assert [r[0] for r in rows] == [code] and words == [()]
        assert "rendered as" not in rows[0][2] and "left out" in rows[0][2], rows[0][2]
