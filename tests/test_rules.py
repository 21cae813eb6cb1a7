"""Unit tests for generator.sglang.rules: the rules file, version ranges, and a table of argvs per pin."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.sglang.catalog import load_catalog
import dataclasses
from typing import Any

from rule_tables import all_rows
from rule_tables.gpu_facts import GPU_MODEL_ROWS, GPU_ROWS
from rule_tables.model_facts import MODEL_ROWS
from generator.checkpoint.facts import CheckpointFacts
from generator.sglang.architectures import load_architectures
from generator.errors import Severity
from generator.pipeline.fleet import run
from generator.sglang.datafiles import DataFileError
from generator.sglang.rules import (PREDICATES, RulesFormatError, VersionRange, dist_init_addr_ok, evaluate,
                             load_rules, rules_path, settings_from_argv)

ROOT = Path(__file__).resolve().parent.parent


def _codes(pin: str, argv: list[str], env: dict[str, str] | None = None) -> list[str]:
    catalog = load_catalog(ROOT, pin)
    settings = settings_from_argv(catalog, argv, env or {})
    return [f.rule.code for f in evaluate(settings, load_rules(rules_path(catalog)))]


SPEC = ["--speculative-algorithm"]
# (pin, argv, env, expected codes in rules.yaml order)
TABLE: list[tuple[str, list[str], dict[str, str], list[str]]] = [
    # all-or-none of steps / top-k / draft tokens
    ("0.5.9", SPEC + ["EAGLE"], {}, []),
    ("0.5.9", SPEC + ["EAGLE3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "16",
                      "--speculative-draft-model-path", "/m/d"], {}, ["X002"]),
    ("0.5.23", SPEC + ["EAGLE", "--speculative-num-draft-tokens", "4"], {}, ["X002"]),
    ("0.5.9", SPEC + ["EAGLE", "--speculative-num-steps", "3"], {}, ["X003"]),
    ("0.5.9", SPEC + ["NGRAM", "--speculative-num-draft-tokens", "4"], {}, []),
    # top-k 1 forces draft tokens = steps + 1
    ("0.5.9", SPEC + ["EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                      "--speculative-num-draft-tokens", "4"], {}, []),
    ("0.5.9", SPEC + ["EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                      "--speculative-num-draft-tokens", "16"], {}, ["X102"]),
    ("0.5.9", SPEC + ["EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1"], {}, []),
    # top-k > 1 with page size > 1: attention backend per version
    ("0.5.9", SPEC + ["EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
                      "--speculative-num-draft-tokens", "8", "--page-size", "16", "--attention-backend", "fa3"],
     {}, []),
    ("0.5.9", SPEC + ["EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
                      "--speculative-num-draft-tokens", "8", "--page-size", "16", "--attention-backend", "triton"],
     {}, ["X004"]),
    ("0.5.23", SPEC + ["EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
                       "--speculative-num-draft-tokens", "8", "--page-size", "16", "--attention-backend", "triton"],
     {}, []),
    ("0.5.9", SPEC + ["EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
                      "--speculative-num-draft-tokens", "8", "--page-size", "16"], {}, ["X101"]),
    ("0.5.9", SPEC + ["EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
                      "--speculative-num-draft-tokens", "8", "--page-size", "1", "--attention-backend", "triton"],
     {}, []),
    # trtllm_mha needs top-k 1, on any of the three backend flags
    ("0.5.9", SPEC + ["EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "2",
                      "--speculative-num-draft-tokens", "8", "--decode-attention-backend", "trtllm_mha"],
     {}, ["X005"]),
    # SGLANG_ENABLE_SPEC_V2: top-k 1 on 0.5.9, ignored later
    ("0.5.9", SPEC + ["EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "2",
                      "--speculative-num-draft-tokens", "8"], {"SGLANG_ENABLE_SPEC_V2": "True"}, ["X006"]),
    ("0.5.9", SPEC + ["EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "2",
                      "--speculative-num-draft-tokens", "8"], {"SGLANG_ENABLE_SPEC_V2": "0"}, []),
    ("0.5.23", SPEC + ["EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "2",
                       "--speculative-num-draft-tokens", "8"], {"SGLANG_ENABLE_SPEC_V2": "1"}, ["X104"]),
    # STANDALONE / NGRAM with DP attention
    ("0.5.9", SPEC + ["STANDALONE", "--tensor-parallel-size", "4", "--data-parallel-size", "2",
                      "--enable-dp-attention"], {}, ["X007"]),
    ("0.5.9", SPEC + ["NGRAM", "--tensor-parallel-size", "4", "--data-parallel-size", "1",
                      "--enable-dp-attention"], {}, ["X106"]),
    ("0.5.23", SPEC + ["ngram", "--tp-size", "4", "--attn-dp-size", "2"], {}, ["X008"]),
    # draft paths
    ("0.5.9", SPEC + ["EAGLE3"], {}, ["X009"]),
    ("0.5.23", SPEC + ["dflash"], {}, ["X010"]),
    ("0.5.23", SPEC + ["DFLASH", "--speculative-draft-model-path", "/m/d"], {}, []),
    # speculative with pipeline parallel
    ("0.5.9", SPEC + ["EAGLE", "--pipeline-parallel-size", "2"], {}, ["X011"]),
    ("0.5.23", SPEC + ["EAGLE", "--pp-size", "2", "--disaggregation-mode", "prefill"], {}, []),
    # algorithm names: choices on 0.5.9 (flags.py), free text from 0.5.15
    ("0.5.23", SPEC + ["MTP"], {}, ["X001"]),
    ("0.5.23", SPEC + ["nextn"], {}, ["X103"]),
    ("0.5.9", SPEC + ["NEXTN"], {}, ["X103"]),
    # parallel sizes
    ("0.5.9", ["--tensor-parallel-size", "3", "--nnodes", "2", "--dist-init-addr", "10.0.0.1:5000"], {},
     ["X012"]),
    ("0.5.9", ["--tensor-parallel-size", "4", "--pipeline-parallel-size", "2", "--nnodes", "4",
               "--dist-init-addr", "10.0.0.1:5000"], {}, []),
    ("0.5.9", ["--tensor-parallel-size", "8", "--data-parallel-size", "2", "--nnodes", "2",
               "--dist-init-addr", "10.0.0.1:5000"], {}, ["X013"]),
    ("0.5.9", ["--tensor-parallel-size", "8", "--data-parallel-size", "2", "--enable-dp-attention",
               "--nnodes", "2", "--dist-init-addr", "h:5000"], {}, []),
    ("0.5.23", ["--tp-size", "8", "--dp-size", "2", "--nnodes", "2", "--dist-init-addr", "h:5000"], {},
     ["X013"]),
    ("0.5.23", ["--tp-size", "8", "--attn-dp-size", "2", "--nnodes", "2", "--dist-init-addr", "h:5000"], {}, []),
    ("0.5.9", ["--tensor-parallel-size", "4", "--data-parallel-size", "3", "--enable-dp-attention"], {},
     ["X014"]),
    ("0.5.23", ["--tp-size", "4", "--attn-dp-size", "3"], {}, ["X014"]),
    ("0.5.9", ["--enable-dp-lm-head"], {}, ["X107"]),
    ("0.5.9", ["--tensor-parallel-size", "2", "--data-parallel-size", "2", "--enable-dp-lm-head"], {}, ["X015"]),
    ("0.5.23", ["--tp-size", "2", "--dp-size", "2", "--enable-dp-lm-head"], {}, ["X015"]),
    ("0.5.23", ["--tp-size", "2", "--attn-dp-size", "2", "--enable-dp-lm-head"], {}, []),
    ("0.5.23", ["--tp-size", "4", "--dp-size", "2", "--attn-dp-size", "2"], {}, ["X016"]),
    ("0.5.23", ["--tp-size", "4", "--dp-size", "2", "--enable-dp-attention"], {}, ["X105"]),
    ("0.5.9", ["--tensor-parallel-size", "4", "--enable-dp-attention"], {}, ["X106"]),
    # multi-node addresses and ranks
    ("0.5.9", ["--tensor-parallel-size", "2", "--nnodes", "2", "--dist-init-addr", "[fd00::1]:5000", "--node-rank", "1"], {}, []),
    ("0.5.9", ["--tensor-parallel-size", "2", "--nnodes", "2", "--dist-init-addr", "fd00::1:5000"], {}, ["X017"]),
    ("0.5.9", ["--tensor-parallel-size", "2", "--nnodes", "2"], {}, ["X018"]),
    ("0.5.9", ["--tensor-parallel-size", "2", "--nnodes", "2", "--dist-init-addr", "h:1", "--node-rank", "2"], {}, ["X019"]),
    # values SGLang does not check
    ("0.5.9", ["--served-model-name", "qwen:122b"], {}, ["X020"]),
    ("0.5.9", ["--mem-fraction-static", "1.7"], {}, ["X021"]),
    ("0.5.9", ["--mem-fraction-static", "0"], {}, ["X021"]),
    ("0.5.9", ["--mem-fraction-static", "0.9"], {}, []),
    ("0.5.9", ["--port", "70000"], {}, ["X022"]),
    ("0.5.9", ["--port", "60000"], {}, []),
    ("0.5.23", ["--tool-call-parser", "qwen3"], {}, ["X024"]),
    # found by the coverage review: EPLB without expert parallelism, hicache without radix cache
    ("0.5.9", ["--enable-eplb", "--tp-size", "8"], {}, ["X025"]),
    ("0.5.9", ["--enable-eplb", "--tp-size", "8", "--ep-size", "8"], {}, []),
    ("0.5.23", ["--enable-eplb", "--tp-size", "8", "--moe-a2a-backend", "deepep"], {}, []),
    ("0.5.23", ["--enable-eplb", "--moe-a2a-backend", "deepep"], {}, ["X025"]),
    ("0.5.23", ["--enable-eplb", "--moe-a2a-backend", "mori"], {}, []),
    ("0.5.9", ["--enable-hierarchical-cache", "--disable-radix-cache"], {}, ["X026"]),
    ("0.5.23", ["--enable-hierarchical-cache"], {}, []),
    # closing coverage gaps: chunked prefill vs page size, dense-MoE TP, TBO, flex attention + spec
    ("0.5.9", ["--chunked-prefill-size", "1000", "--page-size", "64"], {}, ["X027"]),
    ("0.5.23", ["--chunked-prefill-size", "1000", "--page-size", "64"], {}, ["X027"]),
    ("0.5.23", ["--chunked-prefill-size", "1024", "--page-size", "64"], {}, []),
    # no --page-size: SGLang's page is 1 (the catalog's default is None), so any chunk divides
    ("0.5.9", ["--chunked-prefill-size", "4097"], {}, []),
    ("0.5.23", ["--chunked-prefill-size", "4097"], {}, []),
    ("0.5.23", ["--chunked-prefill-size", "1000", "--page-size", "16", "--disaggregation-mode", "decode"], {}, []),
    ("0.5.23", ["--chunked-prefill-size", "1000", "--page-size", "16", "--attention-backend", "flashmla"], {}, ["X027"]),
    ("0.5.23", ["--chunked-prefill-size", "1024", "--page-size", "16", "--attention-backend", "flashmla"], {}, []),
    ("0.5.23", ["--chunked-prefill-size", "1000", "--page-size", "64", "--attention-backend", "trtllm_mla"], {}, []),
    ("0.5.9", ["--chunked-prefill-size", "1000", "--page-size", "8", "--tp-size", "2", "--dp-size", "2", "--enable-dp-attention"], {}, ["X027"]),
    ("0.5.23", ["--chunked-prefill-size", "1024", "--page-size", "64", "--tp-size", "2", "--attn-dp-size", "2"], {}, []),
    ("0.5.9", ["--moe-dense-tp-size", "4", "--tp-size", "4"], {}, ["X028"]),
    ("0.5.23", ["--moe-dense-tp-size", "4", "--tp-size", "4"], {}, []),
    ("0.5.23", ["--moe-dense-tp-size", "2", "--tp-size", "4"], {}, ["X028"]),
    ("0.5.9", ["--enable-two-batch-overlap", "--tp-size", "2", "--dp-size", "2", "--enable-dp-attention"], {}, ["X029"]),
    ("0.5.23", ["--enable-two-batch-overlap", "--tp-size", "2", "--attn-dp-size", "2"], {}, []),
    ("0.5.23", ["--enable-two-batch-overlap"], {}, ["X029"]),
    ("0.5.23", ["--enable-two-batch-overlap", "--moe-a2a-backend", "deepep", "--tp-size", "2", "--ep-size", "2"], {}, []),
    ("0.5.9", ["--attention-backend", "flex_attention", "--speculative-algorithm", "NGRAM"], {}, ["X030"]),
    ("0.5.23", ["--attention-backend", "flex_attention", "--speculative-algorithm", "NGRAM"], {}, ["X030"]),
    ("0.5.23", ["--attention-backend", "flex_attention"], {}, []),
    # context-parallel and MoE-DP sizes
    ("0.5.9", ["--attn-cp-size", "3", "--tp-size", "4"], {}, ["X031"]),
    ("0.5.9", ["--attn-cp-size", "2", "--tp-size", "4", "--pp-size", "2"], {}, ["X031"]),
    ("0.5.23", ["--attn-cp-size", "2", "--tp-size", "4", "--pp-size", "2"], {}, []),
    ("0.5.23", ["--attn-cp-size", "2", "--tp-size", "4", "--attn-dp-size", "4"], {}, ["X031"]),
    ("0.5.9", ["--moe-dp-size", "2", "--tp-size", "4"], {}, []),
    ("0.5.23", ["--moe-dp-size", "2", "--tp-size", "4"], {}, ["X032"]),
    ("0.5.23", ["--moe-dp-size", "2", "--attn-cp-size", "2", "--tp-size", "4"], {}, []),
    ("0.5.9", ["--moe-dp-size", "2", "--tp-size", "4", "--ep-size", "4"], {}, ["X032"]),
    ("0.5.9", ["--moe-dp-size", "3", "--tp-size", "4"], {}, ["X032"]),
]


TABLE += all_rows()  # tests/rule_tables/*.py: one module per rule group


@pytest.mark.parametrize(("pin", "argv", "env", "expected"), TABLE,
                         ids=[f"{t[0]}:{' '.join(t[1])}:{t[2]}" for t in TABLE])
def test_rule_table(pin: str, argv: list[str], env: dict[str, str], expected: list[str]) -> None:
    assert _codes(pin, argv, env) == expected


# (pin, argv, code, the start of its message): a rule of many checks prints the broken one's own words
MESSAGES = [
    ("0.5.23", ["--enable-hierarchical-cache", "--dcp-size", "2", "--tp-size", "2", "--enable-lmcache"], "X092",
     "--enable-lmcache with --dcp-size > 1 is not supported: "),
    ("0.5.23", ["--enable-unified-memory", "--attention-backend", "triton", "--prefill-attention-backend",
                "torch_native"], "X090",
     "--enable-page-major-kv-layout (implied by --enable-unified-memory): the attention backends "
     "['torch_native', 'triton'] are not in any allowed set ("),
    ("0.5.23", ["--enable-unified-memory", "--attention-backend", "triton", "--enable-lmcache"], "X090",
     "--enable-unified-memory is not yet compatible with --enable-lmcache: "),
]


@pytest.mark.parametrize(("pin", "argv", "code", "start"), MESSAGES, ids=[f"{m[0]}:{' '.join(m[1])}" for m in MESSAGES])
def test_the_broken_check_is_named_in_the_message(pin: str, argv: list[str], code: str, start: str) -> None:
    catalog = load_catalog(ROOT, pin)
    findings = evaluate(settings_from_argv(catalog, argv, {}), load_rules(rules_path(catalog)))
    assert [f.message for f in findings if f.rule.code == code and f.message.startswith(start)], \
        [(f.rule.code, f.message) for f in findings]


def test_a_unified_memory_refusal_is_at_the_flag_not_at_the_setting_it_meets() -> None:
    """X090 is about --enable-unified-memory: it is positioned there, also when what breaks it is an
    environment variable (SGLANG_DISABLE_LAZY_COMPACTION) or another flag (--pp-size)."""
    from generator.errors import Position
    from generator.sglang.rules.settings import settings_from_words

    catalog = load_catalog(ROOT, "0.5.23")
    for flags, env in ([[("--disaggregation-mode", "prefill")], {"SGLANG_DISABLE_LAZY_COMPACTION": "1"}],
                       [[("--disaggregation-mode", "prefill"), ("--pp-size", "2")], {}]):
        written = [("--attention-backend", "triton"), ("--enable-unified-memory", None), *flags]
        groups = [(catalog.by_option(flag), [flag] if value is None else [flag, value], Position("m.yaml", line, 3))
                  for line, (flag, value) in enumerate(written, start=1)]  # --enable-unified-memory on line 2
        settings = settings_from_words(catalog, groups, env, {n: Position("m.yaml", 40, 3) for n in env})
        found = [f.pos for f in evaluate(settings, load_rules(rules_path(catalog))) if f.rule.code == "X090"]
        assert found == [Position("m.yaml", 2, 3)], (flags, env, found)


def test_every_rule_of_the_file_has_a_predicate_and_a_table_row() -> None:
    rules = load_rules(ROOT / "catalogs" / "rules.yaml")
    assert sorted(r.id for r in rules if r.when is None) == sorted(PREDICATES)
    covered = ({code for row in TABLE for code in row[3]} | {code for row in GPU_ROWS for code in row[4]}
               | {code for row in MODEL_ROWS for code in row[4]}
               | {"G015" for row in GPU_MODEL_ROWS if row[4]})  # tests/test_gpu_picks.py runs these
    # X023 is the 0.5.15 gRPC port quirk: no catalog of that pin is committed.
    assert {r.code for r in rules} - covered == {"X023"}
    for r in rules:
        family = r.code[0]  # X flag rules, G GPU rules (tests/rule_tables/gpu_facts.py), M model rules
        assert family in "XGM" and r.code[1] in (("0", "2") if r.severity is Severity.ERROR else ("1",)), r.id


def _model_codes(pin: str, argv: list[str], env: dict[str, str], config: dict[str, Any]) -> list[str]:
    catalog = load_catalog(ROOT, pin)
    settings = dataclasses.replace(settings_from_argv(catalog, argv, env),
                                   model=CheckpointFacts({"config": config}),
                                   architectures=load_architectures(catalog.source_file))
    return [f.rule.code for f in evaluate(settings, load_rules(rules_path(catalog)))]


@pytest.mark.parametrize(("pin", "argv", "env", "config", "expected"), MODEL_ROWS,
                         ids=[f"{t[0]}:{' '.join(t[1])}:{t[2]}:{t[3]['architectures'][0]}:{i}"
                              for i, t in enumerate(MODEL_ROWS)])
def test_model_rule_table(pin: str, argv: list[str], env: dict[str, str], config: dict[str, Any],
                          expected: list[str]) -> None:
    assert _model_codes(pin, argv, env, config) == expected


def test_model_rules_are_silent_without_facts() -> None:
    for pin, argv, env, _, _ in MODEL_ROWS:
        assert not [c for c in _codes(pin, argv, env) if c.startswith("M")]


def test_rules_file_errors_are_reported(tmp_path: Path) -> None:
    text = (ROOT / "catalogs" / "rules.yaml").read_text()
    bad = tmp_path / "rules.yaml"
    bad.write_text(text.replace("code: X002", "code: X102"))  # an error rule with a warning code
    with pytest.raises(DataFileError, match=r"error\[C013\].*X102"):
        load_rules(bad)
    bad.write_text(text.replace("id: nnodes-divides", "id: nnodes-divides-typo"))
    with pytest.raises(DataFileError, match=r"error\[C010\]: rule 'nnodes-divides-typo'"):
        load_rules(bad)


@pytest.mark.parametrize(("text", "version", "inside"), [
    ("all", None, True), ("all", (0, 5, 9), True), (">=0.5.15", (0, 5, 9), False),
    (">=0.5.15", (0, 5, 23), True), ("<=0.5.9", (0, 5, 9), True), ("<=0.5.9", (0, 5, 15), False),
    (">=0.5.15,<0.5.23", (0, 5, 15), True), (">=0.5.15,<0.5.23", (0, 5, 23), False),
    (">=0.5.15", None, False),
])
def test_version_ranges(text: str, version: tuple[int, ...] | None, inside: bool) -> None:
    assert VersionRange.parse(text).contains(version) is inside


def test_bad_version_range_is_refused() -> None:
    with pytest.raises(RulesFormatError):
        VersionRange.parse("0.5.9+")


@pytest.mark.parametrize(("addr", "ok"), [
    ("10.0.0.1:50000", True), ("node-a.lan:29500", True), ("[fd00::1]:50000", True),
    ("fd00::1:50000", False), ("10.0.0.1", False), ("10.0.0.1:0", False), ("10.0.0.1:70000", False),
    ("tcp://10.0.0.1:5000", False),
])
def test_dist_init_addr_form(addr: str, ok: bool) -> None:
    assert dist_init_addr_ok(addr) is ok


def test_settings_read_dests_across_pins() -> None:
    for pin, flag in (("0.5.9", "--tensor-parallel-size"), ("0.5.23", "--tp-size")):
        s = settings_from_argv(load_catalog(ROOT, pin), [flag, "4", "--enable-mixed-chunk"], {})
        assert s.get("tp_size") == 4 and s.flag("tp_size") == flag and s.is_set("tp_size")
        assert s.get("enable_mixed_chunk") is True and s.get("pp_size") == 1 and not s.is_set("pp_size")


def test_model_card_flags_of_incident_2_warn_and_still_render(repo_copy: Path) -> None:
    """The card's '--speculative-algo NEXTN' works on 0.5.9 but is written twice wrong."""
    model = repo_copy / "models" / "qwen3.5-122b-a10b.yaml"
    text = model.read_text().split("speculative:")[0].rstrip() + (
        "\nparsers: {reasoning: qwen3, tool_call: qwen3_coder}\nargs:\n  --speculative-algo: NEXTN\n"
        "  --speculative-num-steps: 3\n  --speculative-eagle-topk: 1\n  --speculative-num-draft-tokens: 4\n"
        "  --attention-backend: triton\n")  # the backend 0.5.9 allows for it on llm-two's Blackwell (G015)
    model.write_text(text)
    result = run(repo_copy, ["llm-two"])
    assert [(d.code, d.pos.line) for d in result.diagnostics] == [("F101", 18), ("X103", 18)]
    assert result.ok



