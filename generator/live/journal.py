"""A unit's state and its journal since its last start, in full (``gen status``).

The last start is the unit's current ``InvocationID``: systemd stamps every line the
service writes with ``_SYSTEMD_INVOCATION_ID`` and its own messages about that run
(started, exited, failed) with ``INVOCATION_ID``. Both together are exactly the last
run, however long it logged; ``journalctl -n 100`` cut incident 2's traceback short.
"""

from __future__ import annotations

from dataclasses import dataclass

from testinfra.host import Host as InfraHost

from generator.errors import quoted
from generator.live.remote import unit_properties


@dataclass(frozen=True)
class UnitState:
    """The systemd state of one unit, as ``systemctl show`` reports it."""

    unit: str
    props: tuple[tuple[str, str], ...]

    def get(self, key: str) -> str:
        """One property ('' when systemd did not report it)."""
        return dict(self.props).get(key, "")

    @property
    def healthy(self) -> bool:
        """Active and running, never restarted by systemd."""
        return (self.get("ActiveState"), self.get("SubState")) == ("active", "running") \
            and self.get("NRestarts") in ("0", "")

    def summary(self) -> str:
        """One line: load/active/sub state, result, restarts, main PID and exit status."""
        g = self.get
        text = (f"{g('LoadState')} {g('ActiveState')} ({g('SubState')}), result {g('Result')}, "
                f"unit file {g('UnitFileState') or 'none'}, restarts {g('NRestarts') or '0'}")
        if g("MainPID") not in ("", "0"):
            text += f", main PID {g('MainPID')}"
        if g("ExecMainCode") not in ("", "0"):
            text += f", last exit status {g('ExecMainStatus')}"
        return text


def unit_state(host: InfraHost, unit: str) -> UnitState:
    """Read UNIT's state from the host."""
    return UnitState(unit, tuple(sorted(unit_properties(host, unit).items())))


def last_run_journal(host: InfraHost, state: UnitState) -> str:
    """Every journal line of the unit's last run, this boot (no cut at a fixed count)."""
    invocation = state.get("InvocationID")
    if not invocation:
        return f"(no run of {state.unit} since boot: systemd has no invocation id for it)"
    out = host.run("journalctl -b --no-pager -o cat %s + %s",
                   f"_SYSTEMD_INVOCATION_ID={invocation}", f"INVOCATION_ID={invocation}")
    text = out.stdout.rstrip("\n")
    if out.rc != 0:
        text += f"\n(journalctl exit {out.rc}: {out.stderr.strip()})"
    return text or f"(the journal holds no lines for invocation {invocation})"


def status_text(host: InfraHost, state: UnitState, with_journal: bool) -> str:
    """The summary, and the last run's journal when asked or when the unit is unhealthy."""
    text = f"{state.unit}: {state.summary()}"
    if with_journal or not state.healthy:
        # The journal is the service's own text (it may log what clients sent): quoted.
        text += f"\n--- journal of {state.unit} since its last start ---\n" + quoted(last_run_journal(host, state))
    return text
