"""What the live host must look like, derived from a render (the same data gen wrote).

``host_plan(render)`` turns a :class:`generator.emit.render.HostRender` into plain frozen
dataclasses the checks read: every managed file with its text, and per service the
unit, port, URLs, argv, environment, model folders and GPUs. Nothing here talks to
the host.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.checkpoint.attach import snapshot_of
from generator.checkpoint.snapshot import ModelSnapshot
from generator.emit.render import (
    ENV_DIR,
    UNIT_DIR,
    HostRender,
    RenderedService,
    health_address,
    secret_env_path,
)
from generator.emit.secrets import CREDSTORE_DIR, SECRET_ENV_DIR, credential_path, runtime_argv
from generator.emit.writer import MANAGED_LIST
from generator.load.resolve import Gpu, HostFacts


@dataclass(frozen=True)
class ExpectedFile:
    """A managed file: absolute path on the host and the exact text gen rendered."""

    path: str
    text: str
    mode: int


@dataclass(frozen=True)
class MemoryPrediction:
    """What gen predicted for one GPU of a service (``generator.plan.memory``), to compare live."""

    pin: str | None
    max_total_num_tokens: int | None  # None without a checkpoint snapshot
    mem_fraction_static: float
    weights_gib: float
    free_before_load_gib: float
    free_before_load_assumed: bool


def memory_prediction(rs: RenderedService) -> MemoryPrediction | None:
    """The service's memory prediction as plain data, or None when it was not sized."""
    outcome = rs.memory
    if outcome is None:
        return None
    if outcome.plan is not None:
        p = outcome.plan
        return MemoryPrediction(p.pin, p.max_total_num_tokens, p.mem_fraction_static, p.weights_gib,
                                p.free_before_load_gib, p.free_before_load_assumed)
    if outcome.fit is not None:
        f = outcome.fit
        return MemoryPrediction(None, None, f.mem_fraction_static, f.weights_gib, f.free_before_load_gib,
                                f.free_before_load_assumed)
    return None


@dataclass(frozen=True)
class CheckpointExpect:
    """What a checkpoint folder on the host must hold, from the model's snapshot.

    ``files``: (name, sha256) of the small files the snapshot hashed (config.json, the index,
    generation_config.json); ``shards``: the safetensors files it named. Empty when the
    snapshot has no hash (a ``published`` snapshot assembled from cited files).
    """

    snapshot: str  # catalogs/models/<model>.json
    files: tuple[tuple[str, str], ...]
    shards: tuple[str, ...]


def checkpoint_expect(snapshot: ModelSnapshot | None, role: str) -> CheckpointExpect | None:
    """The expectation for the model's (``role`` "checkpoint") or draft's folder, None without facts."""
    facts = None if snapshot is None else snapshot.checkpoint if role == "checkpoint" else snapshot.draft
    if snapshot is None or facts is None:
        return None
    files = tuple(sorted((name, sha) for name, sha in facts.file_hashes.items()
                         if sha is not None and name.endswith(".json")))
    return CheckpointExpect(snapshot.display, files, facts.shard_files)


@dataclass(frozen=True)
class ServicePlan:
    """One service as rendered: what systemd must run and where it must answer."""

    name: str
    unit: str
    unit_path: str
    env_path: str
    secret_env_path: str
    secret_env: bool  # the unit reads secret_env_path: it must exist (root, 0600)
    credential_path: str  # secret SGLang options (secret_args), loaded as a credential
    secret_args: tuple[str, ...]  # when not empty, credential_path must exist (root, 0600)
    enabled: bool
    listen: str
    port: int
    base_url: str
    served_model_name: str
    argv: tuple[str, ...]
    environment: tuple[tuple[str, str], ...]
    model_path: str
    draft_path: str | None
    speculative_algorithm: str | None
    gpu_bus_ids: tuple[str, ...]
    cuda_visible_devices: str
    memory: MemoryPrediction | None = None  # what SGLang should report in /get_server_info
    model_expect: CheckpointExpect | None = None  # from catalogs/models/<model>.json
    draft_expect: CheckpointExpect | None = None


