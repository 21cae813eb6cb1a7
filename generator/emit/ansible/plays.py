"""The playbook's plays (``site.yml``): guard, prepare, one play per multi-node group, singles.

1. **Guard** (tag ``always``): a ``--limit`` that takes some ranks of a multi-node group
   but not all is refused before anything runs; limit to the group
   (``--limit gen_group_<model>``) or to hosts that hold whole groups.
2. **Prepare**, host by host: the secret environment files the units read must exist
   (root, 0600; gen never writes them); folders; the shared readiness helper; then what
   gen put there before and no longer renders (a dropped service, its previous set) is
   stopped, disabled and removed, and the host's list of gen's files is rewritten. On a
   machine several inventories share (``ssh.shared_with``) each keeps its own list
   (``gen_host_list``) and never removes what the others render (``gen_keep``).
3. **One play per multi-node group** with every rank in one batch: the ranks get their
   files together and start together (:mod:`generator.emit.ansible.tasks`), and one
   failing rank rolls the whole group back.
4. **Single-node services**, one host at a time (``serial: 1``), the same steps.

The text is gen's own, built with ``str.replace`` on ``@NAME@`` markers, so Jinja's braces
stay as Ansible reads them; every value placed into it is written by
:func:`generator.emit.ansible.yamltext.scalar` (a string from the repository is ``!unsafe``
data, never a template).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generator.emit.ansible.inventory import GROUP, PREVIOUS_DIR
from generator.emit.ansible.yamltext import scalar
from generator.emit.render import ENV_DIR, UNIT_DIR, WAIT_READY
from generator.emit.secrets import CREDSTORE_DIR, SECRET_ENV_DIR
from generator.emit.writer import MANAGED_LIST

TASKS_FILE = "rollout.yml"
# What a path in the host's list must look like before the playbook removes it: only the
# shapes gen writes (no "/" inside a name, so no "..", and never a *.secret.env).
_NAME = "[A-Za-z0-9:_.@-]+"
REMOVABLE_RE = (f"^({UNIT_DIR}/sglang-{_NAME}\\.service|{ENV_DIR}/{_NAME}\\.env"
                f"|{WAIT_READY.rsplit('/', 1)[0]}/{_NAME}|{PREVIOUS_DIR}/sglang-{_NAME}\\.service)$")
# Never removed, whatever a host's list says: the secret folders (and the old *.secret.env).
SECRET_RE = f"(\\.secret\\.env$|^/?{SECRET_ENV_DIR}/|^/?{CREDSTORE_DIR}/)"

# The validate command: ansible substitutes %s with the temporary file (a random name);
# systemd-analyze needs the real unit name, so the file is copied into a fresh folder
# under that name first. `systemd-analyze verify` exits 0 on unknown settings, so any
# output fails too. (%%s is printf's %s after ansible's own % formatting.)
VERIFY_SCRIPT = (
    'd=$(mktemp -d) || exit 1; cp "$1" "$d/$2" || exit 1; '
    'out=$(systemd-analyze verify "$d/$2" 2>&1); rc=$?; rm -rf "$d"; '
    'if [ "$rc" -ne 0 ] || [ -n "$out" ]; then printf "%s\\n" "$out" >&2; exit 1; fi'
)
VERIFY_UNIT = "/bin/sh -c '" + VERIFY_SCRIPT.replace("%s", "%%s") + "' gen-verify %s"

GUARD = """\
- name: Refuse a --limit that splits a multi-node group
  hosts: @GROUP@
  gather_facts: false
  tasks:
    - name: Every multi-node group is either wholly in this run or not at all
      ansible.builtin.assert:
        that:
          - (item.hosts | difference(ansible_play_hosts_all) | length == 0) or (item.hosts | intersect(ansible_play_hosts_all) | length == 0)
        fail_msg: "--limit splits multi-node group {{ item.name }}: {{ item.hosts | difference(ansible_play_hosts_all) | join(', ') }} excluded; its ranks start together: limit to the group (--limit {{ item.group }}) or leave it out"
        quiet: true
      loop: "{{ gen_groups }}"
      loop_control:
        label: "{{ item.name }}"
      run_once: true
      tags: [always]
