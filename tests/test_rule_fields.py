"""A text of catalogs/rules.yaml names only fields it is given (C019, rules/fields.py, rules/load.py).

The finding (issue 22 item 7): a placeholder naming a field the predicate never passes printed
as written (``{algo}`` in a message). The class: every way a text can name a field nobody
fills: a field of no hit, a list style joining one (``{list.F}``), a check's text naming what
only the message is given, an item's text naming a hit's field (an item is formatted with its
own fields), and a message naming a text one of the rule's checks lacks.

Two halves: the committed rules.yaml edited so (each case carries its expected error, checked
through ``gen check``: exit 1, positioned, no traceback), and every hit of the rule tables and
differential cases rendered with a formatter that refuses a missing field, for the paths of a
predicate its syntax cannot tell apart.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.main import main
from generator.sglang.rules import PREDICATES, load_rules
from generator.sglang.rules import message as message_module
from generator.sglang.rules.fields import predicate_fields, resolved_item_fields
from test_rules_prose import RULES, _settings

ROOT = Path(__file__).resolve().parent.parent
TEXT = (ROOT / "catalogs" / "rules.yaml").read_text(encoding="utf-8")

_ALGO_MESSAGE = ("    message: \"speculative algorithm '{algo}' is not one SGLang {version} knows ({list.known}); "
                 "it raises ValueError 'Unknown speculative algorithm name'\"")
_MTP_FIX = "        fix: \"write EAGLE: SGLang runs a model's own MTP heads as EAGLE (model cards say NEXTN)\""
_PHASE_ITEM = '      phase: "{phase}={backend}"'

# (old line, new line, the expected diagnostic's words): each edit is one line of the committed file
CASES = {
    "field-of-no-hit": (_ALGO_MESSAGE, _ALGO_MESSAGE.replace("'{algo}'", "'{algoo}'"),
                        "{algoo} names a field the predicate never passes", "did you mean 'algo'?"),
    "list-style-of-no-field": (_ALGO_MESSAGE, _ALGO_MESSAGE.replace("{list.known}", "{list.knwon}"),
                               "{list.knwon} names a field the predicate never passes", "did you mean 'known'?"),
    "check-text-names-a-check-text": (_MTP_FIX, _MTP_FIX[:-1] + ' {fix}"',
                                      "{fix} names a field the predicate never passes",
                                      "a check's text prints the predicate's fields"),
    "item-text-names-a-hit-field": (_PHASE_ITEM, '      phase: "{phase}={backend} of {got}"',
                                    "{got} names a field the predicate never passes",
                                    "an item's text prints the item's own fields"),
    "message-names-a-text-one-check-lacks": (
        _MTP_FIX, _MTP_FIX + "\n        detail: \"MTP\"", None, None),
}


def _edited(repo: Path, old: str, new: str) -> int:
    assert TEXT.count(old) == 1, old
    (repo / "catalogs" / "rules.yaml").write_text(TEXT.replace(old, new), encoding="utf-8")
    return TEXT[:TEXT.index(old)].count("\n") + 1


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_text_naming_a_field_nobody_passes_is_c019_at_its_line(case: str, repo_copy: Path) -> None:
    old, new, words, hint = CASES[case]
    if words is None:  # the message prints {detail}, which only check mtp now has
        new_message = _ALGO_MESSAGE[:-1] + ' ({detail})"'
        text = TEXT.replace(old, new).replace(_ALGO_MESSAGE, new_message)
        (repo_copy / "catalogs" / "rules.yaml").write_text(text, encoding="utf-8")
        line = TEXT[:TEXT.index(_ALGO_MESSAGE)].count("\n") + 1
        words, hint = "{detail} is a text of the broken check, and check unknown has none", "add detail: to it"
    else:
        line = _edited(repo_copy, old, new)
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code == 1, result.output + result.stderr
    assert "Traceback" not in result.output + result.stderr
    found = [ln for ln in result.stderr.splitlines() if "error[C019]" in ln]
    assert len(found) == 1 and f"rules.yaml:{line}:" in found[0] and words in found[0], result.stderr
    assert hint in result.stderr, result.stderr
    if case == "item-text-names-a-hit-field":  # the hint lists every field the text may name, in order
        given = sorted(predicate_fields(PREDICATES["mis-flashinfer"]).item | resolved_item_fields())
        assert len(given) > 1 and f"own fields ({', '.join(given)}), and the readers" in result.stderr, result.stderr


def test_the_committed_rules_name_only_fields_they_are_given() -> None:
    assert load_rules(ROOT / "catalogs" / "rules.yaml")


def test_the_fields_come_from_the_predicate_and_its_helpers() -> None:
    """Keywords of check()/first_broken()/item(), dict keys, functions called or held in a table."""
    a2a = predicate_fields(PREDICATES["moe-a2a-backend"])
    assert {"tp", "nnodes", "runners", "dispatch"} <= a2a.hit  # moe's _A2A_CHECKS table of functions
    ib = predicate_fields(PREDICATES["ib-devices-value"])
    assert {"option", "gpu", "type"} <= ib.hit  # the (check, {fields}) pairs a helper returns
    assert predicate_fields(PREDICATES["mis-flashinfer"]).item >= {"phase", "backend"}


class _Strict(dict[str, object]):
    def __missing__(self, key: str) -> str:
        raise AssertionError(f"a text names {{{key}}}, which this hit does not pass")


def test_every_hit_of_the_tables_names_only_fields_it_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rendered with a formatter that refuses a missing field: the paths syntax cannot tell apart."""
    monkeypatch.setattr(message_module, "_Fields", _Strict)
    missing: dict[str, str] = {}
    rendered = 0
    for s in _settings():
        for rule in RULES:
            if rule.when is not None or not rule.versions.contains(s.version):
                continue
            hit = PREDICATES[rule.id](s, rule)
            if hit is None:
                continue
            try:
                message_module.render(s, rule, hit)
                rendered += 1
            except AssertionError as exc:
                missing.setdefault(rule.id, str(exc))
    assert rendered > 500 and not missing, missing


def test_a_decorated_predicate_is_read_through_to_its_own_function() -> None:
    """A predicate behind a ``functools.wraps`` decorator (a cache, a tracer, mutmut's trampoline)
    has the wrapper's code and globals: its fields are still those of the function it wraps,
    including the ones of the predicate functions that function calls (moe's table of checks)."""
    import functools

    original = PREDICATES["moe-a2a-backend"]
    wrapped = functools.wraps(original)(lambda *args, **kwargs: original(*args, **kwargs))
    assert predicate_fields(wrapped) == predicate_fields(original)
    assert {"tp", "nnodes", "runners", "dispatch"} <= predicate_fields(wrapped).hit
