"""Render a host's planned services into systemd units and environment files (jinja2).

Templating only: placement, cluster joins, flag and rule checks happened before
(generator/pipeline/host.py), and :func:`render_host` takes their result, a
:class:`generator.plan.services.PlannedHost`. Templates live in the repository's ``templates/`` folder and run with StrictUndefined:
a missing variable is a bug, never an empty string. Every systemd escape happens in the
pure functions of :mod:`generator.systemd`, exposed to templates as filters. A template
error is re-raised with the template's file and line.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Sequence

import jinja2
import jinja2.sandbox

from generator import __version__
from generator.systemd_settings import JINJA_FILTERS, comment_value
from generator.plan.argv import ServiceArgv
from generator.sglang.catalog import Catalog
from generator.sglang.devices import devices_path
from generator.errors import TemplateError
from generator.plan.memory_check import MemoryOutcome
from generator.plan.placement import Placement
from generator.plan.services import PlannedHost, PlannedService
from generator.load.resolve import Host, default_timeout_start_min
from generator.emit.writer import MARKER, HostTree, RenderedFile
from generator.emit.secrets import load_credentials, secret_env_path
from generator.emit.templates import FOLDER, Templates
from generator.checkpoint.attach import snapshot_of
from generator.load.captured import recorded_digest

UNIT_DIR = "etc/systemd/system"
ENV_DIR = "etc/sglang"
WAIT_READY = "usr/local/libexec/gen/sglang-wait-ready"


@dataclass(frozen=True)
class RenderedService:
    """Everything rendered for one service, kept for later passes (verify, preflight)."""

    placement: Placement
    argv: ServiceArgv
    unit_path: str  # relative to the host's /
    env_path: str
    environment: tuple[tuple[str, str], ...]
    memory: MemoryOutcome | None = None  # what SGLang will size for it (gen show, gen verify)


@dataclass(frozen=True)
class HostRender:
    """A host's rendered tree plus what each service was rendered from."""

    host: Host
    catalog: Catalog
    tree: HostTree
    services: tuple[RenderedService, ...]


def unit_path(service_name: str) -> str:
    """Where a service's unit lives on the host (relative to /)."""
    return f"{UNIT_DIR}/sglang-{service_name}.service"


def env_path(service_name: str) -> str:
    """Where a service's environment file lives on the host (relative to /)."""
    return f"{ENV_DIR}/{service_name}.env"


@functools.lru_cache(maxsize=8)
def _environment(templates: Templates) -> jinja2.Environment:
    """The sandboxed environment of one set of template texts (kept per content: equal texts,
    one environment, each template compiled once per process)."""
    texts = templates.mapping()

    def source(name: str) -> tuple[str, str, Callable[[], bool]] | None:
        # Jinja gets the texts load_templates read (emit/templates.py), never a path to open;
        # the file name is for its messages and tracebacks only.
        return (texts[name], f"{FOLDER}/{name}", lambda: True) if name in texts else None

    # templates/ is repo content a pull request controls, and `gen check` renders it in CI:
    # a plain Environment lets `{{ cycler.__init__.__globals__.os.system(...) }}` run code.
    # The immutable sandbox refuses dunder attributes and mutating calls (issue 10 attack).
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        loader=jinja2.FunctionLoader(source),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        auto_reload=False,  # the texts never change under an environment
    )
    env.filters.update(JINJA_FILTERS)
    return env


def render_template(templates: Templates, name: str, context: dict[str, Any]) -> str:
    """Render one template; errors name the template file and line."""
    return _render(_environment(templates), name, context)


# A template is code from the repository: what one render may cost. gen's own take well
# under a millisecond and a few KB; a loop of loops or "x".ljust(3e9) took minutes or
# gigabytes (issue 22 item 2). Each bound ends the run with a TemplateError (exit 3).
RENDER_CPU_SECONDS = 5.0
# ...and all of a run's renders in one process together: 5 s a file is far more than the
# milliseconds a template takes, and times 3,000 files it would be hours of CI.
RUN_CPU_SECONDS = 30.0
RENDER_MEMORY_BYTES = 1 << 30  # address space a render may add to the process
MAX_RENDERED_BYTES = 1 << 20  # one rendered file
_SPENT = [0.0]  # CPU seconds this process's renders took since the run began (reset_budget)


def reset_budget() -> None:
    """A new run begins in this process (the fleet calls it in each worker): its renders
    start with the whole :data:`RUN_CPU_SECONDS`."""
    _SPENT[0] = 0.0


class _OverBudget(TemplateError):
    """Raised in the render by the CPU timer; :func:`_render` turns it into the TemplateError
    that names the template. A TemplateError itself (a GenError and a RuntimeError, exit 3),
    so that even where it escaped it would be reported as the template's error, not a bug."""


def _on_timer(signum: int, frame: object) -> None:
    raise _OverBudget()