"""

PREPARE = """\
- name: Prepare each host (secrets checked, folders, shared helper, dropped services removed)
  hosts: @GROUP@
  serial: 1
  max_fail_percentage: 0
  any_errors_fatal: true
  gather_facts: false
  vars:
    gen_removable: @REMOVABLE@
    gen_secret_re: @SECRET_RE@
  tasks:
    - name: Look at the secret environment files the units read (gen never writes them)
      ansible.builtin.stat:
        path: "{{ item }}"
        get_checksum: false
      loop: "{{ gen_secret_env | default([]) }}"
      register: gen_secret_stat
      tags: [always]

    - name: Require each secret environment file to exist, be owned by root, mode 0600
      ansible.builtin.assert:
        that:
          - item.stat.exists
          - item.stat.isreg
          - item.stat.uid == 0
          - item.stat.mode == '0600'
        fail_msg: "{{ item.item }} must exist as a regular file owned by root with mode 0600; gen never writes secrets: create it on the host (install -m 0600 -o root -g root /dev/null {{ item.item }}), then run again"
        quiet: true
      loop: "{{ gen_secret_stat.results }}"
      loop_control:
        label: "{{ item.item }}"
      tags: [always]

    - name: Create the folders of the rendered files
      ansible.builtin.file:
        path: "/{{ item }}"
        state: directory
        mode: "0755"
      loop: "{{ (gen_files | map(attribute='path') | map('dirname') | list + [gen_host_list | dirname | regex_replace('^/', '')]) | unique | sort }}"
      tags: [copy]

    - name: Create gen's own folders on the host (staged and previous sets, root only)
      ansible.builtin.file:
        path: "{{ item }}"
        state: directory
        mode: "0700"
      loop: [/var/lib/gen, /var/lib/gen/next, /@PREVIOUS@]
      tags: [copy]

    - name: Copy the files no single service owns (the readiness helper runs only at start)
      ansible.builtin.copy:
        src: "{{ gen_output_dir }}/{{ inventory_hostname }}/{{ item.path }}"
        dest: "/{{ item.path }}"
        mode: "{{ item.mode }}"
        owner: root
        group: root
      loop: "{{ gen_files | selectattr('service', 'equalto', '') | list }}"
      loop_control:
        label: "/{{ item.path }}"
      tags: [copy]

    - name: Read the list of files gen put on this host before
      ansible.builtin.slurp:
        src: "{{ gen_host_list }}"
      register: gen_previous_list
      failed_when: false
      tags: [copy]

    - name: Note what gen put here before and no longer renders (only paths of the shapes gen writes)
      ansible.builtin.set_fact:
        gen_removed: "{{ ((gen_previous_list.content | default('') | b64decode).splitlines() | reject('match', '^#') | select('match', gen_removable) | reject('search', gen_secret_re) | list) | difference(gen_files | map(attribute='path') | list + gen_keep | default([]) + gen_services | map(attribute='unit') | map('regex_replace', '^', '@PREVIOUS@/') | list) | sort }}"
      tags: [copy]

    - name: Look for the units of dropped services
      ansible.builtin.stat:
        path: "/{{ item }}"
        get_checksum: false
      loop: "{{ gen_removed | select('match', '^etc/systemd/system/') | list }}"
      register: gen_dropped_units
      tags: [copy]

    - name: Stop and disable the units of dropped services
      ansible.builtin.systemd_service:
        name: "{{ item.item | basename }}"
        state: stopped
        enabled: false
      loop: "{{ gen_dropped_units.results | selectattr('stat.exists') | list }}"
      loop_control:
        label: "{{ item.item | basename }}"
      tags: [copy]

    - name: Remove the files of dropped services (and their previous sets)
      ansible.builtin.file:
        path: "/{{ item }}"
        state: absent
      loop: "{{ gen_removed }}"
      register: gen_deleted
      tags: [copy]

    - name: Reload systemd (a unit file was removed)
      ansible.builtin.systemd_service:
        daemon_reload: true
      when: gen_deleted.results | default([]) | selectattr('changed') | selectattr('item', 'match', '^etc/systemd/system/') | list | length > 0
      tags: [copy]

    - name: Record the files gen owns on this host now (the rendered list and the previous sets)
      ansible.builtin.copy:
        content: "{{ lookup('ansible.builtin.file', gen_output_dir ~ '/' ~ inventory_hostname ~ '/@MANIFEST@') }}\\n{% for s in gen_services %}@PREVIOUS@/{{ s.unit }}\\n{% endfor %}"
        dest: "{{ gen_host_list }}"
        mode: "0644"
        owner: root
        group: root
      tags: [copy]
"""

ROLLOUT = """\
- name: @TITLE@
  hosts: @HOSTS@
@SERIAL@  any_errors_fatal: true
  gather_facts: false
  vars:
    gen_rollout_group: @NAME@
    gen_verify_unit: @VERIFY@
    gen_verify_script: @VERIFY_SCRIPT@
  tasks:
    - name: The rollout steps
      ansible.builtin.import_tasks: @TASKS@
"""


def _fill(text: str, **values: str) -> str:
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    return text


def plays(groups: Sequence[dict[str, Any]]) -> str:
    """The playbook body: guard, prepare, one play per group (rank order), then singles."""
    verify = scalar(VERIFY_UNIT)
    parts = [_fill(GUARD, GROUP=GROUP),
             _fill(PREPARE, GROUP=GROUP, REMOVABLE=scalar(REMOVABLE_RE),
                   SECRET_RE=scalar(SECRET_RE), PREVIOUS=PREVIOUS_DIR, MANIFEST=MANAGED_LIST)]
    for g in groups:
        parts.append(_fill(ROLLOUT, TITLE=scalar(f"Roll out multi-node group {g['name']} (all ranks at once, "
                                                 "rolled back as a whole)"), HOSTS=scalar(g["group"]), SERIAL="",
                           NAME=scalar(g["name"]), VERIFY=verify, VERIFY_SCRIPT=scalar(VERIFY_SCRIPT),
                           TASKS=TASKS_FILE))
    parts.append(_fill(ROLLOUT, TITLE=scalar("Roll out single-node services, one host at a time"), HOSTS=GROUP,
                       SERIAL="  serial: 1\n  max_fail_percentage: 0\n", NAME=scalar(""), VERIFY=verify,
                       VERIFY_SCRIPT=scalar(VERIFY_SCRIPT), TASKS=TASKS_FILE))
    return "\n".join(parts)
