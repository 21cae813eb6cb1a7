"""How the flag check writes flags and values in its messages."""

from __future__ import annotations

import difflib
import json
from typing import Sequence

from generator.sglang.flags.args import Arg, ArgValue


def q(items: Sequence[str]) -> str:
    """Quote and join flags for a message: 'a', 'b'."""
    return ", ".join(f"'{i}'" for i in items)


def did_you_mean(options: Sequence[str]) -> str | None:
    """The hint text for one or more suggested spellings."""
    if not options:
        return None
    if len(options) == 1:
        return f"did you mean '{options[0]}'?"
    return "did you mean " + ", ".join(f"'{o}'" for o in options[:-1]) + f" or '{options[-1]}'?"


def dashed(name: str) -> str:
    """``--tp_size`` -> ``--tp-size``: the leading dashes stay, underscores become dashes."""
    stripped = name.lstrip("-")
    return name[: len(name) - len(stripped)] + stripped.replace("_", "-")


def describe(value: ArgValue) -> str:
    """A value as the user wrote it, for messages (never a Python repr like True)."""
    if isinstance(value, tuple):
        return "[" + ", ".join(word(v) for v in value) + "]"
    if value is None:
        return "null"
    return word(value)


def word(value: object) -> str:
    """One argv word, written the way argparse's type functions read it back."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    # str() of a float is the shortest round-trip form ("0.1", "1e-05"): float() reads it back.
    return str(value)


def who(arg: Arg) -> str:
    """How a message names an argument: the flag as written, or the manifest setting."""
    return f"setting '{arg.name}'" if arg.by_dest else f"'{arg.name}'"


def closest(name: str, candidates: Sequence[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``candidates``, most similar to ``name`` first (difflib ratio)."""
    ranked = sorted(candidates,
                    key=lambda c: -difflib.SequenceMatcher(None, name, c).ratio())
    return ranked[:n]
