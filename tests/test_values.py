"""Unit tests for generator.load.values: invisible characters and unusable numbers, anywhere."""

from __future__ import annotations

import math
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator import systemd
from generator.errors import Diagnostics
from generator.load.manifests import load_text
from generator.load.values import INT_LIMIT, bad_char, check_values, number_problem

REFUSED = st.characters(categories=["Cc", "Cf", "Zl", "Zp"])


def _check(text: str) -> list[str]:
    diags = Diagnostics()
    doc = load_text(text, "m.yaml", diags)
    assert doc is not None, [str(d) for d in diags.items]
    check_values(doc, diags)
    return [str(d) for d in diags.sorted()]


@settings(max_examples=40, deadline=None)
@given(prefix=st.text(st.characters(categories=["L", "N"]), max_size=5), bad=REFUSED)
def test_every_control_format_or_separator_character_is_refused(prefix: str, bad: str) -> None:
    assert bad_char(prefix + bad) is not None and bad_char(prefix + bad)[0] == len(prefix)


@settings(max_examples=40, deadline=None)
@given(text=st.text(st.characters(categories=["L", "N", "P", "S", "Zs"]), max_size=20))
def test_what_systemd_accepts_is_what_the_walk_accepts(text: str) -> None:
    """No value passes validation and then fails the render's own check (issue 10 item 13)."""
    if bad_char(text) is None:
        systemd.exec_word(text)  # raises on a control character: must not happen here


@settings(max_examples=40, deadline=None)
@given(bad=REFUSED)
def test_refused_characters_are_positioned_errors_in_values_and_keys(bad: str) -> None:
    escaped = f"\\U{ord(bad):08X}"
    errors = _check(f'a: "x{escaped}"\n"k{escaped}": 1\n')
    assert len(errors) == 2, errors
    assert errors[0].startswith("m.yaml:1:4: error[S008]: 'a' contains the control or invisible character "
                                f"U+{ord(bad):04X}")
    assert errors[1].startswith("m.yaml:2:1: error[S008]: key ")


def test_c1_next_line_is_refused_at_validation_with_its_position() -> None:
    assert _check('a: ok\nb: "x\\x85y"\n') == [
        "m.yaml:2:4: error[S008]: 'b' contains the control or invisible character U+0085: 'x\\x85y'"]


@pytest.mark.parametrize("char", ["\ufdd0", "\ufdef", "\ufffe", "\uffff", "\U0001fffe", "\U0010ffff"])
def test_noncharacters_are_refused(char: str) -> None:
    """systemd refuses a unit or environment line holding one."""
    assert bad_char("a" + char) == (1, f"U+{ord(char):04X}")


def test_names_of_format_characters_are_shown() -> None:
    assert bad_char("a\u202eb") == (1, "U+202E " + unicodedata.name("\u202e"))


def test_tab_and_plain_unicode_text() -> None:
    assert bad_char("Grüße, 東京 — ok") is None
    assert bad_char("a\tb") == (1, "U+0009")


@settings(max_examples=40, deadline=None)
@given(value=st.one_of(st.sampled_from([math.nan, math.inf, -math.inf]),
                       st.integers(min_value=INT_LIMIT + 1, max_value=10**300),
                       st.integers(min_value=-10**300, max_value=-INT_LIMIT - 1)))
def test_numbers_no_field_can_use_are_refused(value: float) -> None:
    assert number_problem(value) is not None


@settings(max_examples=40, deadline=None)
@given(value=st.one_of(st.integers(-INT_LIMIT, INT_LIMIT), st.floats(allow_nan=False, allow_infinity=False),
                       st.booleans()))
def test_ordinary_numbers_pass_the_walk(value: float) -> None:
    assert number_problem(value) is None


def test_nan_and_infinity_are_refused_in_args_and_env_too() -> None:
    assert _check("args: {--x: .nan, --y: [1, -.inf]}\nenv: {A: 1e999}\n") == [
        "m.yaml:1:13: error[S011]: 'args.--x': nan is not a number gen can use (NaN and infinity are refused)",
        "m.yaml:1:28: error[S011]: 'args.--y[1]': -inf is not a number gen can use (NaN and infinity are refused)",
        "m.yaml:2:10: error[S011]: 'env.A': inf is not a number gen can use (NaN and infinity are refused)",
    ]


def test_the_printable_fast_path_never_hides_a_refused_character() -> None:
    """bad_char returns early for printable text: no refused code point is printable (all of them)."""
    import sys

    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        if ch.isprintable():
            assert unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp", "Cs"), hex(code)
            assert systemd.noncharacter(ch) is None, hex(code)



@pytest.mark.parametrize(("text", "value"), [("a: 0x" + "f" * 5000 + "\n", 16**5000 - 1),
                                             ("? 0o" + "7" * 6000 + "\n: 1\n", 8**6000 - 1),
                                             ("args: [-0b1" + "0" * 20_000 + "]\n", -(2**20_000))],
                         ids=["hex", "octal-key", "binary-in-args"])
def test_an_integer_past_pythons_digit_limit_is_an_error_not_a_crash(text: str, value: int) -> None:
    """Hex, octal and binary have no int-from-string digit limit, but writing the value in
    decimal has (4,300 digits): the message counts the digits without converting."""
    found = _check(text)
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # the exact count, for the test only
    try:
        digits = len(str(abs(value)))
    finally:
        sys.set_int_max_str_digits(old)
    assert len(found) == 1 and "S011" in found[0] and f"with {digits} digits is out of range" in found[0], found
