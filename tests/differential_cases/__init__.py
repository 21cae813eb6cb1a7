"""Generated differential cases for rules found by the coverage inventory, as flag words.

Each module ``tests/differential_cases/<group>.py`` holds ``CASES``: a list of
:class:`WordCase`, usually built with :func:`product_cases` from a base set of flags and a
few axes (every combination is a case). tests/test_rules_differential.py runs every case
through gen (flag check, then rules) and through the real SGLang's argument validation of
each pin the case names, and requires both to agree, as for its grid corpus. It also
requires, per rule named by a case, at least one case where that rule fires and SGLang
refuses and one where neither refuses: a rule whose cases never fire proves nothing.

Flags are written as a manifest's ``args:`` would be: option string -> value (True for a
bare switch, a list for nargs). The word ``fake_draft_model`` stands for a stand-in
draft model folder (tests/rules_differential_runner.py).
"""

from __future__ import annotations

import importlib
import itertools
import pkgutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

FlagValue = Any  # bool | int | float | str | list[str]


@dataclass(frozen=True)
class WordCase:
    """One generated case: the rule it exercises, its pins, the flags and the environment."""

    rule: str
    name: str
    pins: tuple[str, ...]
    flags: tuple[tuple[str, FlagValue], ...]
    env: tuple[tuple[str, str], ...] = field(default=())

    def fields(self) -> dict[str, Any]:
        """The axes an allow-list entry may match on: rule, name and each flag."""
        return {"rule": self.rule, "name": self.name, **{k: v for k, v in self.flags}}


def product_cases(rule: str, pins: Sequence[str], base: Mapping[str, FlagValue],
                  axes: Mapping[str, Sequence[FlagValue | None]],
                  env: Mapping[str, str] | None = None) -> list[WordCase]:
    """Every combination of ``axes`` over ``base``; an axis value None leaves the flag out.

    An axis may also name several flags at once with a key "--a|--b" and tuple values,
    for flags that only make sense together.
    """
    keys = list(axes)
    out: list[WordCase] = []
    for combo in itertools.product(*(axes[k] for k in keys)):
        flags = dict(base)
        for key, value in zip(keys, combo):
            names = key.split("|")
            values = (value,) if len(names) == 1 else value or (None,) * len(names)
            flags.update((flag, one) for flag, one in zip(names, values) if one is not None)
        label = ",".join(f"{k}={v}" for k, v in zip(keys, combo))
        out.append(WordCase(rule, f"{rule}[{label}]", tuple(pins), tuple(flags.items()),
                            tuple(sorted((env or {}).items()))))
    return out


def all_cases() -> list[WordCase]:
    """The cases of every module in this package, in module-name order, names unique."""
    out: list[WordCase] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        out.extend(getattr(module, "CASES", ()))
    names = [c.name for c in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"duplicate differential case names: {dupes}")
    return out


def by_pin(cases: Iterable[WordCase], pin: str) -> list[WordCase]:
    """The cases that name ``pin``."""
    return [c for c in cases if pin in c.pins]
