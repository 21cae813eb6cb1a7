"""Regular expressions from gen's data files, compiled by RE2: linear time, bounded size.

A pattern of ``catalogs/`` (``env-known.yaml``'s ``pattern``, a ``matches:`` condition of
``rules.yaml``) is repository data a pull request controls, matched against manifest values
a pull request controls too. Python's ``re`` backtracks: ``(a+)+$`` took twice as long per
character of the value. RE2 matches in time linear in the value and never backtracks, and
refuses what it cannot do so (backreferences, lookaround). Its size is bounded, in text and
in the compiled program. This is the one way gen compiles a data file's pattern.
"""

from __future__ import annotations

from typing import Protocol

MAX_PATTERN_CHARS = 1024
_RE2_MEMORY = 1 << 20  # bytes for the compiled program (RE2's default is 8 MiB)


class LinearPattern(Protocol):
    """What gen needs of a compiled pattern (``re2``'s and ``re``'s both have it)."""

    def fullmatch(self, text: str) -> object: ...


def compile_pattern(text: str) -> tuple[LinearPattern | None, str | None]:
    """``text`` compiled by RE2, or None and why it is refused (the data file's own code)."""
    if len(text) > MAX_PATTERN_CHARS:
        return None, f"{len(text)} characters; a pattern has at most {MAX_PATTERN_CHARS}"
    import re2  # google-re2: only when a data file has a pattern to compile

    options = re2.Options()
    options.log_errors = False  # its reason is in the exception: nothing on gen's stderr
    options.max_mem = _RE2_MEMORY
    try:
        return re2.compile(text, options=options), None
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        return None, f"not a pattern RE2 matches without backtracking ({reason})"
