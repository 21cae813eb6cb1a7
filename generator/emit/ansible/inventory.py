"""The Ansible inventory: every rendered host, its files, services and rollout groups.

Per host: how to reach it (``ansible_host``/``ansible_user``/``ansible_port``), the
interpreter of its SGLang (``gen_python``), the digest of its ``output/`` tree
(``gen_digest``, checked by the playbook's first task), every rendered file with its mode
and the service it belongs to (the playbook compares the live file's sha1 with the one in
``output/`` before it touches anything), and per service what the rollout needs: its
unit and files, its health URL, TimeoutStartSec in seconds, ``enabled``, its multi-node
group and rank, the preflight payload (where its staged unit and environment file are:
the host reads argv and environment from them) and the sandbox spec (placed GPUs, model
folder, the staged unit to translate).

Every multi-node deployment becomes one inventory group ``gen_group_<model>`` (under
``sglang_hosts``), listed in ``gen_groups`` with its hosts in rank order, so
``--limit gen_group_<model>`` rolls out exactly that group. Every wave of single-node
services (:mod:`generator.plan.rollout`) becomes a group ``gen_rollout_<n>`` listing its
hosts in rollout order, the order Ansible's ``serial`` batches take them in.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from generator.emit.ansible.yamltext import GenJinja
from generator.emit.render import (
    ENV_DIR,
    WAIT_READY,
    HostRender,
    RenderedService,
    env_path,
    health_address,
    secret_env_path,
    unit_path,
)
from generator.emit.secrets import credential_path
from generator.emit.writer import MANAGED_LIST
from generator.load.addresses import machine
from generator.load.names import HOSTS_GROUP, WAVE_PREFIX, ansible_group
from generator.load.resolve import default_timeout_start_min
from generator.plan.rollout import RolloutPlan

GROUP = HOSTS_GROUP
# Where a machine keeps the list of what gen put there (output/<host>/.gen-managed + previous sets).
HOST_MANAGED_LIST = f"/{ENV_DIR}/{MANAGED_LIST}"
PREVIOUS_DIR = "var/lib/gen/previous"
# The rendered files of a changed service are staged here before anything live changes.
STAGE_DIR = "/var/lib/gen/next"
# argv[0:3] is "<python> -m sglang.launch_server"; SGLang's parser sees the rest.
PROGRAM_WORDS = 3


def _mode(mode: int) -> str:
    return f"{mode:04o}"  # a string: Ansible reads a bare 0644 as the integer 420


def group_name(model: str) -> str:
    """The inventory group of a multi-node deployment: load/names.ansible_group, whose
    uniqueness the load checks (R015)."""
    return ansible_group(model)


def _b64(doc: Any) -> str:
    return base64.b64encode(json.dumps(doc, sort_keys=True).encode()).decode()


def preflight_payload(services: Sequence[dict[str, Any]]) -> str:
    """The on-host ``preflight`` mode's argument (base64 JSON of the services)."""
    return _b64({"services": list(services)})


def staged_preflight_entry(rs: RenderedService) -> dict[str, Any]:
    """The playbook's preflight of one service: only where its staged files are."""
    name = rs.placement.service.name
    return {"name": name, "unit_file": f"{STAGE_DIR}/{unit_path(name)}",
            "env_map": {f"/{env_path(name)}": f"{STAGE_DIR}/{env_path(name)}"}}


def sandbox_entry(rs: RenderedService, staged: bool) -> dict[str, Any]:
    """The sandbox check's spec for one service; STAGED: read the unit from the staging folder."""
    name = rs.placement.service.name
    base = STAGE_DIR if staged else ""
    return {"name": name, "unit_file": f"{base}/{unit_path(name)}",
            "env_map": {f"/{env_path(name)}": f"{base}/{env_path(name)}"} if staged else {},
            "gpu_bus_ids": [g.pci_bus_id for g in rs.placement.gpus],
            "gpu_indices": [g.index for g in rs.placement.gpus],
            "model": rs.placement.model.weights.path}


def _service(rs: RenderedService) -> dict[str, Any]:
    spec, model, node = rs.placement.service, rs.placement.model, rs.placement.cluster
    minutes = spec.timeout_start_min or default_timeout_start_min(model)
    return {
        "name": spec.name,
        "unit": spec.unit,
        "port": spec.port,
        "health_url": f"http://{health_address(spec.listen)}:{spec.port}/health",
        "timeout_start_s": minutes * 60,
        "enabled": spec.enabled,
        "model": model.name,
        "group": model.name if node is not None else "",
        "rank": node.rank if node is not None else 0,
        "paths": [f"/{unit_path(spec.name)}", f"/{env_path(spec.name)}"],
        # Argv, environment and checkpoint paths are read on the host from the staged files,
        # exactly what would be installed (never from this inventory).
        "preflight": preflight_payload([staged_preflight_entry(rs)]),
        "sandbox": _b64({"services": [sandbox_entry(rs, staged=True)]}),
    }


def _target(render: HostRender) -> tuple[str, int]:
    """The machine an inventory reaches (as the same-address check R011 compares it)."""
    return machine(render.host.address, render.host.ssh_port)


