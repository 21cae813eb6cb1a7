"""Tests for the kept results of generator/systemd.py's writers (plain_memo, speed only):
each answers exactly as the computation does.
"""

from __future__ import annotations

import pytest

from generator.systemd import ExecVariable, exec_lines, exec_word, path_value, plain_memo
from generator.systemd_settings import cpu_list_value, environment_under, single_path_value


def test_exec_variable_is_not_taken_for_its_text() -> None:
    """An ExecVariable equals its text, but only the variable is written unquoted."""
    text = "${CREDENTIALS_DIRECTORY}/x.yaml"
    for _ in range(2):  # kept or computed, in either order
        assert exec_word(text) == '"$${CREDENTIALS_DIRECTORY}/x.yaml"'
        assert exec_word(ExecVariable(text)) == text
        assert exec_word(text) == '"$${CREDENTIALS_DIRECTORY}/x.yaml"'


def test_refused_values_raise_every_time() -> None:
    """An error is never kept as an answer: the same message on every call."""
    for _ in range(3):
        with pytest.raises(ValueError, match="control character U\\+000A at offset 1"):
            exec_word("a\nb")
        with pytest.raises(ValueError, match="path must be normalized"):
            path_value("/a/../b")
        with pytest.raises(ValueError, match="starts or ends with a blank"):
            single_path_value("/a ")


def test_non_strings_keep_their_errors() -> None:
    """A list (unhashable) or a number reaches the writer itself, with its own message."""
    with pytest.raises(TypeError, match="argv word must be a string, got list"):
        exec_word(["a"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="path must be absolute: 3"):
        path_value(3)  # type: ignore[arg-type]
    assert cpu_list_value(3) == "3" and cpu_list_value("3") == "3"
    with pytest.raises(TypeError):
        cpu_list_value(True)  # type: ignore[arg-type]  (1 == True: a kept "1" must not answer)


def test_kept_answers_equal_computed_ones() -> None:
    """Every writer answers a repeated call as the first one, for many values."""
    words = ["--model-path", "/x y", "a%b$c", 'q"\\t', "", "\u00e9", "a\tb"]
    first = [exec_word(w) for w in words]
    assert [exec_word(w) for w in words] == first
    assert [exec_word.__wrapped__(w) for w in words] == first  # type: ignore[attr-defined]
    groups = [["/usr/bin/python3", "-m", "x"], words]
    assert exec_lines(groups) == exec_lines([list(g) for g in groups])
    assert environment_under("HOME", "%S", "svc") == '"HOME=%S/svc"'
    assert environment_under("HOME", "%C", "svc") == '"HOME=%C/svc"'  # another argument, another answer


def test_keyword_calls_are_not_kept() -> None:
    """A keyword call runs the function (the key is positional only)."""
    calls: list[str] = []

    @plain_memo
    def echo(s: str) -> str:
        calls.append(s)
        return s

    assert echo("a") == echo("a") == "a" and calls == ["a"]
    assert echo(s="a") == "a" and calls == ["a", "a"]
