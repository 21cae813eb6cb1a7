"""A stand-in for systemctl and journalctl, for fast tests of the on-host scripts.

The on-host rollout (generator/live/onhost_rollout.py) drives systemd through
``subprocess.run(["systemctl", ...])`` and ``subprocess.run(["journalctl", ...])``. Its real
behaviour against the real systemd is tested live (tests/live/test_rollout_*.py); this
stand-in answers the same commands from a small in-memory model of units, so the decisions
of the script (what it saves, restores, starts, stops and reports) are tested in
milliseconds, on a temporary root. It is a stand-in, not systemd: it knows only the verbs
and properties the on-host script uses, and refuses any other command so a new call in the
script cannot pass unnoticed.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field


@dataclass
class StandinUnit:
    """One unit's state as ``systemctl show`` reports it."""

    active: str = "inactive"
    sub: str = "dead"
    result: str = "success"
    nrestarts: int = 0
    main_status: int = 0
    enabled: bool = False


@dataclass
class StandinSystemd:
    """The stand-in: units by name, every command it was given, and how starts end.

    ``on_start[unit]`` says what a start does: ``"running"`` (the default), ``"failed"``
    (the server exits 2 at once), ``"auto-restart"`` (systemd schedules a restart) or
    ``"restarted"`` (it came back up after one restart: NRestarts grows).
    """

    units: dict[str, StandinUnit] = field(default_factory=dict)
    on_start: dict[str, str] = field(default_factory=dict)
    refuse_restart: set[str] = field(default_factory=set)
    calls: list[list[str]] = field(default_factory=list)
    journal_lines: dict[str, list[str]] = field(default_factory=dict)
    position: int = 0

    def unit(self, name: str) -> StandinUnit:
        """The named unit, created inactive when first named (systemd knows every name)."""
        return self.units.setdefault(name, StandinUnit())

    def verbs(self, unit: str) -> list[str]:
        """The systemctl verbs that change UNIT, in order (``restart``, ``stop``, ...; not the
        questions ``show`` and ``is-active``)."""
        return [c[1] for c in self.calls if c[0] == "systemctl" and c[-1] == unit and c[1] not in ("show", "is-active")]

    def run(self, argv: list[str], **_: object) -> subprocess.CompletedProcess:
        """Answer one command as ``subprocess.run(..., capture_output=True, text=True)`` would."""
        self.calls.append(list(argv))
        if argv[0] == "journalctl":
            return self._journalctl(argv)
        if argv[0] != "systemctl":
            raise AssertionError(f"the on-host script ran {argv[0]!r}, which this stand-in does not know")
        verb, rest = argv[1], [a for a in argv[2:] if not a.startswith("-")]
        if verb == "daemon-reload":
            return self._done(argv)
        if verb == "show":
            props = argv[argv.index("-p") + 1].split(",")
            return self._done(argv, "".join(f"{p}={self._prop(argv[-1], p)}\n" for p in props))
        unit = self.unit(rest[-1])
        if verb == "is-active":
            return self._done(argv, code=0 if unit.active == "active" else 3)
        if verb == "enable":
            unit.enabled = True
        elif verb == "disable":
            unit.enabled = False
        elif verb == "reset-failed":
            if unit.active == "failed":
                unit.active, unit.result = "inactive", "success"
        elif verb == "stop":
            unit.active, unit.sub = "inactive", "dead"
        elif verb == "restart":
            if rest[-1] in self.refuse_restart:
                return self._done(argv, code=5, err=f"Failed to restart {rest[-1]}: Unit {rest[-1]} not found.")
            self._start(rest[-1], unit)
        else:
            raise AssertionError(f"systemctl {verb}: not a verb this stand-in knows")
        return self._done(argv)

    def _start(self, name: str, unit: StandinUnit) -> None:
        outcome = self.on_start.get(name, "running")
        self.journal_lines.setdefault(name, []).append(f"{self.position + 1} Starting {name}")
        self.position += 1
        if outcome == "running":
            unit.active, unit.sub, unit.result = "active", "running", "success"
        elif outcome == "failed":
            unit.active, unit.sub, unit.result, unit.main_status = "failed", "failed", "exit-code", 2
            self.journal_lines[name].append(f"{self.position + 1} error: unrecognized arguments: --bad")
            self.position += 1
        elif outcome == "auto-restart":
            unit.active, unit.sub, unit.result = "activating", "auto-restart", "exit-code"
        elif outcome == "restarted":
            unit.active, unit.sub, unit.result = "active", "running", "success"
            unit.nrestarts += 1
        else:
            raise AssertionError(f"unknown start outcome {outcome!r}")

    def _prop(self, name: str, prop: str) -> str:
        unit = self.unit(name)
        return {"ActiveState": unit.active, "SubState": unit.sub, "Result": unit.result,
                "NRestarts": str(unit.nrestarts), "ExecMainStatus": str(unit.main_status),
                "ExecMainCode": "exited" if unit.main_status else "0"}[prop]

    def _journalctl(self, argv: list[str]) -> subprocess.CompletedProcess:
        if "--show-cursor" in argv:
            if argv[1:] != ["-n0", "--show-cursor", "-q"]:
                raise AssertionError(f"journalctl {argv[1:]}: this stand-in knows only -n0 --show-cursor -q")
            return self._done(argv, f"-- cursor: s={self.position}\n")
        # The lines below are short-iso's (the script parses that form); any other option is refused.
        words = [a for a in argv[1:] if not a.startswith("--after-cursor=")]
        known = ["-u", words[1] if len(words) > 1 else "", "--no-pager", "-o", "short-iso"]
        after_cursor = len(words) < len(argv) - 1
        if words not in (known + ["-b"], known) or after_cursor == ("-b" in words):
            raise AssertionError(f"journalctl {argv[1:]}: this stand-in knows only -u UNIT --no-pager "
                                 "-o short-iso and one of --after-cursor=C or -b")
        name = argv[argv.index("-u") + 1]
        after = next((int(a.split("=s=", 1)[1]) for a in argv if a.startswith("--after-cursor=")), 0)
        lines = [ln.split(" ", 1)[1] for ln in self.journal_lines.get(name, []) if int(ln.split(" ", 1)[0]) > after]
        return self._done(argv, "".join(f"2026-12-02T00:00:00+0000 host sglang[1]: {ln}\n" for ln in lines))

    @staticmethod
    def _done(argv: list[str], out: str = "", code: int = 0, err: str = "") -> subprocess.CompletedProcess:
        return subprocess.CompletedProcess(argv, code, out, err)
