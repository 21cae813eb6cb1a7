"""An Ansible inventory and playbook that roll the rendered tree out to the hosts.

gen does not deploy: it hands ``output/<host>/`` to Ansible. ``inventory.yml`` lists every
host of ``hosts/`` (address, ssh user and port) with the files gen rendered for it and the
services they belong to; ``site.yml`` is one play that, host by host (``serial: 1``,
``max_fail_percentage: 0``, ``any_errors_fatal``):

1. checks that every secret file a unit reads (``/etc/sglang/secrets/<svc>.env`` for
   ``secret_env: true``, ``/etc/credstore/sglang-<svc>.yaml`` for ``secret_args``) exists,
   is a regular file (not a symlink) owned by root with mode 0600; gen never writes or copies secrets,
   so a missing one stops the rollout before anything on the host changes;
2. copies each rendered file, keeping a backup; a unit file is first checked with
   ``systemd-analyze verify`` under its real unit name (the unit type comes from the
   suffix; any output counts as failure), so a bad unit never replaces a good one;
3. removes what gen put there before and no longer renders (a dropped service): the host
   keeps gen's list of its files in ``/etc/sglang/.gen-managed`` (a copy of
   ``output/<host>/.gen-managed``); each listed path that is no longer rendered, and that
   has the shape of a file gen writes (a ``sglang-*.service`` unit, an ``/etc/sglang/*.env``
   that is not a ``*.secret.env``, a helper in ``/usr/local/libexec/gen/``), is removed,
   its unit stopped and disabled first. Files gen never listed are never touched, and a
   host without the list (deployed before it existed) loses nothing. The new list is
   written once the old files are gone;
4. reloads systemd when a unit file changed or was removed;
5. restarts exactly the services whose unit or environment file changed (``systemctl
   restart`` returns once ExecStartPost saw /health answer 200), keeps the others started;
6. polls each restarted service's /health until it answers 200, and stops the rollout at
   the first failure.

Dropped services go before restarts, so a new service placed on a dropped one's GPUs or
port starts after the old one has stopped. The shared readiness helper
(``sglang-wait-ready``) only runs while a service starts, so changing it restarts
nothing. Both files carry gen's header and are deterministic (same inputs, same bytes).
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from generator import __version__
from generator.emit.render import (
    ENV_DIR,
    UNIT_DIR,
    WAIT_READY,
    env_path,
    health_address,
    secret_env_path,
    unit_path,
)
from generator.emit.secrets import CREDSTORE_DIR, SECRET_ENV_DIR, credential_path
from generator.load.resolve import Host
from generator.emit.writer import MANAGED_LIST, MARKER, HostTree

INVENTORY = "inventory.yml"
PLAYBOOK = "site.yml"
GROUP = "sglang_hosts"
# Where the host keeps gen's list of the files it owns there (output/<host>/.gen-managed).
HOST_MANAGED_LIST = f"/{ENV_DIR}/{MANAGED_LIST}"
# What a path in the host's list must look like before the playbook removes it: only the
# shapes gen renders (no "/" inside a name, so no "..", and never a *.secret.env).
_NAME = "[A-Za-z0-9:_.@-]+"
REMOVABLE_RE = (f"^({UNIT_DIR}/sglang-{_NAME}\\.service|{ENV_DIR}/{_NAME}\\.env"
                f"|{WAIT_READY.rsplit('/', 1)[0]}/{_NAME})$")
# Never removed, whatever a host's list says: the secret folders (and the old *.secret.env).
SECRET_RE = f"(\\.secret\\.env$|^/?{SECRET_ENV_DIR}/|^/?{CREDSTORE_DIR}/)"
# /health is polled every HEALTH_DELAY_S seconds this many times after the restart returned.
HEALTH_RETRIES = 30
HEALTH_DELAY_S = 2


@dataclass(frozen=True)
class AnsibleFiles:
    """The generated files: name (relative to the output folder) -> text."""

    files: tuple[tuple[str, str], ...]


def _header(what: str) -> str:
    return (f"# {MARKER} {__version__} with `gen ansible`. DO NOT EDIT.\n"
            f"# {what}\n"
            "# Change hosts/ or models/, run `gen render --all`, then `gen ansible` again.\n")


def _mode(mode: int) -> str:
    return f"{mode:04o}"  # a string: Ansible reads a bare 0644 as the integer 420


def host_vars(host: Host, tree: HostTree) -> dict[str, Any]:
    """One host's inventory entry: how to reach it, its files and its services."""
    rendered = {f.relpath: f for f in tree.files if f.relpath != MANAGED_LIST}
    files: list[dict[str, Any]] = []
    services: list[dict[str, Any]] = []
    owner: dict[str, str] = {}
    for svc in host.services:
        if unit_path(svc.name) not in rendered:
            continue
        owner[unit_path(svc.name)] = svc.unit
        owner[env_path(svc.name)] = svc.unit
        services.append({
            "unit": svc.unit,
            "port": svc.port,
            "health_url": f"http://{health_address(svc.listen)}:{svc.port}/health",
        })
    for relpath in sorted(rendered):
        entry: dict[str, Any] = {"path": relpath, "mode": _mode(rendered[relpath].mode)}
        if relpath.startswith("etc/systemd/system/"):
            entry["unit"] = relpath.rsplit("/", 1)[1]
        # The readiness helper runs only at start: changing it restarts nothing.
        entry["services"] = [owner[relpath]] if relpath in owner and relpath != WAIT_READY else []
        files.append(entry)
    out: dict[str, Any] = {
        "ansible_host": host.address,
        "ansible_user": host.ssh_user,
        "ansible_port": host.ssh_port,
        "gen_python": host.sglang.python,
        "gen_files": files,
        "gen_services": services,
        # Never rendered or copied: the playbook only checks them (root, 0600).
        # Secret files the units read (secret_env, secret_args): asserted, never copied.
        "gen_secret_env": ["/" + secret_env_path(s.name) for s in host.services
                           if s.secret_env and unit_path(s.name) in rendered]
                          + ["/" + credential_path(s.name) for s in host.services
                             if s.secret_args and unit_path(s.name) in rendered],
    }
    return out


