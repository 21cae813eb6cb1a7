"""The templates of catalogs/rules.yaml hold named placeholders and nothing else (generator/sglang/rules/texts.py).

The issue's finding: a `{x:>900000000}` message took 5.3 GB. The class: str.format's
mini-language run on repository text (padding, conversion, index, attribute walks).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from generator.sglang.datafiles import DataFileError
from generator.sglang.rules import load_rules
from generator.sglang.rules.texts import fill, template_problem, templates_of

ROOT = Path(__file__).resolve().parent.parent
RULES = (ROOT / "catalogs" / "rules.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize("text", ["plain", "{flag} {value} needs {fix}", "{flag.speculative_num_steps}",
                                  "{value.tp_size} and {env.SGLANG_X}", "literal {{braces}}", "{version}",
                                  "{word!r}", "{value.mamba_ssm_dtype!r}"])
def test_named_placeholders_are_templates(text: str) -> None:
    assert template_problem(text) is None


@pytest.mark.parametrize("text, words", [
    ("{x:>900000000}", "no format spec"),                         # the finding
    ("{x:{width}}", "no format spec"),                             # a nested spec
    ("{x:,}", "no format spec"),
    ("{x!s}", "the one conversion is !r"),
    ("{x!a}", "the one conversion is !r"),
    ("{x[0]}", "no index"),
    ("{flag.__init__.__globals__[os].environ}", "no index"),      # the environment, through attributes
    ("{flag.__class__}", "not starting with '_'"),
    ("{_private}", "not starting with '_'"),
    ("{a.b.c}", "reader.NAME"),
    ("{}", "reader.NAME"),
    ("{0}", "reader.NAME"),
    ("unclosed {x", "not a template"),
    ("stray }", "not a template"),
])
def test_anything_else_is_refused(text: str, words: str) -> None:
    assert words in (template_problem(text) or "")


def test_a_refused_template_is_never_formatted() -> None:
    start = time.process_time()
    assert fill("{x:>900000000}", {"x": 1}) == "{x:>900000000}"
    assert time.process_time() - start < 0.5
    assert fill("{x} and {flag.y}", {"x": 1, "flag": type("R", (), {"y": "--y"})()}) == "1 and --y"


def test_every_template_of_an_entry_is_found() -> None:
    item = {"id": "r", "message": "m {a}", "fix": "f", "evidence": "run {not a template}",
            "checks": {"c1": {"detail": "d {b}", "fix": "x"}, "c2": {"sglang": ["s {c}"]}},
            "items": {"i1": "{flag.a} {value.a}"}}
    assert sorted(p for p, _ in templates_of(item)) == sorted([
        ("message",), ("fix",), ("checks", "c1", "detail"), ("checks", "c1", "fix"), ("checks", "c2", "sglang", 0),
        ("items", "i1")])


@pytest.mark.parametrize("field", ["message", "fix"])
def test_rules_yaml_with_a_padded_placeholder_is_c032_at_its_line(tmp_path: Path, field: str) -> None:
    start = RULES.index(f"    {field}: ")
    end = RULES.index("\n", start)
    path = tmp_path / "catalogs" / "rules.yaml"
    path.parent.mkdir()
    path.write_text(RULES[:start] + f'    {field}: "{{x:>900000000}}"' + RULES[end:])
    with pytest.raises(DataFileError) as exc:
        load_rules(path)
    line = RULES[:start].count("\n") + 1
    assert f"rules.yaml:{line}:" in str(exc.value) and "error[C032]" in str(exc.value)


def test_an_items_text_with_a_padded_placeholder_is_c032_at_its_line(tmp_path: Path) -> None:
    """items: (the texts a predicate names with item()) are templates too, formatted by message.py."""
    old = '      attn-dp-size: "{flag.attn_dp_size} {value.attn_dp_size}"'
    assert old in RULES
    path = tmp_path / "catalogs" / "rules.yaml"
    path.parent.mkdir()
    path.write_text(RULES.replace(old, '      attn-dp-size: "{value.attn_dp_size:>900000000}"', 1))
    with pytest.raises(DataFileError) as exc:
        load_rules(path)
    line = RULES[:RULES.index(old)].count("\n") + 1
    assert f"rules.yaml:{line}:" in str(exc.value) and "error[C032]" in str(exc.value), str(exc.value)


def test_the_committed_rules_pass() -> None:
    assert load_rules(ROOT / "catalogs" / "rules.yaml")