def _address_space() -> int | None:
    """This process's virtual memory size in bytes (Linux), None where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def _budget() -> Iterator[None]:
    """Run a render under :data:`RENDER_CPU_SECONDS` of CPU (a SIGPROF timer, on the main thread
    only: signals go there) and :data:`RENDER_MEMORY_BYTES` more address space (RLIMIT_AS,
    put back after). Where neither can be set, the render runs as before."""
    timer = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    left = min(RENDER_CPU_SECONDS, RUN_CPU_SECONDS - _SPENT[0])
    if left <= 0:
        raise _OverBudget()
    old_handler = signal.signal(signal.SIGPROF, _on_timer) if timer else None
    started = time.process_time()
    if timer:
        signal.setitimer(signal.ITIMER_PROF, left)
    limits, used = None, _address_space()
    if used is not None:
        with contextlib.suppress(ValueError, OSError, AttributeError):
            limits = resource.getrlimit(resource.RLIMIT_AS)
            hard = limits[1]
            want = used + RENDER_MEMORY_BYTES
            if hard == resource.RLIM_INFINITY or want < hard:
                resource.setrlimit(resource.RLIMIT_AS, (want, hard))
            else:
                limits = None
    try:
        yield
    finally:
        _SPENT[0] += time.process_time() - started
        if timer:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, old_handler)
        if limits is not None:
            resource.setrlimit(resource.RLIMIT_AS, limits)


def _render(env: jinja2.Environment, name: str, context: dict[str, Any]) -> str:
    """:func:`render_template` in an environment already made, under the render budget."""
    try:
        with _budget():
            text = env.get_template(name).render(**context)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"templates/{exc.name or name}:{exc.lineno}: template error: {exc.message}") from exc
    except jinja2.TemplateNotFound as exc:
        raise TemplateError(f"templates/{exc.name}: template not found") from exc
    except (jinja2.UndefinedError, jinja2.sandbox.SecurityError, ValueError, TypeError) as exc:
        raise TemplateError(f"templates/{name}:{_template_line(exc, name)}: {exc}") from exc
    except _OverBudget:
        raise TemplateError(f"templates/{name}: rendering took more than {RENDER_CPU_SECONDS:g} s of CPU (or "
                            f"the run's renders more than {RUN_CPU_SECONDS:g} s): a template must not loop "
                            "without bound") from None
    except MemoryError:
        raise TemplateError(f"templates/{name}: rendering needed more than {RENDER_MEMORY_BYTES >> 20} MiB "
                            "of memory") from None
    except RecursionError:
        raise TemplateError(f"templates/{name}: a macro or include calls itself without end") from None
    if len(text) > MAX_RENDERED_BYTES:
        raise TemplateError(f"templates/{name}: renders {len(text)} characters; a rendered file holds at "
                            f"most {MAX_RENDERED_BYTES}")
    return text


def _template_line(exc: BaseException, name: str) -> int:
    """The template line jinja2 was executing when ``exc`` was raised (0 if unknown)."""
    tb = exc.__traceback__
    line = 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith(name):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


HOME_DIRS = ("/root", "/home")


def _under_home(path: str) -> bool:
    return any(path == d or path.startswith(d + "/") for d in HOME_DIRS)


def install_paths(host: Host) -> list[str]:
    """The SGLang checkout and the venv holding its interpreter (``<venv>/bin/python``)."""
    paths = {str(PurePosixPath(host.sglang.python).parent.parent)}
    if host.sglang.source_dir:
        paths.add(host.sglang.source_dir)
    # A venv inside the checkout is covered by the checkout itself.
    return sorted(p for p in paths if not any(p != q and p.startswith(q + "/") for q in paths))


def home_install_paths(host: Host) -> list[str]:
    """Install paths under /root or /home: ProtectHome= hides those, so they are bound back read-only."""
    return [p for p in install_paths(host) if _under_home(p)]


# How many hex digits of a captured file's digest a rendered header names: 64 bits, far
# beyond what a pull request could match with other content by trying.
FACTS_DIGEST_CHARS = 16


def facts_files(catalog: Catalog) -> list[Path]:
    """The captured files a service's checks read: the pin's flag catalog, env catalog and device
    checks (the GPU rules', when the pin has them: an edited minimum capability changes what is
    refused as much as an edited flag)."""
    folder = catalog.source_file.parent
    return [catalog.source_file, folder / f"{catalog.pin}.env.json", devices_path(catalog.source_file)]


def model_facts(model: Any) -> list[Path]:
    """The model's checkpoint snapshot, when it has one: the checks read it too."""
    snapshot = snapshot_of(model)
    return [snapshot.path] if snapshot is not None else []


def facts_line(files: Sequence[Path]) -> str:
    """``Facts: catalogs/sglang/0.5.9.json sha256:0123...``: each captured file the checks read
    (generator/load/captured.py), by its recorded digest. A re-capture that changes nothing
    changes no digest; changed facts change every file checked against them, so a pull
    request that edits a catalog shows in the reviewed diff of ``output/``."""
    named = []
    for path in files:
        digest = recorded_digest(path)
        if digest is not None or path.exists():
            shown = "/".join(path.parts[-3:])  # catalogs/<folder>/<file>
            named.append(f"{shown} sha256:{(digest or 'none')[:FACTS_DIGEST_CHARS]}")
    return "Facts: " + ", ".join(named)


