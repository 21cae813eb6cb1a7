"""Acknowledged warnings applied to a run's findings, and the acks themselves checked.

Each ``ack:`` entry (:mod:`generator.load.acks`) takes the warnings of its code out of the
findings of its own file; they are kept as *acknowledged*, with the reason, for ``gen
show``, ``--format json`` and SARIF's suppressions. The entries are checked here, where
every finding of the run is known:

* S020: a code that cannot be acknowledged: an error (fix it instead), or one of the
  acks' own warnings;
* S021: a code gen never reports (with a did-you-mean), an X code no rule of
  ``catalogs/rules.yaml`` carries included;
* S023: the same code acknowledged twice in one file;
* S022 (a warning): an ack that matches no finding of its file (its hint names the
  files that do report the code). Only a run that
  saw every host can tell (``complete``): ``--host`` runs leave it out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from generator import codes
from generator.codes import Severity
from generator.errors import Diagnostic
from generator.load.acks import Ack
from generator.load.schema import suggest

# The acks' own findings: acknowledging them would hide that an ack is wrong.
_OWN = frozenset({"S020", "S021", "S022", "S023"})


@dataclass(frozen=True)
class Acknowledged:
    """A warning an ack took out of the findings, and the ack that did."""

    diagnostic: Diagnostic
    ack: Ack


@dataclass
class AckOutcome:
    """The findings left to report, the acknowledged ones, and how many each ack matched."""

    diagnostics: list[Diagnostic]
    acknowledged: list[Acknowledged] = field(default_factory=list)
    matches: dict[Ack, int] = field(default_factory=dict)


def _known(code: str, rule_codes: frozenset[str] | None) -> codes.Code | None:
    found = codes.lookup(code)
    if found is not None and code.startswith("X") and rule_codes is not None and code not in rule_codes:
        return None  # the X family's shape, but no rule carries this code
    return found


def _entry_findings(acks: Sequence[Ack], rule_codes: frozenset[str] | None) -> tuple[list[Diagnostic], list[Ack]]:
    """S020, S021 and S023 for the entries, and the entries that may match findings."""
    out: list[Diagnostic] = []
    usable: list[Ack] = []
    seen: dict[tuple[str, str], Ack] = {}
    known = sorted(c.code for c in codes.REGISTRY.values() if c.severity is Severity.WARNING and c.code not in _OWN)
    known += sorted(c for c in rule_codes or () if codes.rule_code_severity(c) is Severity.WARNING)
    for ack in acks:
        first = seen.get((ack.file, ack.code))
        if first is not None:
            out.append(Diagnostic(ack.pos, "S023", f"'{ack.code}' is acknowledged twice in this file (first at "
                                  f"line {first.pos.line})", hint="keep one entry, with both reasons"))
            continue
        seen[(ack.file, ack.code)] = ack
        found = _known(ack.code, rule_codes)
        if found is None:
            near = suggest(ack.code, known)
            out.append(Diagnostic(ack.pos, "S021", f"ack of '{ack.code}': gen reports no such code",
                                  hint=f"did you mean '{near}'?" if near else "write a code as printed in "
                                  "brackets, e.g. warning[F104]"))
        elif ack.code in _OWN:
            out.append(Diagnostic(ack.pos, "S020", f"ack of '{ack.code}': a finding about acks cannot itself be "
                                  "acknowledged", hint="fix or remove the ack it names"))
        elif found.severity is Severity.ERROR:
            out.append(Diagnostic(ack.pos, "S020", f"ack of '{ack.code}': it is an error ({found.meaning}), and "
                                  "an error cannot be acknowledged", hint="fix what it reports, then remove this "
                                  "entry"))
        else:
            usable.append(ack)
    return out, usable


def _stale(ack: Ack, reported_in: list[str]) -> Diagnostic:
    """S022 for an ack that matched nothing: where the warning is reported now, when it is
    (an ack covers its own file only), else that it is gone."""
    files = sorted(set(reported_in))
    if files:
        hint = (f"'{ack.code}' is reported in {', '.join(files)}: move the entry there (an ack covers the "
                "warnings of its own file)")
    else:
        hint = "remove the entry: the warning it was for is gone"
    return Diagnostic(ack.pos, "S022", f"ack of '{ack.code}' matches no warning of this file", Severity.WARNING, hint)


def apply_acks(diagnostics: Iterable[Diagnostic], acks: Sequence[Ack], rule_codes: frozenset[str] | None,
               complete: bool) -> AckOutcome:
    """The findings with every acknowledged warning taken out, plus the acks' own findings.

    ``rule_codes``: the codes of catalogs/rules.yaml (X codes are data; None: not known, every
    X code of the right shape is taken); ``complete``: the
    run processed every host, so an ack that matched nothing is stale (S022).
    """
    entry_findings, usable = _entry_findings(acks, rule_codes)
    by_key = {(a.file, a.code): a for a in usable}
    outcome = AckOutcome([], [], {a: 0 for a in usable})
    for d in diagnostics:
        ack = by_key.get((d.pos.path, d.code)) if not d.is_error else None
        if ack is None:
            outcome.diagnostics.append(d)
            continue
        outcome.acknowledged.append(Acknowledged(d, ack))
        outcome.matches[ack] += 1
    if complete:
        elsewhere: dict[str, list[str]] = {}  # code -> the files that report it unacknowledged
        for d in outcome.diagnostics:
            elsewhere.setdefault(d.code, []).append(d.pos.path)
        outcome.diagnostics.extend(_stale(a, elsewhere.get(a.code, [])) for a in usable if not outcome.matches[a])
    outcome.diagnostics.extend(entry_findings)
    outcome.diagnostics.sort(key=Diagnostic.sort_key)
    return outcome
