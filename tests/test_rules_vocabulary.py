"""The rule vocabulary: typed Settings and its readers, first_broken, declarative when:, texts in rules.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import Severity
from generator.sglang.argtypes import Unparsed, human_readable_int
from generator.sglang.catalog import load_catalog
from generator.sglang.datafiles import DataFileError
from generator.sglang.rules import load_rules, settings_from_argv
from generator.sglang.rules.evaluate import render
from generator.sglang.rules.registry import Hit, check, first_broken, quiet
from generator.sglang.rules.when import WhenError, compile_when

ROOT = Path(__file__).resolve().parent.parent


def _s(pin: str, argv: list[str], env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return settings_from_argv(load_catalog(ROOT, pin), argv, env or {})


@pytest.mark.parametrize(("word", "value"), [("4k", 4000), ("1Ki", 1024), ("25.6k", 25600), (" 12 ", 12),
                                             ("2M", 2_000_000), ("1_000", 1000), ("-5", -5)])
def test_human_readable_int(word: str, value: int) -> None:
    assert human_readable_int(word) == value


def test_settings_hold_the_pins_types() -> None:
    """0.5.23's human_readable_int, JSON and nullable types arrive typed; 0.5.9's int too."""
    new = _s("0.5.23", ["--max-prefill-tokens", "4k", "--cuda-graph-config", '{"decode": {"bs": [1]}}',
                        "--sidecar-args", '["a"]', "--quantization-param-path", "None",
                        "--no-dcp-replicate-q-proj", "--model-checksum", "--lora-paths", "a=b"])
    assert new.get("max_prefill_tokens") == 4000 and new.get("cuda_graph_config") == {"decode": {"bs": [1]}}
    assert new.get("sidecar_args") == ["a"] and new.get("quantization_param_path") is None
    assert new.get("dcp_replicate_q_proj") is False and new.get("model_checksum") == ""
    assert new.get("lora_paths") == ["a=b"]
    assert _s("0.5.9", ["--max-prefill-tokens", "0"]).get("max_prefill_tokens") == 0
    refused = _s("0.5.23", ["--max-prefill-tokens", "4x"]).get("max_prefill_tokens")
    assert isinstance(refused, Unparsed) and refused.words == ("4x",)


def test_readers() -> None:
    s = _s("0.5.23", ["--tp-size", "4", "--max-prefill-tokens", "4x", "--mem-fraction-static", "0.5",
                      "--enable-mixed-chunk"], {"SGLANG_X": "YES", "SGLANG_Y": "yes", "SGLANG_N": " 7"})
    assert s.integer("tp_size", 1) == 4 and s.integer("pp_size", 9) == 1 and s.integer("max_prefill_tokens", 9) == 9
    assert s.opt_int("max_prefill_tokens") is None and s.opt_int("tp_size") == 4
    assert s.number("mem_fraction_static") == 0.5 and s.number("enable_mixed_chunk") is None
    assert s.on("enable_mixed_chunk") and not s.on("disable_radix_cache") and not s.on("max_prefill_tokens")
    assert s.env_true("SGLANG_X") and not s.env_flag("SGLANG_Y") and s.env_int("SGLANG_N") == 7
    assert s.env_int("SGLANG_X") is None and s.env_int("UNSET") is None


def test_first_broken_reports_the_first_in_order_and_quiet_silences() -> None:
    hit = first_broken([check(False, "a", ("x",)), check(True, "b", ("y",), n=2), check(True, "c")], k=1)
    assert hit == Hit(("y",), {"k": 1, "n": 2}, "b")
    assert first_broken([quiet(True), check(True, "b")]) is None
    assert first_broken([check(False, "a")]) is None
    reached: list[str] = []

    def later() -> object:
        reached.append("later")
        return check(True, "c")
    assert first_broken([check(True, "a"), later]) is not None and not reached  # type: ignore[list-item]


@pytest.mark.parametrize(("when", "argv", "fires"), [
    ({"all": [{"on": "enable_tokenizer_batch_encode"}, {"on": "enable_dynamic_batch_tokenizer"}]},
     ["--enable-tokenizer-batch-encode", "--enable-dynamic-batch-tokenizer"], True),
    ({"all": [{"on": "enable_tokenizer_batch_encode"}, {"on": "enable_dynamic_batch_tokenizer"}]},
     ["--enable-tokenizer-batch-encode"], False),
    ({"is": {"sglang_algorithm": "EAGLE"}}, ["--speculative-algorithm", "nextn"], True),
    ({"is": {"tp_size": [2, 4]}, "not": {"written": "pp_size"}}, ["--tp-size", "4"], True),
    ({"is": {"tp_size": [2, 4]}, "not": {"written": "pp_size"}}, ["--tp-size", "4", "--pp-size", "1"], False),
    ({"any": [{"lt": {"port": 1}}, {"gt": {"port": 65535}}]}, ["--port", "70000"], True),
    ({"is_not": {"kv_canary": "none"}}, [], False),
    ({"matches": {"speculative_algorithm": "(?i)nextn"}}, ["--speculative-algorithm", "NextN"], True),
    ({"matches": {"tp_size": "4"}}, ["--tp-size", "4"], False),
    ({"unset": "dist_init_addr", "gt": {"nnodes": 1}}, ["--nnodes", "2"], True),
])
def test_when_conditions(when: dict[str, object], argv: list[str], fires: bool) -> None:
    assert compile_when(when)(_s("0.5.23", argv)) is fires


@pytest.mark.parametrize("bad", [{}, {"on": 3}, {"all": []}, {"gt": {"tp_size": "2"}}, {"nope": "x"},
                                 {"is": {"a": 1, "b": 2}}, {"not": []},
                                 {"matches": {"a": "("}}, {"matches": {"a": 1}},
                                 {"matches": {"a": "(a)\\1"}}, {"matches": {"a": "(?=a)a"}},  # RE2 cannot: refused
                                 {"matches": {"a": "a" * 1025}}])
def test_malformed_when_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(WhenError):
        compile_when(bad)


def test_a_matches_pattern_runs_in_linear_time() -> None:
    """rules.yaml's pattern and the manifest's value both come from a pull request: a nested
    quantifier took twice as long per character under Python's re (about 7 s at 28)."""
    import time

    test = compile_when({"matches": {"served_model_name": "(a+)+b"}})
    start = time.process_time()
    assert test(_s("0.5.23", ["--served-model-name", "a" * 28])) is False
    assert time.process_time() - start < 0.5


