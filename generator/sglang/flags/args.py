"""What the flag check reads and returns: a written flag, a checked one, a resolution."""

from __future__ import annotations

from dataclasses import dataclass

from generator.errors import Position
from generator.sglang.catalog import Action

ArgValue = bool | int | float | str | tuple[str | int | float, ...] | None


@dataclass(frozen=True)
class Arg:
    """One flag as the manifest wrote it, before checking."""

    name: str  # as written: "--speculative-algo", or a dest like "tp_size" when by_dest
    value: ArgValue  # True for a bare switch; False to turn a switch off; tuple for nargs
    pos: Position  # where it was written
    by_dest: bool = False  # structured manifest fields address actions by dest, stable across pins


@dataclass(frozen=True)
class CheckedArg:
    """A flag resolved to its catalog action and rendered as argv words.

    ``words`` is empty when the value turns the flag off (``false`` for a store_true)
    or is None: nothing is passed and SGLang keeps its default.
    """

    action: Action
    words: tuple[str, ...]  # e.g. ("--tensor-parallel-size", "4")
    pos: Position


@dataclass(frozen=True)
class Resolved:
    """Which action a written flag means, which of its strings matched, and the value."""

    action: Action
    matched: str  # the option string argparse would match (alias, "--no-x", ...)
    value: ArgValue
