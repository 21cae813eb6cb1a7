"""gen's rules against the real SGLang's own validation, on a generated corpus of flag sets.

For each committed release pin, a deterministic corpus of speculative-decoding and
parallelism settings is checked by gen (flags.py's catalog check, then rules.py) and
rendered to argv; the same argv goes through the real SGLang (the whole corpus in one run of
tests/rules_differential_runner.py per pin, in the session's SGLang process: tests/sglang_worker.py). Outcomes must agree:
gen refuses a case with an error from the flag check or from a rule SGLang enforces in
its argument validation (``enforced: args`` in catalogs/rules.yaml) exactly when SGLang
raises. Rules SGLang enforces later or never (``runtime``/``none``) make gen stricter by
design and are left out of the comparison.

A disagreement is allowed only when tests/fixtures/differential-allow.yaml lists it with
its reason; an entry that no longer matches any disagreement fails the test too (stale).
Where gen warns that SGLang overrides the draft-token count (X102), SGLang's resolved
value must be the one gen announced.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
import sglang_worker

from generator.sglang.catalog import Catalog, load_catalog
from generator.errors import Diagnostics, Position, Severity
from generator.sglang.flags import Arg, check_args
from generator.sglang.rules import Finding, evaluate, load_rules, rules_path, settings_from_words
from differential_cases import WordCase, all_cases, by_pin
from differential_cases.mixed import MIXED, mixed_cases, reachable

ROOT = Path(__file__).resolve().parent.parent
RUNNER = Path(__file__).resolve().parent / "rules_differential_runner.py"
ALLOW = Path(__file__).resolve().parent / "fixtures" / "differential-allow.yaml"
PINS = ("0.5.9", "0.5.23")
CASES_PER_PIN = 317  # 4 hand-written base cases + 57 GRID cases + 256 sampled
SEED = 20261130
RUN_TIMEOUT = 600
WORD_CASES = all_cases()  # tests/differential_cases/*.py
COVERAGE = ROOT / "catalogs" / "coverage"

pytestmark = pytest.mark.sglang

# The axes of the corpus; None means "not written".
ALGOS = [None, "EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"]
ALGOS_NEW = ["eagle", "MTP", "DFLASH"]  # free text from 0.5.15
SPEC_TRIPLES = [(None, None, None), (3, 1, 4), (3, 1, 16), (None, 1, 16), (3, None, None), (5, 4, 8),
                (None, None, 4), (3, 4, None), (2, 2, 6)]
PAGES = [None, 16]
BACKENDS = [None, "flashinfer", "fa3", "triton", "trtllm_mha"]
# (tp, pp, dp, dp attention, nnodes)
PARALLEL = [(1, 1, 1, False, 1), (4, 1, 1, False, 1), (4, 1, 2, True, 1), (4, 1, 3, True, 1),
            (2, 2, 1, False, 1), (4, 1, 1, True, 1), (8, 1, 2, False, 2), (8, 1, 2, True, 2),
            (3, 1, 1, False, 2), (4, 2, 1, False, 2), (4, 1, 2, False, 1)]
SPEC_V2 = [None, "1"]
# The axes of the rules found by the coverage inventory (X025-X032); sampled cases leave
# them off (constant, so the seeded sample stays what it was) and GRID adds them all.
CACHE_EP_OFF = {"eplb": False, "ep": None, "a2a": None, "hicache": False, "no_radix": False,
                "chunk": None, "dense": None, "tbo": False, "cp": None, "moe_dp": None}
GRID = [dict(zip(("eplb", "ep", "a2a", "tp"), combo))
        for combo in itertools.product([True], [None, 2, 4], [None, "deepep"], [1, 4])] + [
        {"hicache": h, "no_radix": r} for h, r in itertools.product([False, True], [False, True])] + [
        # X027: chunk vs page size; flashmla sets its own page size (the rule stays silent)
        {"chunk": c, "page": p, "backend": b}
        for c, p, b in itertools.product([1000, 1024], [None, 16, 64], [None, "flashmla"])] + [
        # ... checked after DP attention divides the chunk per rank (1000 % 8 == 0, 500 % 8 != 0)
        {"chunk": c, "page": p, "tp": 2, "dp": 2, "dp_attention": True}
        for c, p in itertools.product([1000, 1024], [8, 64])] + [
        # X028: dense-MoE TP size; 0.5.23 also takes tp_size itself
        {"dense": d, "tp": t} for d, t in itertools.product([1, 2, 4], [1, 4])] + [
        # X029: two-batch overlap without an a2a backend, with and without DP attention
        {"tbo": True, "a2a": a, "ep": 2 if a else None, "tp": 2, "dp": d, "dp_attention": d == 2}
        for a, d in itertools.product([None, "deepep"], [1, 2])] + [
        # X031/X032: context-parallel and MoE-DP sizes
        {"cp": c, "moe_dp": m, "tp": t, "pp": p, "ep": e}
        for c, m, t, p, e in [(2, None, 4, 1, None), (3, None, 4, 1, None), (2, None, 4, 2, None),
                              (None, 2, 4, 1, None), (None, 3, 4, 1, None), (None, 2, 4, 1, 4),
                              (None, 2, 4, 1, 2), (2, 2, 4, 1, None), (2, 2, 4, 1, 2), (2, None, 2, 1, None)]] + [
        {"cp": 2, "tp": 4, "dp": d, "dp_attention": True} for d in (2, 4)] + [
        # X030: flex attention with speculative decoding
        {"backend": "flex_attention", "algorithm": a, "steps": st, "topk": k, "draft": dr, "draft_path": a == "EAGLE3"}
        for a, st, k, dr in [(None, None, None, None), ("NGRAM", None, None, None), ("EAGLE3", 3, 1, 4)]]


@dataclass(frozen=True)
class Case:
    """One corpus entry: its axes (for allow-list matching) and what each side said."""

    id: str
    fields: dict[str, Any]
    argv: tuple[str, ...]
    env: dict[str, str]
    gen_errors: tuple[str, ...]  # codes of errors that count for the comparison
    findings: tuple[Finding, ...]


def _fields(rng: random.Random, pin: str) -> dict[str, Any]:
    algos = ALGOS + (ALGOS_NEW if pin != "0.5.9" else [])
    steps, topk, draft = rng.choice(SPEC_TRIPLES)
    tp, pp, dp, dpa, nnodes = rng.choice(PARALLEL)
    algo = rng.choice(algos)
    return {"algorithm": algo, "steps": steps, "topk": topk, "draft": draft,
            "draft_path": algo in ("EAGLE3", "STANDALONE", "DFLASH") and rng.random() < 0.7,
            "page": rng.choice(PAGES), "backend": rng.choice(BACKENDS), "tp": tp, "pp": pp, "dp": dp,
            "dp_attention": dpa, "attn_dp_form": pin != "0.5.9" and dpa and rng.random() < 0.5,
            "nnodes": nnodes, "spec_v2": rng.choice(SPEC_V2), **CACHE_EP_OFF}


def _base_fields() -> list[dict[str, Any]]:
    """Hand-picked cases that must always be in the corpus (the incidents, the recipes)."""
    plain = {"algorithm": None, "steps": None, "topk": None, "draft": None, "draft_path": False,
             "page": None, "backend": None, "tp": 1, "pp": 1, "dp": 1, "dp_attention": False,
             "attn_dp_form": False, "nnodes": 1, "spec_v2": None, **CACHE_EP_OFF}
    return [*({**plain, **g} for g in GRID),
        plain,
        {**plain, "algorithm": "EAGLE3", "topk": 1, "draft": 16, "draft_path": True},  # incident 1
        {**plain, "algorithm": "NEXTN", "steps": 3, "topk": 1, "draft": 4, "tp": 4},  # incident 2's card
        {**plain, "algorithm": "EAGLE3", "steps": 3, "topk": 1, "draft": 4, "draft_path": True, "tp": 8},
    ]


def _args(pin: str, f: dict[str, Any]) -> tuple[list[Arg], dict[str, str]]:
    where = Position("corpus")
    out: list[Arg] = []

    def add(dest: str, value: Any) -> None:
        if value is not None and value is not False:
            out.append(Arg(dest, value, where, by_dest=True))

    add("speculative_algorithm", f["algorithm"])
    add("speculative_num_steps", f["steps"] if f["algorithm"] else None)
    add("speculative_eagle_topk", f["topk"] if f["algorithm"] else None)
    add("speculative_num_draft_tokens", f["draft"] if f["algorithm"] else None)
    # The runner puts its stand-in drafter where this word stands.
    add("speculative_draft_model_path", "fake_draft_model" if f["draft_path"] else None)
    add("page_size", f["page"])
    add("attention_backend", f["backend"])
    add("tp_size", f["tp"] if f["tp"] != 1 else None)
    add("pp_size", f["pp"] if f["pp"] != 1 else None)
    if f["attn_dp_form"]:
        add("attn_dp_size", f["dp"])
    else:
        add("dp_size", f["dp"] if f["dp"] != 1 else None)
        add("enable_dp_attention", f["dp_attention"])
    if f["nnodes"] > 1:
        add("nnodes", f["nnodes"])
        add("node_rank", 0)
        add("dist_init_addr", "127.0.0.1:29500")
    add("enable_eplb", f["eplb"])
    add("ep_size", f["ep"])
    add("moe_a2a_backend", f["a2a"])
    add("enable_hierarchical_cache", f["hicache"])
    add("disable_radix_cache", f["no_radix"])
    add("chunked_prefill_size", f["chunk"])
    add("moe_dense_tp_size", f["dense"])
    add("enable_two_batch_overlap", f["tbo"])
    add("attn_cp_size", f["cp"])
    add("moe_dp_size", f["moe_dp"])
    env = {"SGLANG_ENABLE_SPEC_V2": f["spec_v2"]} if f["spec_v2"] else {}
    return out, env


def _gen_outcome(catalog: Catalog, args: list[Arg], env: dict[str, str]
                 ) -> tuple[list[str], tuple[Finding, ...], tuple[str, ...]]:
    """gen's verdict on flags: the error codes that count, every finding, the rendered argv."""
    diags = Diagnostics()
    groups = check_args(catalog, args, diags)
    settings = settings_from_words(catalog, [(g.action, g.words, g.pos) for g in groups], env)
    findings = tuple(evaluate(settings, load_rules(rules_path(catalog))))
    errors = [d.code for d in diags.items if d.is_error]
    errors += [x.rule.code for x in findings if x.rule.severity is Severity.ERROR and x.rule.enforced == "args"]
    return errors, findings, tuple(w for g in groups for w in g.words)