_RULE = """rules:
  - id: {id}
    code: X199
    versions: all
    severity: warning
    enforced: none
    message: "{message}"
    fix: "f"
    evidence: read
{extra}"""


def _file(tmp_path: Path, rule: str) -> Path:
    text = (ROOT / "catalogs" / "rules.yaml").read_text(encoding="utf-8")
    path = tmp_path / "rules.yaml"
    path.write_text(text + rule.split("\n", 1)[1], encoding="utf-8")
    return path


@pytest.mark.parametrize(("rule_id", "message", "extra", "code"), [
    ("new-decl", "x", "    when: {on: 5}\n    blame: [tp_size]\n", "C030"),
    ("new-decl", "x", "    when: {on: tp_size}\n", "C030"),
    ("new-decl", "x", "    blame: [tp_size]\n", "C030"),
    ("nnodes-divides", "x", "    when: {on: tp_size}\n    blame: [tp_size]\n", "C031"),
    ("new-decl", "{tp}", "    when: {on: tp_size}\n    blame: [tp_size]\n", "C032"),
    ("new-decl", "{}", "    when: {on: tp_size}\n    blame: [tp_size]\n", "C032"),
    ("new-decl", "{flag.tp_size", "    when: {on: tp_size}\n    blame: [tp_size]\n", "C032"),
])
def test_rules_file_vocabulary_errors(tmp_path: Path, rule_id: str, message: str, extra: str, code: str) -> None:
    path = _file(tmp_path, _RULE.format(id=rule_id, message=message, extra=extra))
    with pytest.raises(DataFileError, match=rf"error\[{code}\]"):
        load_rules(path)