def host_list_path(name: str, shared: bool) -> str:
    """The machine's list of what inventory NAME put there: its own file when the machine is shared.

    One list per inventory on a shared machine, so that each inventory's dropped-services
    step sees only what it put there itself (never the other inventory's units).
    """
    return HOST_MANAGED_LIST + (f".{name}" if shared else "")


def partner_paths(partners: Sequence[HostRender]) -> list[str]:
    """What the other inventories of the same machine render there (never removed by this one)."""
    paths = {f.relpath for p in partners for f in p.tree.files if f.relpath != MANAGED_LIST}
    paths |= {f"{PREVIOUS_DIR}/{rs.placement.service.unit}" for p in partners for rs in p.services}
    return sorted(paths)


def host_vars(render: HostRender, partners: Sequence[HostRender] = (), digest: str = "") -> dict[str, Any]:
    """One host's inventory entry: how to reach it, its files and its services.

    PARTNERS: the other inventories reaching the same machine (declared with ssh.shared_with);
    DIGEST: of its output/ tree, as gen ansible saw it (:mod:`.digest`).
    """
    host = render.host
    rendered = {f.relpath: f for f in render.tree.files if f.relpath != MANAGED_LIST}
    owned = [rs for rs in render.services if rs.unit_path in rendered]
    owner = {p: rs.placement.service.unit for rs in owned for p in (rs.unit_path, rs.env_path)}
    files: list[dict[str, Any]] = []
    for relpath in sorted(rendered):
        entry: dict[str, Any] = {"path": relpath, "mode": _mode(rendered[relpath].mode)}
        if relpath.startswith("etc/systemd/system/"):
            entry["unit"] = relpath.rsplit("/", 1)[1]
        # The readiness helper runs only at start: changing it restarts nothing.
        entry["service"] = owner.get(relpath, "") if relpath != WAIT_READY else ""
        files.append(entry)
    return {
        "ansible_host": host.address,
        "ansible_user": host.ssh_user,
        "ansible_port": host.ssh_port,
        "gen_python": host.sglang.python,
        "gen_digest": digest,
        "gen_host_list": host_list_path(host.name, bool(partners)),
        # The inventories whose host lists may be on this machine beside this one's own.
        "gen_shared_with": sorted(host.shared_with),
        "gen_keep": partner_paths(partners),
        "gen_files": files,
        "gen_services": [_service(rs) for rs in owned],
        # Never rendered or copied: the playbook only checks them (root, 0600).
        # Secret files the units read (secret_env, secret_args): asserted, never copied.
        "gen_secret_env": ["/" + secret_env_path(rs.placement.service.name) for rs in owned
                           if rs.placement.service.secret_env]
                          + ["/" + credential_path(rs.placement.service.name) for rs in owned
                             if rs.placement.service.secret_args],
    }


def groups(renders: Sequence[HostRender]) -> list[dict[str, Any]]:
    """Every multi-node deployment among RENDERS: its name, inventory group and hosts by rank."""
    ranks: dict[str, dict[int, str]] = {}
    for render in renders:
        for rs in render.services:
            node = rs.placement.cluster
            if node is not None:
                ranks.setdefault(rs.placement.model.name, {})[node.rank] = render.host.name
    return [{"name": model, "group": group_name(model), "hosts": [by_rank[r] for r in sorted(by_rank)]}
            for model, by_rank in sorted(ranks.items())]


def wave_group(index: int) -> str:
    """The inventory group of the I-th wave of single-node services (its hosts in rollout order)."""
    return f"{WAVE_PREFIX}{index}"


def inventory(renders: Sequence[HostRender], output_rel: str, digests: dict[str, str] | None = None,
              plan: RolloutPlan | None = None) -> dict[str, Any]:
    """The inventory: every rendered host in name order, one child group per multi-node deployment
    and one per wave of PLAN (its hosts in rollout order: Ansible's serial batches follow it).

    DIGESTS: host -> the digest of its output/ tree (checked by the playbook's first task).
    """
    ordered = sorted(renders, key=lambda r: r.host.name)
    found = groups(ordered)
    children = {g["group"]: {"hosts": {h: None for h in g["hosts"]}} for g in found}
    waves = plan.waves if plan is not None else ()
    for i, wave in enumerate(waves, 1):
        children[wave_group(i)] = {"hosts": {h: None for h in wave.hosts}}
    def partners(r: HostRender) -> list[HostRender]:
        return [o for o in ordered if o is not r and _target(o) == _target(r)]
    top: dict[str, Any] = {"hosts": {r.host.name: host_vars(r, partners(r), (digests or {}).get(r.host.name, ""))
                                     for r in ordered}}
    if children:
        top["children"] = children
    # The output folder's name is data (a checkout path may hold braces); only gen's own join is Jinja.
    return {"all": {"vars": {"gen_output_rel": output_rel,
                             "gen_output_dir": GenJinja("{{ inventory_dir }}/{{ gen_output_rel }}"),
                             "gen_groups": found,
                             # Replicas of each single-node model that may restart at once (checked per batch).
                             "gen_max_unavailable": dict(plan.max_unavailable) if plan is not None else {},
                             "gen_largest_batch": plan.largest_batch if plan is not None else 1},
                    "children": {GROUP: top}}}