@dataclass(frozen=True)
class HostPlan:
    """One host as rendered: its files, services, GPUs and SGLang install."""

    name: str
    address: str
    ssh_user: str | None  # None: left to the operator's ssh config
    ssh_port: int | None
    python: str
    sglang_version: str
    sglang_commit: str | None
    source_dir: str | None
    files: tuple[ExpectedFile, ...]
    services: tuple[ServicePlan, ...]
    host_gpus: tuple[tuple[int, str], ...]  # (index, bus id) of GPUs the host keeps
    vm_gpus: tuple[tuple[int, str, str], ...]  # (index, bus id, vm) given to VMs
    retired: tuple[str, ...]
    gpus: tuple[Gpu, ...] = ()  # every inventory GPU with its facts (memory, capability, NUMA)
    numa: tuple[tuple[int, str], ...] = ()  # (node, CPU list) as the inventory writes them
    facts: HostFacts = HostFacts()  # the inventory's facts section

    def service(self, name: str) -> ServicePlan:
        """The service called NAME (KeyError when the host has none)."""
        for svc in self.services:
            if svc.name == name:
                return svc
        raise KeyError(name)


def _service_plan(rs: RenderedService) -> ServicePlan:
    """Expectations for one rendered service."""
    spec, model = rs.placement.service, rs.placement.model
    spec_alg = model.speculative.algorithm if model.speculative else None
    draft = model.speculative.draft_model_path if model.speculative else None
    return ServicePlan(
        name=spec.name,
        unit=spec.unit,
        unit_path="/" + rs.unit_path,
        env_path="/" + rs.env_path,
        secret_env_path="/" + secret_env_path(spec.name),
        secret_env=spec.secret_env,
        credential_path="/" + credential_path(spec.name),
        secret_args=spec.secret_args,
        enabled=spec.enabled,
        listen=spec.listen,
        port=spec.port,
        base_url=f"http://{health_address(spec.listen)}:{spec.port}",
        # SGLang names the model by --served-model-name, else by its --model-path.
        served_model_name=model.served_model_name or model.weights.path,
        argv=runtime_argv(rs.argv.argv, spec.unit),  # ${CREDENTIALS_DIRECTORY} as systemd sets it
        environment=rs.environment,
        model_path=model.weights.path,
        draft_path=draft,
        speculative_algorithm=spec_alg,
        gpu_bus_ids=tuple(g.pci_bus_id for g in rs.placement.gpus),
        cuda_visible_devices=rs.placement.cuda_visible_devices,
        memory=memory_prediction(rs),
        model_expect=checkpoint_expect(snapshot_of(model), "checkpoint"),
        draft_expect=checkpoint_expect(snapshot_of(model), "draft") if draft else None,
    )


def host_plan(render: HostRender) -> HostPlan:
    """Everything the live checks compare against, from one host's render."""
    host = render.host
    vm = dict(host.vm_gpus)
    files = tuple(
        ExpectedFile("/" + f.relpath, f.text, f.mode)
        for f in render.tree.files
        if f.relpath != MANAGED_LIST  # the list lives in output/ only, never on the host
    )
    user, port = host.ssh_explicit()  # an ssh config may supply the rest
    return HostPlan(
        name=host.name,
        address=host.address,
        ssh_user=user,
        ssh_port=port,
        python=host.sglang.python,
        sglang_version=render.catalog.version,
        sglang_commit=host.sglang.commit or render.catalog.commit,
        source_dir=host.sglang.source_dir,
        files=files,
        services=tuple(_service_plan(rs) for rs in render.services),
        host_gpus=tuple((g.index, g.pci_bus_id) for g in host.gpus if g.index not in vm),
        vm_gpus=tuple((g.index, g.pci_bus_id, vm[g.index]) for g in host.gpus if g.index in vm),
        retired=host.retired,
        gpus=host.gpus,
        numa=host.numa,
        facts=host.facts,
    )


MANAGED_GLOBS = ((f"/{UNIT_DIR}", "sglang-*.service"), (f"/{ENV_DIR}", "*.env"),
                 # secret files: allowed only where a unit reads them (a dropped service's stay behind)
                 (f"/{SECRET_ENV_DIR}", "*.env"), (f"/{CREDSTORE_DIR}", "sglang-*.yaml"))