def test_versioned_params_answer_by_range() -> None:
    """RuleSpec.param: the last range that holds the version wins; a bad range is refused when the rule is made."""
    from generator.sglang.rules.spec import RuleSpec

    spec = RuleSpec(id="x", code="X100", versions=VersionRange.parse("all"), severity=Severity.WARNING,
                    enforced="none", message="", fix="", evidence="",
                    params={"p": {">=0.5.15": "new", "<0.5.15": "old", "all": None}, "q": {1: "one"}})
    assert spec.param("p", (0, 5, 23)) is None  # the last entry that holds wins
    assert spec.param("p", (0, 5, 9)) is None and spec.param("missing", (0, 5, 9)) is None
    assert spec.param("q", (1,)) == "one" and spec.param("q", (2,)) is None
    ordered = RuleSpec(id="z", code="X102", versions=VersionRange.parse("all"), severity=Severity.WARNING,
                       enforced="none", message="", fix="", evidence="",
                       params={"p": {"all": "any", ">=0.5.15": "new"}})
    assert ordered.param("p", (0, 5, 23)) == "new" and ordered.param("p", (0, 5, 9)) == "any"
    with pytest.raises(RulesFormatError):  # True == 1 as a key, but "True" is not a range
        RuleSpec(id="y", code="X101", versions=VersionRange.parse("all"), severity=Severity.WARNING,
                 enforced="none", message="", fix="", evidence="", params={"p": {True: "x"}})
