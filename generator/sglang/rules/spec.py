"""A rule of catalogs/rules.yaml as data: its id, code, versions, severity, message and fix."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from generator.errors import GenError, Severity

if TYPE_CHECKING:
    from generator.sglang.rules.when import When

_BOUND = re.compile(r"^(>=|<=|>|<|==)?\s*(\d+(?:\.\d+)*)$")


class RulesFormatError(GenError, ValueError):
    """A version range that is neither "all" nor comma-joined bounds (rules.yaml reports it as C014)."""


@dataclass(frozen=True)
class VersionRange:
    """A set of SGLang releases: "all", or comma-joined bounds like ">=0.5.15,<0.5.23"."""

    text: str
    bounds: tuple[tuple[str, tuple[int, ...]], ...]

    @classmethod
    def parse(cls, text: str) -> "VersionRange":
        """Parse a range; raise RulesFormatError on anything else."""
        text = str(text).strip()
        if text == "all":
            return cls(text, ())
        bounds = []
        for part in text.split(","):
            match = _BOUND.fullmatch(part.strip())
            if not match:
                raise RulesFormatError(f"bad version range {text!r} (part {part!r})")
            bounds.append((match.group(1) or "==", tuple(int(x) for x in match.group(2).split("."))))
        return cls(text, tuple(bounds))

    def contains(self, version: tuple[int, ...] | None) -> bool:
        """True when ``version`` is in the range (an unknown version only matches "all")."""
        if not self.bounds:
            return True
        if version is None:
            return False
        return all(_OPS[op](version, bound) for op, bound in self.bounds)


_OPS: dict[str, Callable[[tuple[int, ...], tuple[int, ...]], bool]] = {
    ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    "<": lambda a, b: a < b, "==": lambda a, b: a == b,
}


@dataclass(frozen=True)
class RuleSpec:
    """One entry of catalogs/rules.yaml."""

    id: str
    code: str
    versions: VersionRange
    severity: Severity
    enforced: str  # args | runtime | none: where SGLang itself enforces it
    message: str
    fix: str
    evidence: str
    params: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    # check name -> field name -> template: the texts of each SGLang check the rule mirrors
    checks: Mapping[str, Mapping[str, str]] = field(default_factory=dict, hash=False, compare=False)
    # item name -> template: the texts of the entries of a list a predicate passes (item(...))
    items: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    when: "When | None" = field(default=None, hash=False, compare=False)  # a declarative rule's condition
    # params with their range texts parsed once, here: param() runs for every service
    _ranges: Mapping[str, tuple[tuple[VersionRange, Any], ...]] = field(
        init=False, repr=False, hash=False, compare=False)

    def __post_init__(self) -> None:
        """Parse the params' version ranges (RulesFormatError on a bad one; the loader reports C014 first)."""
        ranges = {name: tuple((VersionRange.parse(text), value) for text, value in (table or {}).items())
                  for name, table in self.params.items()}
        object.__setattr__(self, "_ranges", ranges)  # frozen: set once, at construction

    def param(self, name: str, version: tuple[int, ...] | None) -> Any:
        """A versioned parameter: the last entry whose range holds ``version`` (None if none)."""
        found = None
        for versions, value in self._ranges.get(name, ()):
            if versions.contains(version):
                found = value
        return found