def inventory(hosts: list[Host], trees: dict[str, HostTree], output_rel: str) -> dict[str, Any]:
    """The inventory: every host with a rendered tree, in name order."""
    entries = {h.name: host_vars(h, trees[h.name]) for h in sorted(hosts, key=lambda h: h.name)
               if h.name in trees}
    return {
        "all": {
            "vars": {"gen_output_dir": "{{ inventory_dir }}/" + output_rel},
            "children": {GROUP: {"hosts": entries}},
        }
    }


# The validate command: ansible substitutes %s with the temporary file (a random name);
# systemd-analyze needs the real unit name, so the file is copied into a fresh folder
# under that name first. `systemd-analyze verify` exits 0 on unknown settings, so any
# output fails too. (%%s is printf's %s after ansible's own % formatting.)
VERIFY_UNIT = (
    "/bin/sh -c 'd=$(mktemp -d) || exit 1; cp \"$1\" \"$d/$2\" || exit 1; "
    "out=$(systemd-analyze verify \"$d/$2\" 2>&1); rc=$?; rm -rf \"$d\"; "
    "if [ \"$rc\" -ne 0 ] || [ -n \"$out\" ]; then printf \"%%s\\n\" \"$out\" >&2; exit 1; fi' gen-verify %s"
)

PLAY = """\
- name: Roll out gen's rendered SGLang services, one host at a time
  hosts: {group}
  serial: 1
  max_fail_percentage: 0
  any_errors_fatal: true
  gather_facts: false
  vars:
    gen_verify_unit: {verify}
    gen_host_list: {host_list}
    gen_removable: {removable}
    gen_secret_re: {secret_re}
  tasks:
    - name: Look at the secret environment files the units read (gen never writes them)
      ansible.builtin.stat:
        path: "{{{{ item }}}}"
        get_checksum: false
      loop: "{{{{ gen_secret_env | default([]) }}}}"
      register: gen_secret_stat

    - name: Require each secret environment file to exist, be owned by root, mode 0600
      ansible.builtin.assert:
        that:
          - item.stat.exists
          - item.stat.isreg
          - item.stat.uid == 0
          - item.stat.mode == '0600'
        fail_msg: "{{{{ item.item }}}} must exist as a regular file owned by root with mode 0600; gen never writes secrets: create it on the host (install -m 0600 -o root -g root /dev/null {{{{ item.item }}}}), then run again"
        quiet: true
      loop: "{{{{ gen_secret_stat.results }}}}"
      loop_control:
        label: "{{{{ item.item }}}}"

    - name: Create the folders of the rendered files
      ansible.builtin.file:
        path: "/{{{{ item }}}}"
        state: directory
        mode: "0755"
      loop: "{{{{ (gen_files | map(attribute='path') | map('dirname') | list + [gen_host_list | dirname | regex_replace('^/', '')]) | unique | sort }}}}"

    - name: Copy the rendered files (units pass systemd-analyze verify first; old files are kept)
      ansible.builtin.copy:
        src: "{{{{ gen_output_dir }}}}/{{{{ inventory_hostname }}}}/{{{{ item.path }}}}"
        dest: "/{{{{ item.path }}}}"
        mode: "{{{{ item.mode }}}}"
        owner: root
        group: root
        backup: true
        validate: "{{{{ (gen_verify_unit ~ ' ' ~ item.unit) if item.unit is defined else omit }}}}"
      loop: "{{{{ gen_files }}}}"
      loop_control:
        label: "/{{{{ item.path }}}}"
      register: gen_copied

    - name: Read the list of files gen put on this host before
      ansible.builtin.slurp:
        src: "{{{{ gen_host_list }}}}"
      register: gen_previous
      failed_when: false

    - name: Note what gen put here before and no longer renders (only paths of the shapes gen writes)
      ansible.builtin.set_fact:
        gen_removed: "{{{{ ((gen_previous.content | default('') | b64decode).splitlines() | reject('match', '^#') | select('match', gen_removable) | reject('search', gen_secret_re) | list) | difference(gen_files | map(attribute='path') | list) | sort }}}}"

    - name: Look for the units of dropped services
      ansible.builtin.stat:
        path: "/{{{{ item }}}}"
        get_checksum: false
      loop: "{{{{ gen_removed | select('match', '^etc/systemd/system/') | list }}}}"
      register: gen_dropped_units

    - name: Stop and disable the units of dropped services
      ansible.builtin.systemd_service:
        name: "{{{{ item.item | basename }}}}"
        state: stopped
        enabled: false
      loop: "{{{{ gen_dropped_units.results | selectattr('stat.exists') | list }}}}"
      loop_control:
        label: "{{{{ item.item | basename }}}}"

    - name: Remove the files of dropped services
      ansible.builtin.file:
        path: "/{{{{ item }}}}"
        state: absent
      loop: "{{{{ gen_removed }}}}"
      register: gen_deleted

    - name: Record the files gen owns on this host now
      ansible.builtin.copy:
        src: "{{{{ gen_output_dir }}}}/{{{{ inventory_hostname }}}}/{manifest}"
        dest: "{{{{ gen_host_list }}}}"
        mode: "0644"
        owner: root
        group: root

    - name: Note what changed
      ansible.builtin.set_fact:
        gen_restart: "{{{{ gen_copied.results | selectattr('changed') | map(attribute='item.services') | flatten | unique | sort }}}}"
        gen_reload: "{{{{ (gen_copied.results | selectattr('changed') | selectattr('item.unit', 'defined') | list + gen_deleted.results | selectattr('changed') | selectattr('item', 'match', '^etc/systemd/system/') | list) | length > 0 }}}}"

    - name: Reload systemd (a unit file changed or was removed)
      ansible.builtin.systemd_service:
        daemon_reload: true
      when: gen_reload

    - name: Restart the services whose files changed (returns once ExecStartPost saw /health 200)
      ansible.builtin.systemd_service:
        name: "{{{{ item }}}}"
        state: restarted
        enabled: true
      loop: "{{{{ gen_restart }}}}"

    - name: Keep the other services enabled and running
      ansible.builtin.systemd_service:
        name: "{{{{ item.unit }}}}"
        state: started
        enabled: true
      loop: "{{{{ gen_services | rejectattr('unit', 'in', gen_restart) | list }}}}"
      loop_control:
        label: "{{{{ item.unit }}}}"

    - name: Wait until each restarted service answers /health with 200
      ansible.builtin.uri:
        url: "{{{{ item.health_url }}}}"
        status_code: 200
        timeout: 5
      register: gen_health
      until: gen_health.status == 200
      retries: {retries}
      delay: {delay}
      loop: "{{{{ gen_services | selectattr('unit', 'in', gen_restart) | list }}}}"
      loop_control:
        label: "{{{{ item.unit }}}} {{{{ item.health_url }}}}"
      when: not ansible_check_mode
"""