def _gen_side(catalog: Catalog, index: int, f: dict[str, Any]) -> Case:
    args, env = _args(catalog.pin, f)
    errors, findings, argv = _gen_outcome(catalog, args, env)
    return Case(f"{catalog.pin}#{index}", f, argv, env, tuple(errors), findings)


def corpus(catalog: Catalog) -> list[Case]:
    """The pin's corpus: base cases, then seeded samples without duplicates."""
    rng = random.Random(f"{SEED}-{catalog.pin}")
    seen: set[str] = set()
    picked: list[dict[str, Any]] = []
    for f in itertools.chain(_base_fields(), (_fields(rng, catalog.pin) for _ in range(CASES_PER_PIN * 4))):
        key = json.dumps(f, sort_keys=True)
        if key not in seen:
            seen.add(key)
            picked.append(f)
        if len(picked) >= CASES_PER_PIN:
            break
    return [_gen_side(catalog, i, f) for i, f in enumerate(picked)]


def _word_gen_side(catalog: Catalog, case: WordCase) -> Case:
    """gen's side of a generated word case: its flags as a manifest's ``args:`` would write them."""
    where = Position(f"differential_cases:{case.name}")
    args = [Arg(flag, tuple(v) if isinstance(v, list) else v, where) for flag, v in case.flags]
    env = dict(case.env)
    errors, findings, argv = _gen_outcome(catalog, args, env)
    if case.rule == FLAG_CHECK or (case.rule == MIXED and any(c.startswith("F") for c in errors)):
        argv = _written_words(case)  # gen renders no refused value; SGLang must see it to refuse it too
    return Case(f"{catalog.pin}~{case.name}", case.fields(), argv, env, tuple(errors), findings)


