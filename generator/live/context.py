"""What every live check gets: the plan, a testinfra host, and each unit's state read once."""

from __future__ import annotations

from dataclasses import dataclass, field

from testinfra.host import Host as InfraHost

from generator.live.journal import UnitState, unit_state
from generator.live.plan import HostPlan


@dataclass
class HostContext:
    """One host under check; unit states are read on first use and then reused."""

    plan: HostPlan
    host: InfraHost
    _states: dict[str, UnitState] = field(default_factory=dict)

    def state(self, unit: str) -> UnitState:
        """The systemd state of UNIT (read from the host once per verify run)."""
        if unit not in self._states:
            self._states[unit] = unit_state(self.host, unit)
        return self._states[unit]