def test_a_declarative_rule_fires_and_renders(tmp_path: Path) -> None:
    path = _file(tmp_path, _RULE.format(
        id="new-decl", message="{flag.tp_size} {value.tp_size} on {version}",
        extra="    when: {gt: {tp_size: 2}}\n    blame: [tp_size]\n"))
    rule = next(r for r in load_rules(path) if r.id == "new-decl")
    s = _s("0.5.9", ["--tensor-parallel-size", "4"])
    assert rule.when is not None and rule.when.holds(s)
    assert render(s, rule, Hit(rule.when.blame))[0] == "--tensor-parallel-size 4 on 0.5.9"


def test_the_message_formatter_joins_lists_and_prints_items() -> None:
    """One formatter (rules/message.py): list readers, items with their own fields, every_broken's lists."""
    from generator.sglang.rules.registry import every_broken, item
    from generator.sglang.rules.spec import RuleSpec, VersionRange

    s = _s("0.5.23", ["--tp-size", "4", "--no-dcp-replicate-q-proj"])
    rule = RuleSpec("r", "X199", VersionRange.parse("all"), Severity.WARNING, "none",
                    "[{list.xs}] {and.xs}; {or.xs}; {words.xs}; {choices.xs}; {xs}; {one}; {list.parts}",
                    "{clauses.fix}; {negated.dcp_replicate_q_proj}", "read",
                    checks={"a": {"fix": "set {flag.tp_size} {n}"}, "b": {"fix": "drop {what}"}},
                    items={"tp": "{flag.tp_size} {value.tp_size}", "pair": "{phase}={backend}"})
    hit = every_broken([check(True, "a", ("tp_size",), n=2), check(False, "b"), check(True, "b", (), what="it")],
                       xs=[1, "fa3", None], one=item("tp"), parts=[item("pair", phase="decode", backend="fa3"),
                                                              item("pair", phase="prefill", backend="triton")])
    assert hit is not None and hit.blame == ("tp_size",)
    message, fix = render(s, rule, hit)
    assert message == ("[1, fa3, None] 1 and fa3 and None; 1 or fa3 or None; 1 fa3 None; 1|fa3|None; "
                       "[1, 'fa3', None]; --tp-size 4; decode=fa3, prefill=triton")
    assert fix == "set --tp-size 2; drop it; --no-dcp-replicate-q-proj"
    assert every_broken([check(False, "a")]) is None


def _names(expr: object) -> set[str]:
    """The check names an argument can be: a text, or either branch of ``a if c else b``."""
    import ast

    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}
    if isinstance(expr, ast.IfExp):
        return _names(expr.body) | _names(expr.orelse)
    return set()


def test_every_check_name_has_its_texts_and_every_text_its_check() -> None:
    """The names predicates give check(...) and Hit(...) and the checks: entries of rules.yaml are the same set."""
    import ast

    named: set[str] = set()
    items: set[str] = set()
    for path in (ROOT / "generator" / "sglang" / "rules" / "predicates").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            func = getattr(node.func, "id", "") if isinstance(node, ast.Call) else ""
            where = {"check": 1, "Hit": 2}.get(func)
            if where is not None and len(node.args) > where:
                named |= _names(node.args[where])
            if func == "item" and node.args:
                items |= _names(node.args[0])
    rules = load_rules(ROOT / "catalogs" / "rules.yaml")
    texts = {name for rule in rules for name in rule.checks}
    assert named <= texts, sorted(named - texts)
    assert items <= {name for rule in rules for name in rule.items}, sorted(items)
    # a name chosen at run time (lora's v2_mode) is a string constant of the modules all the same
    constants = {c.value for path in (ROOT / "generator" / "sglang" / "rules" / "predicates").glob("*.py")
                 for c in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    assert texts <= constants, sorted(texts - constants)
