"""The variables gen itself sets for a service, derived from what it renders, and ``env:`` kept off them.

A service's environment is assembled by systemd (systemd.exec(5), "Environment Variables
in Spawned Processes", systemd 252): the variables the manager defines for the unit's
settings, then the unit's ``Environment=``, then its ``EnvironmentFile=``s, the later
winning. ``env:`` is written into the environment file, so a manifest's ``HOME`` would
silently override the unit's ``Environment=HOME=%S/...`` (and ``CREDENTIALS_DIRECTORY``
would redirect ``--config`` to another file). So every variable gen sets is off limits to
``env:`` (E004), and the list is read from the service's rendered unit, not kept by hand:

* each ``Environment=`` assignment of the unit (the templates' cache folders: HOME,
  XDG_CACHE_HOME, TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR, CUDA_CACHE_PATH, ...);
* the variables systemd defines because of a setting the unit has (:data:`SYSTEMD_SETS`:
  ``User=`` sets USER, LOGNAME, HOME and SHELL; ``CacheDirectory=`` CACHE_DIRECTORY;
  ``LoadCredential=`` CREDENTIALS_DIRECTORY; an ``ExecStartPost=`` is given MAINPID; every
  process INVOCATION_ID, SYSTEMD_EXEC_PID and JOURNAL_STREAM);
* the variables gen writes into the environment file itself (the GPUs, the multi-node
  interface: :func:`generator.plan.services.gen_environment`).

``PATH`` and ``LANG`` are systemd's defaults, not set for a setting gen renders: an
``env:`` may set them.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path

from generator.emit.render import render_unit
from generator.emit.templates import load_templates
from generator.errors import Diagnostics, TemplateError
from generator.load.resolve import Host
from generator.plan.services import GEN_VARIABLES, PlannedService, gen_environment
from generator.sglang.catalog import Catalog

# setting of the unit -> the variables systemd 252 defines for its processes when it is set
# (systemd.exec(5) "Environment Variables Set or Propagated by the Service Manager").
SYSTEMD_SETS: dict[str, tuple[str, ...]] = {
    "User": ("USER", "LOGNAME", "HOME", "SHELL"),
    "DynamicUser": ("USER", "LOGNAME", "HOME", "SHELL"),
    "RuntimeDirectory": ("RUNTIME_DIRECTORY",),
    "StateDirectory": ("STATE_DIRECTORY",),
    "CacheDirectory": ("CACHE_DIRECTORY",),
    "LogsDirectory": ("LOGS_DIRECTORY",),
    "ConfigurationDirectory": ("CONFIGURATION_DIRECTORY",),
    "LoadCredential": ("CREDENTIALS_DIRECTORY",),
    "LoadCredentialEncrypted": ("CREDENTIALS_DIRECTORY",),
    "SetCredential": ("CREDENTIALS_DIRECTORY",),
    "SetCredentialEncrypted": ("CREDENTIALS_DIRECTORY",),
    "ExecStart": ("INVOCATION_ID", "SYSTEMD_EXEC_PID", "JOURNAL_STREAM"),
    "ExecStartPost": ("MAINPID",),
    "ExecReload": ("MAINPID",),
    "ExecStop": ("MAINPID", "SERVICE_RESULT", "EXIT_CODE", "EXIT_STATUS"),
    "ExecStopPost": ("MAINPID", "SERVICE_RESULT", "EXIT_CODE", "EXIT_STATUS"),
    "WatchdogSec": ("WATCHDOG_PID", "WATCHDOG_USEC"),
    "LogNamespace": ("LOG_NAMESPACE",),
    "PAMName": ("XDG_RUNTIME_DIR",),
    "TTYPath": ("TERM",),
}


def _assignments(value: str) -> list[str]:
    """The ``NAME=value`` words of one ``Environment=`` value (its quotes removed)."""
    try:
        return shlex.split(value, posix=True)
    except ValueError:  # an unbalanced quote: still name what each word starts with
        return value.split()


def owned_variables(unit_text: str, gen_env: Mapping[str, str]) -> dict[str, str]:
    """Variable name -> what sets it (in the operator's words), for one rendered unit and the
    variables gen writes into its environment file."""
    owned: dict[str, str] = {}
    settings = []
    for raw in unit_text.splitlines():
        line = raw.strip()
        if line and not line.startswith(("#", ";", "[")) and "=" in line:
            key, _, value = line.partition("=")
            settings.append((key.strip(), value.strip()))
    # The unit's own assignments first: they win over what systemd defines (HOME after User=).
    for key, value in settings:
        if key == "Environment":
            for word in _assignments(value):
                name, eq, _ = word.partition("=")
                if eq and name:
                    owned.setdefault(name, f"the unit's Environment={word}")
    for key, value in settings:
        if key == "Type" and value == "notify":
            owned.setdefault("NOTIFY_SOCKET", "systemd, for the unit's Type=notify")
        for name in SYSTEMD_SETS.get(key, ()):
            owned.setdefault(name, f"systemd, for the unit's {key}={value}"[:160])
    for name, value in gen_env.items():
        why = GEN_VARIABLES.get(name)
        owned.setdefault(name, f"gen, in the environment file ({name}={value}" + (f": {why})" if why else ")"))
    return owned


def check_environment(root: Path, host: Host, catalog: Catalog, ps: PlannedService,
                      diags: Diagnostics) -> None:
    """E004 for each ``env:`` variable (of the model or the service) that gen sets itself,
    naming gen's setting; the list comes from the service's unit as it renders from the
    templates of the repository ``root`` (read by emit/templates.py, like every render)."""
    p = ps.placement
    if not p.model.env and not p.service.env:
        return
    templates, problems = load_templates(root)
    if templates is None:
        return  # the render reports the templates' problems; nothing to compare against
    try:
        unit = render_unit(host, catalog, ps, templates)
    except TemplateError:
        return  # the render itself reports the template; nothing to compare against
    owned = owned_variables(unit, gen_environment(p))
    for owner in (p.model, p.service):
        for name, _ in owner.env:
            if name in owned:
                diags.error(owner.pos("env", name, key=True), "E004",
                            f"'{name}' is set by gen for service {p.service.name}: {owned[name]}; an env:"
                            " value would override it silently (the environment file is read last)",
                            f"remove {name} from env: (to change what gen sets, change the inventory or templates/)")
