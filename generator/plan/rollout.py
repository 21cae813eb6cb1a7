"""The rollout plan: which hosts roll out together, in which order, as Ansible's ``serial`` lists.

Input: every single-node service as a :class:`Replica` (host, model), and each model's
:class:`generator.load.rollout.RolloutSettings`. Output: one :class:`Wave` per set of
models that share ``canary``, ``batch`` and ``max_fail_percentage`` (one play of
``site.yml`` each), with its hosts in rollout order and the batch sizes Ansible's
``serial`` takes. Multi-node models are not in it: each is one play of its own, every
rank in one batch (their ranks restart together).

Batches: the first ``canary`` hosts (by name) on their own, then batches of ``batch``
hosts (a percentage of the wave's hosts, at least 1). A host joins a batch only while,
for every model it serves, fewer hosts of that model than the model's
``max_unavailable`` are in the batch already; a host that does not fit waits for the
next batch (in name order), so replicas of one model are never more than
``max_unavailable`` down at once. Services of one model on one host count as one host:
they restart with it (A004 says so).

Deterministic: the same replicas and settings give the same waves, hosts and sizes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from generator.errors import Diagnostic, Position, Severity
from generator.load.rollout import RolloutSettings


@dataclass(frozen=True)
class Replica:
    """One single-node service: its host, its model, and where the service names its model."""

    host: str
    model: str
    service: str
    pos: Position | None = None


@dataclass(frozen=True)
class Wave:
    """One play: the models it rolls out, its hosts in order, the batch sizes (``serial``)."""

    models: tuple[str, ...]
    hosts: tuple[str, ...]
    serial: tuple[int, ...]
    settings: RolloutSettings

    @property
    def batches(self) -> tuple[tuple[str, ...], ...]:
        """The hosts of each batch, in order (what ``serial`` makes of ``hosts``)."""
        out, start = [], 0
        for size in self.serial:
            out.append(self.hosts[start:start + size])
            start += size
        return tuple(out)


@dataclass(frozen=True)
class RolloutPlan:
    """Every wave, each single-node model's ``max_unavailable`` as a count, and the warnings."""

    waves: tuple[Wave, ...]
    max_unavailable: tuple[tuple[str, int], ...]
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def largest_batch(self) -> int:
        """The most hosts any batch rolls out at once (what Ansible's forks should allow)."""
        return max((size for wave in self.waves for size in wave.serial), default=1)


def batches(hosts: Sequence[str], models_of: Mapping[str, frozenset[str]], caps: Mapping[str, int],
            canary: int, batch: int) -> list[list[str]]:
    """HOSTS (in order) as batches: CANARY hosts first, then BATCH each, within every model's cap."""
    remaining = list(hosts)
    out: list[list[str]] = []
    while remaining:
        target = canary if not out and canary > 0 else batch
        chosen: list[str] = []
        used: Counter[str] = Counter()
        for host in remaining:
            if len(chosen) == target:
                break
            if all(used[m] < caps[m] for m in models_of[host]):
                chosen.append(host)
                used.update(models_of[host])
        # The first remaining host always fits an empty batch (every cap is at least 1).
        taken = set(chosen)
        remaining = [h for h in remaining if h not in taken]
        out.append(chosen)
    return out


def plan_rollout(replicas: Sequence[Replica], settings: Mapping[str, RolloutSettings]) -> RolloutPlan:
    """The waves of REPLICAS under each model's SETTINGS (a model absent from SETTINGS: defaults)."""
    default = RolloutSettings()
    by_model: dict[str, set[str]] = {}
    per_host: Counter[tuple[str, str]] = Counter()
    for r in replicas:
        by_model.setdefault(r.model, set()).add(r.host)
        per_host[(r.host, r.model)] += 1
    caps = {m: settings.get(m, default).max_unavailable.of(len(hosts)) for m, hosts in by_model.items()}
    diags: list[Diagnostic] = []
    warned: set[tuple[str, str]] = set()
    for r in replicas:  # two replicas on one host go down with it, whatever the cap
        key = (r.host, r.model)
        if per_host[key] > caps[r.model] and key not in warned and r.pos is not None:
            warned.add(key)
            diags.append(Diagnostic(
                r.pos, "A004", f"host '{r.host}' runs {per_host[key]} services of model '{r.model}': they restart "
                f"together when the host rolls out, more than its max_unavailable {caps[r.model]}",
                Severity.WARNING, "put the replicas of a model on different hosts, or raise its "
                                  "rollout.max_unavailable"))
    groups: dict[tuple[int, str, int], list[str]] = {}
    for model in sorted(by_model):
        groups.setdefault(settings.get(model, default).play_key, []).append(model)
    waves = []
    for models in sorted(groups.values()):
        wave_settings = settings.get(models[0], default)
        hosts = sorted({h for m in models for h in by_model[m]})
        models_of = {h: frozenset(m for m in models if h in by_model[m]) for h in hosts}
        made = batches(hosts, models_of, caps, wave_settings.canary, wave_settings.batch.of(len(hosts)))
        waves.append(Wave(tuple(models), tuple(h for b in made for h in b), tuple(len(b) for b in made),
                          wave_settings))
        canary_at = next((s.position("canary") for s in (settings.get(m, default) for m in models)
                          if s.position("canary") is not None), None)
        if canary_at is not None and len(hosts) > 1 and wave_settings.canary >= len(hosts):
            diags.append(Diagnostic(
                canary_at, "A002", f"canary {wave_settings.canary} takes all {len(hosts)} host(s) of model(s) "
                f"{', '.join(models)} at once: no batch follows, so nothing is proven first",
                Severity.WARNING, f"write canary: 1 (or at most {len(hosts) - 1})"))
    return RolloutPlan(tuple(waves), tuple(sorted(caps.items())), tuple(diags))


def multinode_override_warnings(models: Sequence[tuple[str, bool, Position | None]]) -> list[Diagnostic]:
    """A003 for each multi-node model (name, has ``rollout:``, where) that writes ``rollout:``."""
    return [Diagnostic(pos, "A003", f"model '{name}' is multi-node: its ranks always restart together, as one "
                       "unit, so its rollout settings do not apply", Severity.WARNING,
                       "remove its rollout: section")
            for name, has, pos in models if has and pos is not None]