def _written_words(case: WordCase) -> tuple[str, ...]:
    """The case's flags as words, refused values included (a bare switch is True)."""
    words: list[str] = []
    for flag, value in case.flags:
        words.append(flag)
        if value is not True:
            words.extend(str(v) for v in (value if isinstance(value, list) else [value]))
    return tuple(words)


def _sglang_side(pin: str, cases: list[Case]) -> dict[str, dict[str, Any]]:
    payload = json.dumps([{"id": c.id, "argv": list(c.argv), "env": c.env} for c in cases])
    proc = sglang_worker.run(pin, RUNNER.read_text(encoding="utf-8"), payload, str(RUNNER), RUN_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {r["id"]: r for r in json.loads(proc.stdout)}


@dataclass(frozen=True)
class Allowed:
    """A reviewed disagreement: which cases (by their axes), what each side says, and why."""

    name: str
    pins: tuple[str, ...]
    when: dict[str, Any]
    gen: str  # accept | reject
    sglang_error: str  # a substring of SGLang's error ("" when SGLang accepts)
    reason: str

    def matches(self, pin: str, case: Case, sglang: dict[str, Any]) -> bool:
        """True when this entry explains the disagreement on ``case``."""
        if pin not in self.pins or any(case.fields.get(k) != v for k, v in self.when.items()):
            return False
        gen_rejects = bool(case.gen_errors)
        if (self.gen == "reject") != gen_rejects:
            return False
        return sglang["ok"] if not self.sglang_error else self.sglang_error in (sglang["error"] or "")


def load_allow_list() -> list[Allowed]:
    """tests/fixtures/differential-allow.yaml."""
    data = YAML(typ="safe").load(ALLOW.read_text(encoding="utf-8")) or []
    return [Allowed(e["name"], tuple(e["pins"]), e.get("when") or {}, e["gen"], e.get("sglang_error") or "",
                    e["reason"]) for e in data]


def test_allow_list_entries_have_reasons() -> None:
    for entry in load_allow_list():
        assert entry.gen in ("accept", "reject") and len(entry.reason) > 20, entry.name


@pytest.fixture(scope="module")
def outcomes() -> dict[str, tuple[list[Case], dict[str, dict[str, Any]]]]:
    """Both sides' outcomes for each pin's corpus (one SGLang process per pin)."""
    out = {}
    for pin in PINS:
        catalog = load_catalog(ROOT, pin)
        words = by_pin(WORD_CASES, pin) + mixed_cases(WORD_CASES, pin)  # mixed: seeded, across rules
        cases = corpus(catalog) + [_word_gen_side(catalog, c) for c in words]
        out[pin] = (cases, _sglang_side(pin, cases))
    return out


def test_corpus_is_big_enough(outcomes: dict[str, tuple[list[Case], dict[str, dict[str, Any]]]]) -> None:
    sizes = {pin: sum("#" in c.id for c in cases) for pin, (cases, _) in outcomes.items()}
    assert all(n >= 200 for n in sizes.values()), sizes
    for pin, (cases, sglang) in outcomes.items():
        cases = [c for c in cases if "#" in c.id]  # the grid and sampled corpus only
        rejected = sum(not sglang[c.id]["ok"] for c in cases)
        # Both outcomes must be well represented, or the comparison says little.
        assert 0.2 < rejected / len(cases) < 0.8, (pin, rejected, len(cases))


def test_mixed_corpus_is_big_enough(outcomes: dict[str, tuple[list[Case], dict[str, dict[str, Any]]]]) -> None:
    """The seeded mixed corpus (differential_cases/mixed.py) is there, with both outcomes."""
    for pin, (cases, sglang) in outcomes.items():
        mixed = [c for c in cases if c.fields.get("rule") == MIXED]
        rejected = sum(not sglang[c.id]["ok"] for c in mixed)
        assert len(mixed) >= (200 if pin != "0.5.9" else 40), (pin, len(mixed))
        assert 0.1 < rejected / len(mixed) < 0.9, (pin, rejected, len(mixed))


def test_gen_agrees_with_sglang(outcomes: dict[str, tuple[list[Case], dict[str, dict[str, Any]]]]) -> None:
    allow = load_allow_list()
    used: set[str] = set()
    unexplained: list[str] = []
    summary: list[str] = []
    for pin, (cases, sglang) in outcomes.items():
        agree = allowed = 0
        for case in cases:
            said = sglang[case.id]
            if bool(case.gen_errors) != (not said["ok"]):
                entry = next((a for a in allow if a.matches(pin, case, said)), None)
                if entry is None:
                    unexplained.append(f"{case.id} {' '.join(case.argv)} env={case.env}: gen "
                                       f"{list(case.gen_errors) or 'accepts'}; SGLang {said['error'] or 'accepts'}")
                else:
                    used.add(entry.name)
                    allowed += 1
            else:
                agree += 1
        summary.append(f"{pin}: {agree}/{len(cases)} agree, {allowed} allowed")
    print("differential:", "; ".join(summary))
    stale = sorted({a.name for a in allow if not reachable(a.when, WORD_CASES, a.pins)} - used)
    assert not unexplained, "\n".join(summary + unexplained)
    assert not stale, f"stale allow-list entries (no disagreement matches them any more): {stale}"


def test_forced_draft_tokens_are_what_gen_announces(
        outcomes: dict[str, tuple[list[Case], dict[str, dict[str, Any]]]]) -> None:
    checked = 0
    for pin, (cases, sglang) in outcomes.items():
        for case in cases:
            said = sglang[case.id]
            warned = [f for f in case.findings if f.rule.id == "spec-topk1-draft-tokens"]
            if said["ok"] and warned:
                checked += 1
                # a grid case names its axis "steps"; a word or mixed case the flag itself
                steps = case.fields["steps"] if "steps" in case.fields else case.fields["--speculative-num-steps"]
                assert said["draft_tokens"] == int(steps) + 1, (case.id, said)
    assert checked >= 3


def _proof(outcomes: dict[str, tuple[list[Case], dict[str, dict[str, Any]]]]) -> tuple[set[str], set[str]]:
    """Rules that fired on a case SGLang refused, and rules with a case where neither refused."""
    fired: set[str] = set()
    quiet: set[str] = set()
    for _pin, (cases, sglang) in outcomes.items():
        for case in cases:
            ids = {f.rule.id for f in case.findings}
            if not sglang[case.id]["ok"]:
                fired |= ids
            elif not case.gen_errors and "rule" in case.fields:
                quiet.add(case.fields["rule"])
    return fired, quiet


FLAG_CHECK = "flag-check"  # a WordCase "rule" meaning gen's flag check (F codes) refuses, no cross-flag rule


def test_word_cases_name_known_rules() -> None:
    known = {r.id for r in load_rules(ROOT / "catalogs" / "rules.yaml")} | {FLAG_CHECK}
    assert {c.rule for c in WORD_CASES} <= known, sorted({c.rule for c in WORD_CASES} - known)
    assert all(set(c.pins) <= set(PINS) and c.pins for c in WORD_CASES)


def test_each_word_case_rule_fires_and_stays_quiet(
        outcomes: dict[str, tuple[list[Case], dict[str, dict[str, Any]]]]) -> None:
    """A rule's generated cases must include a refusal it explains and an accepted neighbour."""
    fired, quiet = _proof(outcomes)
    rules = {r.id: r for r in load_rules(ROOT / "catalogs" / "rules.yaml")}
    named = {c.rule for c in WORD_CASES if c.rule != FLAG_CHECK and rules[c.rule].enforced == "args"}
    assert not named - fired, f"rules whose cases never fire on a case SGLang refuses: {sorted(named - fired)}"
    assert not named - quiet, f"rules without an accepted case: {sorted(named - quiet)}"


def test_every_covering_rule_is_proven_against_sglang(
        outcomes: dict[str, tuple[list[Case], dict[str, dict[str, Any]]]]) -> None:
    """Each rule the coverage files name for an SGLang check fires on a case SGLang refuses."""
    yaml = YAML(typ="safe")
    rules = {r.id: r for r in load_rules(ROOT / "catalogs" / "rules.yaml")}
    covering = {e["rule"] for pin in PINS
                for e in (yaml.load((COVERAGE / f"{pin}.yaml").read_text(encoding="utf-8"))["checks"] or {}).values()
                if "rule" in e}
    # The G rules need a GPU: tests/test_gpu_rules_differential.py proves them on a stand-in one.
    # The M rules need a checkpoint: tests/test_model_oracle.py proves them on real config.json files.
    args_rules = {r for r in covering if rules[r].enforced == "args" and rules[r].code[0] not in "GM"}
    fired, _ = _proof(outcomes)
    assert not args_rules - fired, f"covering rules never seen firing where SGLang refuses: {sorted(args_rules - fired)}"


def test_flag_check_cases_are_refused_by_both(
        outcomes: dict[str, tuple[list[Case], dict[str, dict[str, Any]]]]) -> None:
    """Checks waived as `flag-check` (gen's flag check refuses the value) have cases proving it."""
    seen = 0
    for _pin, (cases, sglang) in outcomes.items():
        for case in cases:
            if case.fields.get("rule") == FLAG_CHECK and not sglang[case.id]["ok"]:
                assert any(code.startswith("F") for code in case.gen_errors), (case.id, case.gen_errors)
                seen += 1
    assert seen or not any(c.rule == FLAG_CHECK for c in WORD_CASES)
