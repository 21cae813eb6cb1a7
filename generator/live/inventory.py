"""Reach hosts the way the operator's Ansible inventory says (``gen verify --inventory FILE``).

The inventory is read by Ansible itself (``ansible-inventory -i FILE --list``), so every
format and plugin Ansible accepts works, group and host variables included. Of each host
the variables that testinfra's ``ansible://`` backend uses to open its ssh connection are
taken, and they become an ordinary :class:`Target` (so gen keeps its one shared ssh
connection per host):

* ``ansible_host`` (default: the inventory name), ``ansible_user``, ``ansible_port``;
* ``ansible_ssh_private_key_file`` or ``ansible_private_key_file``;
* ``ansible_ssh_common_args`` and ``ansible_ssh_extra_args`` (split like a shell would).

Host variables win; the environment variables Ansible reads for the same settings
(``ANSIBLE_REMOTE_USER``, ``ANSIBLE_REMOTE_PORT``, ``ANSIBLE_PRIVATE_KEY_FILE``,
``ANSIBLE_SSH_COMMON_ARGS``, ``ANSIBLE_SSH_EXTRA_ARGS``, ``ANSIBLE_HOST_KEY_CHECKING``)
fill the gaps, so the shell that ran the playbook can verify with the same settings.
ansible.cfg is not read, and a value is taken as written (a ``{{ }}`` template is an error:
gen does not template); a value tagged ``!unsafe`` (as ``gen ansible`` writes every value)
is data, taken as written whatever it holds.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from generator.errors import GenError
from generator.live.target import Target
from generator.load import json_text

SSH_CONNECTIONS = ("ssh", "smart", "paramiko", "paramiko_ssh")
INVENTORY_TIMEOUT_S = 300


class InventoryError(GenError, OSError):
    """The Ansible inventory cannot be read, or names no ssh way to a host (``gen`` exits 3)."""


def _ansible_inventory() -> str:
    """The ``ansible-inventory`` program: beside this Python (a venv), else on PATH."""
    beside = Path(sys.executable).parent / "ansible-inventory"
    if beside.is_file():
        return str(beside)
    found = shutil.which("ansible-inventory")
    if found is None:
        raise InventoryError("--inventory needs ansible-inventory (pip install ansible-core)")
    return found


def _group_hosts(data: Mapping[str, Any], group: str, seen: set[str]) -> list[str]:
    """Every host of GROUP and its children, in the order ansible-inventory lists them."""
    if group in seen:
        return []
    seen.add(group)
    entry = data.get(group) or {}
    hosts = list(entry.get("hosts") or [])
    for child in entry.get("children") or []:
        hosts += _group_hosts(data, child, seen)
    return hosts


class UnsafeText(str):
    """A value the inventory tagged ``!unsafe``: data Ansible never templates."""

    __slots__ = ()


def _unwrap(value: Any) -> Any:
    """ansible-inventory prints a ``!unsafe`` string as ``{"__ansible_unsafe": "..."}``."""
    if isinstance(value, dict):
        if set(value) == {"__ansible_unsafe"} and isinstance(value["__ansible_unsafe"], str):
            return UnsafeText(value["__ansible_unsafe"])
        return {k: _unwrap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    return value


def parse_inventory_list(text: str) -> dict[str, dict[str, Any]]:
    """``ansible-inventory --list`` JSON -> host name -> its variables (empty when it has none)."""
    data = json_text.loads(text)
    hostvars = (data.get("_meta") or {}).get("hostvars") or {}
    names = _group_hosts(data, "all", set()) + list(hostvars)
    return {name: _unwrap(dict(hostvars.get(name) or {})) for name in dict.fromkeys(names)}


def load_inventory(path: Path) -> dict[str, dict[str, Any]]:
    """The hosts of the Ansible inventory at PATH with their variables, as Ansible resolves them."""
    env = os.environ | {"ANSIBLE_VERBOSITY": "0", "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0"}
    try:
        proc = subprocess.run([_ansible_inventory(), "-i", str(path), "--list"], capture_output=True,
                              text=True, env=env, timeout=INVENTORY_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InventoryError(f"ansible-inventory -i {path} failed: {exc}") from exc
    # ansible-inventory warns and lists nothing for a file it cannot parse: both are errors here.
    if proc.returncode != 0 or "Unable to parse" in proc.stderr:
        raise InventoryError(f"ansible-inventory -i {path} failed (exit {proc.returncode}): {proc.stderr.strip()}")
    try:
        return parse_inventory_list(proc.stdout)
    except (ValueError, AttributeError) as exc:
        raise InventoryError(f"ansible-inventory -i {path} printed no inventory: {exc}") from exc


def _setting(name: str, hostvars: Mapping[str, Any], env_var: str | None,
             environ: Mapping[str, str]) -> str | None:
    """A host variable, else the environment variable Ansible reads for it; templates refused."""
    value = hostvars.get(name)
    if value is None and env_var is not None:
        value = environ.get(env_var)
    if value is None or value == "":
        return None
    text = str(value)
    if not isinstance(value, UnsafeText) and ("{{" in text or "{%" in text):
        raise InventoryError(f"{name} is a template ({text!r}); gen reads inventory values as written")
    return text


def inventory_target(name: str, hostvars: Mapping[str, Any], ssh_config: Path | None = None,
                     environ: Mapping[str, str] | None = None) -> Target:
    """The ssh Target of inventory host NAME from its variables (and Ansible's environment)."""
    env = os.environ if environ is None else environ
    connection = _setting("ansible_connection", hostvars, None, env) or "ssh"
    if connection not in SSH_CONNECTIONS:
        raise InventoryError(f"inventory host {name} uses ansible_connection={connection}; gen verify needs ssh")
    port = _setting("ansible_port", hostvars, "ANSIBLE_REMOTE_PORT", env)
    if port is not None and not port.isdigit():
        raise InventoryError(f"inventory host {name}: ansible_port {port!r} is not a number")
    identity = (_setting("ansible_ssh_private_key_file", hostvars, None, env)
                or _setting("ansible_private_key_file", hostvars, "ANSIBLE_PRIVATE_KEY_FILE", env))
    args: list[str] = []
    for var, env_var in (("ansible_ssh_common_args", "ANSIBLE_SSH_COMMON_ARGS"),
                         ("ansible_ssh_extra_args", "ANSIBLE_SSH_EXTRA_ARGS")):
        args += shlex.split(_setting(var, hostvars, env_var, env) or "")
    checking = _setting("ansible_host_key_checking", hostvars, "ANSIBLE_HOST_KEY_CHECKING", env)
    if checking is not None and checking.lower() in ("false", "no", "0", "off"):
        args += ["-o", "StrictHostKeyChecking=no"]  # what Ansible's ssh plugin adds for it
    return Target(
        address=_setting("ansible_host", hostvars, None, env) or name,
        user=_setting("ansible_user", hostvars, "ANSIBLE_REMOTE_USER", env),
        port=int(port) if port is not None else None,
        ssh_config=ssh_config,
        identity_file=os.path.expanduser(identity) if identity else None,
        ssh_args=tuple(args),
    )
