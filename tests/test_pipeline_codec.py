"""Unit tests for generator.pipeline.codec: outcomes to JSON and back, every shape checked.

What the render cache reads is untrusted: anything :func:`outcome_json` does not write,
even with a matching digest, must come back as None (a miss), never as a crash.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from generator.emit.writer import HostTree, RenderedFile
from generator.errors import Diagnostic, Position, Severity
from generator.pipeline import cache as render_cache
from generator.pipeline import codec
from generator.pipeline.outcome import HostOutcome

WARN = Diagnostic(Position("models/m.yaml", 3, 5), "X160", "renamed value", Severity.WARNING, "write qwen")


def _outcome() -> HostOutcome:
    tree = HostTree("h", (RenderedFile(".gen-managed", "# list\nx\n"), RenderedFile("etc/ä.env", "Ä=ü\n", 0o600),
                          RenderedFile("x", "")))
    return HostOutcome("h", "h", (), (WARN, WARN), True, tree, ("m",))


def test_an_outcome_round_trips_through_a_cache_entry() -> None:
    """The files' text travels beside the JSON (UTF-8, by length in characters), exactly."""
    payload, text = codec.outcome_json(_outcome())
    assert text == "# list\nx\nÄ=ü\n" and [f[1] for f in payload["tree"]["files"]] == [9, 4, 0]
    entry = render_cache.decode("k", render_cache.encode("k", payload, text))
    assert codec.outcome_from_json(entry, "h") == _outcome()
    assert codec.outcome_from_json(entry, "other") is None


@pytest.mark.parametrize("change", ["longer", "shorter", "left over", "negative", "bool", "float", "no tree"])
def test_lengths_that_do_not_cut_the_text_exactly_are_refused(change: str) -> None:
    payload, text = codec.outcome_json(_outcome())
    files = payload["tree"]["files"]
    if change == "longer":
        files[-1][1] += 1
    elif change == "shorter":
        files[0][1] -= 1
    elif change == "left over":
        text += "ExecStartPre=/bin/id\n"
    elif change == "negative":
        files[0][1], files[1][1] = -1, files[1][1] + 10
    elif change == "bool":
        files[2][1] = False
    elif change == "float":
        files[2][1] = 0.0
    else:
        payload["tree"], payload["rendered"] = None, False
    assert codec.outcome_from_json((payload, text), "h") is None
    assert codec.outcome_from_json(render_cache.decode("k", render_cache.encode("k", payload, text)), "h") is None


def test_an_entry_whose_text_is_not_utf8_or_whose_lines_are_cut_is_a_miss() -> None:
    payload, text = codec.outcome_json(_outcome())
    good = render_cache.encode("k", payload, text)
    assert render_cache.decode("k", good) is not None
    head, body, blob = good.split(b"\n", 2)
    bad = blob.replace("Ä".encode(), b"\xc3")  # a UTF-8 sequence cut short
    forged = {"format": render_cache.CACHE_FORMAT, "key": "k", "digest": render_cache._digest(body + b"\n" + bad)}
    assert render_cache.decode("k", render_cache.json.dumps(forged).encode() + b"\n" + body + b"\n" + bad) is None
    assert render_cache.decode("k", head + b"\n" + body) is None  # no text line at all
    assert render_cache.decode("k", good[:-1]) is None  # digest no longer matches


def test_a_text_utf8_cannot_hold_is_not_stored(tmp_path: Any) -> None:
    """A lone surrogate cannot be written as UTF-8: the entry is skipped, never half written."""
    tree = HostTree("h", (RenderedFile("x", "\ud800"),))
    render_cache.store(tmp_path, "ab" + "0" * 62, *codec.outcome_json(HostOutcome("h", "h", (), (), True, tree)))
    assert not list(tmp_path.rglob("*.json"))


@pytest.mark.parametrize("field, value", [(3, "X999"), (3, "x160"), (5, "error"), (5, ["warning"]),
                                          (1, True), (2, -1), (6, 7), (0, None)])
def test_a_diagnostic_gen_would_not_write_is_refused(field: int, value: Any) -> None:
    """An unregistered code, or a registered one with another severity, is a miss (not a crash)."""
    item = codec.diagnostic_json(WARN)
    assert codec.diagnostic_from_json(list(item)) == WARN
    item[field] = value
    assert codec.diagnostic_from_json(item) is None
    payload, text = codec.outcome_json(_outcome())
    payload["render"][1] = item
    assert codec.outcome_from_json((copy.deepcopy(payload), text), "h") is None


def test_repeated_diagnostics_are_read_once_and_types_still_count() -> None:
    """The same JSON diagnostic on many hosts is one object; the memo keys only checked fields,
    so a bool where a line number belongs (True == 1 in a dict) is still refused."""
    item = [WARN.pos.path, 1, 1, WARN.code, WARN.message, "warning", None]
    first = codec.diagnostic_from_json(list(item))
    assert first is not None and codec.diagnostic_from_json(list(item)) is first
    assert codec.diagnostic_from_json([WARN.pos.path, True, True, *item[3:]]) is None


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codec, "_READ", {})
    monkeypatch.setattr(codec, "_READ_MAX", 3)
    for line in range(10):
        assert codec.diagnostic_from_json(["p", line, 1, "X160", "m", "warning", None]) is not None
        assert len(codec._READ) <= 3