def _yaml_text(data: Any) -> str:
    yaml = YAML(typ="rt")  # round-trip dumper: keeps insertion order
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    buf = io.StringIO()
    yaml.dump(data, buf)
    return buf.getvalue()


def playbook_text() -> str:
    """The playbook, with gen's header."""
    verify = '"' + VERIFY_UNIT.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return (_header("One host at a time: check secrets, copy (verified), remove dropped services, reload, "
                    "restart what changed, wait for /health.")
            + "\n" + PLAY.format(group=GROUP, verify=verify, retries=HEALTH_RETRIES, delay=HEALTH_DELAY_S,
                                  host_list=json.dumps(HOST_MANAGED_LIST), removable=json.dumps(REMOVABLE_RE),
                                  secret_re=json.dumps(SECRET_RE), manifest=MANAGED_LIST))


def generate(hosts: list[Host], trees: list[HostTree], out_dir: Path, output_dir: Path) -> AnsibleFiles:
    """Both files for ``hosts`` (with their rendered ``trees``), to be written into ``out_dir``.

    The inventory points at ``output_dir`` relative to itself, so the pair works from any
    checkout of the repository.
    """
    rel = Path(os.path.relpath(output_dir.resolve(), out_dir.resolve())).as_posix()
    by_name = {t.host: t for t in trees}
    inv = _header("Ansible inventory of hosts/ with the files gen rendered for each host.") + "\n" \
        + _yaml_text(inventory(hosts, by_name, rel))
    return AnsibleFiles(((INVENTORY, inv), (PLAYBOOK, playbook_text())))