def header(host: Host, sources: Sequence[str], catalog: Catalog, facts: Sequence[Path] = ()) -> str:
    """The comment block that opens every generated file (pip-tools style); ``facts``: more
    captured files its checks read (the model's checkpoint snapshot)."""
    pin = catalog.version + (f" (commit {catalog.commit})" if catalog.commit else "")
    # Every piece comes from the repository (file names, catalog fields): a newline in one
    # would end the comment and start a setting, so each line goes through comment_value.
    lines = [f"{MARKER} {__version__} with `gen render --host {host.name}`. DO NOT EDIT.",
             "Change the sources and render again; this file is replaced on every render.",
             f"Sources: {', '.join(sources)}",
             f"SGLang: {pin}, flags checked against catalogs/sglang/{catalog.pin}.json",
             facts_line([*facts_files(catalog), *facts])]
    return "".join(f"# {comment_value(line)}\n" for line in lines)


def health_address(listen: str) -> str:
    """The address the readiness check polls: loopback when the server listens everywhere."""
    if listen in ("0.0.0.0", ""):
        return "127.0.0.1"
    if listen == "::":
        return "[::1]"
    return f"[{listen}]" if ":" in listen else listen


def _context(host: Host, catalog: Catalog, ps: PlannedService, home_paths: Sequence[str]) -> dict[str, Any]:
    """The template variables of one service; ``home_paths`` is :func:`home_install_paths` of ``host``."""
    p, svc, model = ps.placement, ps.placement.service, ps.placement.model
    peers = list(p.cluster.peers) if p.cluster else []  # rank 0's address comes from its inventory
    # Values the unit template used to assemble from attributes: each attribute read in the
    # sandbox is checked for safety, which was a tenth of rendering. The same text reaches
    # the same filters (description | unit_string, cpus | cpu_list, numa_node | cpu_list).
    derived: dict[str, Any] = {"description": f"SGLang {svc.name}: {model.name} on GPUs {p.cuda_visible_devices}",
                               "cpus": p.cpus}
    if p.numa_nodes:  # else left undefined: StrictUndefined refuses its use, as before
        derived["numa_node"] = p.numa_nodes[0]
    return derived | {
        "header": header(host, [host.doc.path, model.doc.path, *peers], catalog, model_facts(model)),
        "host": host,
        "service": svc,
        "model": model,
        "placement": p,
        # A switch turned off (``false``) renders no words at all.
        "exec_groups": [list(ps.argv.program)] + [list(g.words) for g in ps.argv.groups if g.words],
        "env_file": "/" + env_path(svc.name),
        "secret_env_file": "/" + secret_env_path(svc.name) if svc.secret_env else "",
        "credentials": load_credentials(svc.name, svc.secret_args),
        "environment": list(ps.environment),
        "timeout_start_min": svc.timeout_start_min or default_timeout_start_min(model),
        "wait_ready": "/" + WAIT_READY,
        "health_url": f"http://{health_address(svc.listen)}:{svc.port}/health",
        "python": host.sglang.python,
        "model_root": host.model_root,
        "user": host.sglang.user,
        "bind_read_only_paths": list(home_paths),
        "service_name": svc.unit.removesuffix(".service"),
    }


def render_unit(host: Host, catalog: Catalog, ps: PlannedService, templates: Templates) -> str:
    """One service's unit file, exactly as :func:`render_host` writes it."""
    return _render(_environment(templates), "sglang.service.j2",
                   _context(host, catalog, ps, home_install_paths(host)))


def render_host(planned: PlannedHost, templates: Templates) -> HostRender:
    """Template every planned service of one host (unit, environment file, readiness helper)."""
    host, catalog = planned.host, planned.catalog
    files: list[RenderedFile] = []
    rendered: list[RenderedService] = []
    env = _environment(templates)
    home_paths = home_install_paths(host)  # the same for every service of the host
    for ps in planned.services:
        name = ps.placement.service.name
        context = _context(host, catalog, ps, home_paths)
        files.append(RenderedFile(unit_path(name), _render(env, "sglang.service.j2", context)))
        files.append(RenderedFile(env_path(name), _render(env, "sglang.env.j2", context)))
        rendered.append(RenderedService(ps.placement, ps.argv, unit_path(name), env_path(name), ps.environment,
                                        ps.memory))
    if planned.services:
        wait_head = header(host, [host.doc.path], catalog)
        files.append(RenderedFile(WAIT_READY, _render(env, "sglang-wait-ready.py.j2", {"header": wait_head})))
    tree = HostTree(host.name, tuple(sorted(files, key=lambda f: f.relpath)))
    return HostRender(host, catalog, tree, tuple(rendered))
