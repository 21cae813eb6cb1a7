"""Every name gen derives from a model, host or service is unique after it is derived.

A name becomes other names: a file (``models/<m>.yaml``, ``output/<host>/``,
``etc/systemd/system/sglang-<svc>.service``), an Ansible inventory group
(``gen_group_<model>`` with every character Ansible refuses as ``_``), an inventory host
(a YAML key). Two distinct names that derive one of those are one thing to whoever reads
it: ``deepseek-v3-bf16`` and ``deepseek_v3_bf16`` were one group, so one multi-node
deployment was never rolled out and the play succeeded; ``Qwen`` and ``qwen`` are one file
on a case-insensitive checkout (macOS, Windows). So each derivation is checked, and a
collision is an error at both names:

* R013: two files of ``hosts/``, ``models/`` or ``templates/`` whose names differ only in
  case (:func:`case_collisions`, used by the folder readers);
* R014: two services of one host whose names differ only in case (their unit and files);
* R015: two multi-node models whose Ansible groups are one (:func:`ansible_group`);
* R016: a host named like an inventory group (Ansible's ``all``/``ungrouped``, gen's
  ``sglang_hosts``, ``gen_group_*`` and ``gen_rollout_*``): ``hosts: gen_group_x`` would take it in too.

A name a YAML reader takes for a boolean, number or date (``on``, ``1_000``) is refused by
the name check itself (``systemd.name_problem``, S007): Ansible read the hosts ``yes`` and
``on`` as one key, ``True``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from generator.errors import Diagnostic, Position

# The inventory group of every rendered host, and the one of each multi-node deployment.
HOSTS_GROUP = "sglang_hosts"
GROUP_PREFIX = "gen_group_"
# The inventory group of each rollout wave of single-node services (emit/ansible/inventory.py).
WAVE_PREFIX = "gen_rollout_"
# Group names Ansible itself defines: a host of that name is matched by every play of it.
ANSIBLE_GROUPS = frozenset({"all", "ungrouped"})
_NOT_IN_GROUP = re.compile(r"[^A-Za-z0-9_]")


def ansible_group(model: str) -> str:
    """The inventory group of multi-node model ``model`` (Ansible wants ``[A-Za-z0-9_]`` names)."""
    return GROUP_PREFIX + _NOT_IN_GROUP.sub("_", model)


def case_collisions(entries: Iterable[tuple[str, Position]], what: str) -> list[Diagnostic]:
    """R013 at each of two entries (name, where) whose names are equal once case-folded."""
    by_key: dict[str, list[tuple[str, Position]]] = {}
    for name, pos in entries:
        by_key.setdefault(name.casefold(), []).append((name, pos))
    out: list[Diagnostic] = []
    for same in by_key.values():
        if len(same) < 2:
            continue
        for name, pos in same:
            others = ", ".join(f"'{n}' ({p})" for n, p in same if (n, p) != (name, pos))
            out.append(Diagnostic(pos, "R013", f"{what} '{name}' differs only in case from {others}: one file on "
                                  "a case-insensitive checkout (macOS, Windows)", hint="rename one of them"))
    return out


def service_collisions(host: str, services: Sequence[tuple[str, Position]]) -> list[Diagnostic]:
    """R014 at each of two services of ``host`` whose names differ only in case."""
    by_key: dict[str, list[tuple[str, Position]]] = {}
    for name, pos in services:
        by_key.setdefault(name.casefold(), []).append((name, pos))
    out = []
    for same in by_key.values():
        if len({n for n, _ in same}) < 2:
            continue  # the same name twice is R001
        for name, pos in same:
            other, where = next((n, p) for n, p in same if n != name)
            out.append(Diagnostic(pos, "R014", f"service '{name}' of host '{host}' differs only in case from "
                                  f"service '{other}' ({where}): sglang-{name}.service and sglang-{other}.service "
                                  f"are one file in output/{host}/ on a case-insensitive checkout",
                                  hint="rename one of them"))
    return out


def group_collisions(models: Sequence[tuple[str, Position]]) -> list[Diagnostic]:
    """R015 at each of two multi-node models (name, where) whose Ansible groups are one."""
    by_group: dict[str, list[tuple[str, Position]]] = {}
    for name, pos in models:
        by_group.setdefault(ansible_group(name), []).append((name, pos))
    out = []
    for group, same in by_group.items():
        for name, pos in same:
            for other, where in same:
                if other != name:
                    out.append(Diagnostic(pos, "R015", f"multi-node model '{name}' and '{other}' ({where}) are "
                                          f"one Ansible group, {group}: one of the two deployments would never "
                                          "be rolled out", hint="rename one of them (letters, digits and '_' "
                                          "tell groups apart; '-' and '.' become '_')"))
    return out


def host_group_problem(host: str, groups: Iterable[str]) -> str | None:
    """Why inventory host ``host`` would be matched as a group (R016), or None. ``groups``:
    the multi-node groups the inventory has."""
    if host in ANSIBLE_GROUPS or host == HOSTS_GROUP:
        return f"'{host}' is the name of an inventory group ({'Ansible' if host in ANSIBLE_GROUPS else 'gen'}'s)"
    if host in groups or host.startswith(GROUP_PREFIX):
        return f"'{host}' is named like a multi-node group ({GROUP_PREFIX}<model>) of the Ansible inventory"
    if host.startswith(WAVE_PREFIX):
        return f"'{host}' is named like a rollout wave's group ({WAVE_PREFIX}<n>) of the Ansible inventory"
    return None
