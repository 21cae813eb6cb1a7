"""The rollout steps (``rollout.yml``), imported by every group play and the singles play.

A play's scope is its services on each host: the group's rank (``gen_rollout_group`` is
the deployment's name) or the host's single-node services (``""``). In order:

1. always: compare each live file's sha1 with the file in output/: the changed services.
2. ``preflight``: stage the changed services' files under ``/var/lib/gen/next``; the
   staged units pass ``systemd-analyze verify``; the host's own SGLang parses and validates the new argv (``gen-onhost.py preflight``), and
   the sandbox check runs a probe inside the staged unit's own sandbox
   (``gen-sandbox.py``). Any failure on any host of the batch stops the play here,
   before anything running is touched.
3. ``copy``: keep the live files of each changed service as its previous set
   (``gen-rollout.py save``), install the rendered files (units pass
   ``systemd-analyze verify`` first; ``--check --diff`` shows exactly these diffs),
   reload systemd.
4. ``restart``: ``enabled: false`` services are stopped and disabled, never started;
   every changed enabled service of the batch is restarted without blocking (all ranks
   enqueue before anyone waits; when any rank of a group changed, every rank restarts:
   the ranks form one distributed group and re-form it together), then each host waits for its own units (active and
   its own /health 200). Tasks record failures instead of failing, so that:
5. when one service failed (for a group: any rank), its previous set comes back on
   every host concerned (a new service is stopped and disabled), systemd reloads, the
   previous service starts and its health is awaited; then the play fails.
6. ``verify``: every enabled service of the scope answers /health.

Every failure message leads with its deciding line (argparse's ``error:`` line, the last
exception, the first line that is not usage text: :func:`generator.live.onhost_rollout.deciding_line`),
then the failed check, the rollback's outcome and a bounded journal excerpt. Ansible's
Jinja trims the newline right after a block tag, so a line break after ``%}`` is written
as ``{{ '\\n' }}``.
"""

from __future__ import annotations

from generator.emit.ansible.inventory import STAGE_DIR

MARKER = "=== gen on-host result ==="
# How the tasks read an on-host script's JSON (it prints it after MARKER).
_JSON = "(R.stdout.split('" + MARKER + "') | last | from_json)"

TASKS = """\
# The rollout steps of one play; see the header of site.yml.
- name: Pick this play's services on the host and reset the notes of earlier plays
  ansible.builtin.set_fact:
    gen_scope: "{{ gen_services | selectattr('group', 'equalto', gen_rollout_group) | selectattr('model', 'in', gen_rollout_models) | list }}"
    gen_changed: []
    gen_pre_failures: []
    gen_failures: []
    gen_rollback: []
  tags: [always]

- name: Look at the live files of these services
  ansible.builtin.stat:
    path: "/{{ item.path }}"
    checksum_algorithm: sha1
  loop: "{{ gen_files | selectattr('service', 'in', gen_scope | map(attribute='unit') | list) | list }}"
  loop_control:
    label: "/{{ item.path }}"
  register: gen_live
  tags: [always]

- name: Note the services whose files differ from the render
  ansible.builtin.set_fact:
    gen_changed: "{{ (gen_changed + [item.item.service]) | unique | sort }}"
  loop: "{{ gen_live.results }}"
  loop_control:
    label: "/{{ item.item.path }}"
  # The controller's file as it is now (not as it was at `gen ansible`): what the copy installs.
  when: item.stat.checksum | default('') != (lookup('ansible.builtin.file', gen_output_dir ~ '/' ~ inventory_hostname ~ '/' ~ item.item.path, rstrip=False) | hash('sha1'))
  tags: [always]

- name: Note which services restart (changed enabled ones; every rank of a group when any rank changed)
  ansible.builtin.set_fact:
    gen_restart: "{{ (gen_scope | selectattr('enabled') | map(attribute='unit') | list) if (gen_rollout_group != '' and (ansible_play_batch | map('extract', hostvars, 'gen_changed') | flatten | length > 0)) else (gen_scope | selectattr('unit', 'in', gen_changed) | selectattr('enabled') | map(attribute='unit') | list) }}"
  tags: [always]

- name: Note the models whose replicas this host restarts
  ansible.builtin.set_fact:
    gen_restart_models: "{{ gen_scope | selectattr('unit', 'in', gen_restart) | map(attribute='model') | unique | list }}"
  tags: [always]

- name: Refuse a batch that would restart more replicas of a model than its max_unavailable (nothing touched yet)
  ansible.builtin.assert:
    that:
      - down | length <= item.value
    fail_msg: "this batch would restart {{ down | length }} replicas of model {{ item.key }} at once ({{ down | join(', ') }}), more than its max_unavailable {{ item.value }}; nothing was touched. The planned batches keep replicas apart: a --limit regrouped them. Run without --limit, or limit to hosts of one batch (the order of group gen_rollout_N)"
    quiet: true
  vars:
    down: "{{ ansible_play_batch | select('in', ansible_play_batch | map('extract', hostvars) | selectattr('gen_restart_models', 'contains', item.key) | map(attribute='inventory_hostname') | list) | list }}"
  loop: "{{ gen_max_unavailable | dict2items | selectattr('key', 'in', gen_rollout_models) | list }}"
  loop_control:
    label: "{{ item.key }}"
  when: gen_rollout_group == ''
  run_once: true
  tags: [always]

- name: Create the staging folders
  ansible.builtin.file:
    path: "@STAGE@/{{ item }}"
    state: directory
    mode: "0700"
  loop: "{{ gen_files | selectattr('service', 'in', gen_restart) | map(attribute='path') | map('dirname') | unique | sort }}"
  # gen's own scratch: the --check preview stages too, so its preflight checks exactly this.
  check_mode: false
  diff: false
  changed_when: false
  tags: [preflight]

- name: Stage the changed services' files (nothing live changes yet)
  ansible.builtin.copy:
    src: "{{ gen_output_dir }}/{{ inventory_hostname }}/{{ item.path }}"
    dest: "@STAGE@/{{ item.path }}"
    mode: "0600"
    owner: root
    group: root
  loop: "{{ gen_files | selectattr('service', 'in', gen_restart) | list }}"
  loop_control:
    label: "@STAGE@/{{ item.path }}"
  # gen's own scratch: the --check preview stages too, so its preflight checks exactly this.
  check_mode: false
  diff: false
  changed_when: false
  tags: [preflight]

- name: Check the staged unit files with systemd-analyze verify (under their real names)
  ansible.builtin.command:
    argv: [/bin/sh, -c, "{{ gen_verify_script }}", gen-verify, "@STAGE@/{{ item.path }}", "{{ item.unit }}"]
  loop: "{{ gen_files | selectattr('service', 'in', gen_restart) | selectattr('unit', 'defined') | list }}"
  loop_control:
    label: "{{ item.unit }}"
  register: gen_analyze
  changed_when: false
  failed_when: false
  check_mode: false  # read-only on the host: the --check preview runs it too
  tags: [preflight]

- name: Preflight with the host's own SGLang (parse and validate the new argv)
  ansible.builtin.script:
    cmd: "gen-onhost.py preflight {{ item.preflight }}"
    executable: "{{ gen_python | quote }}"
  loop: "{{ gen_scope | selectattr('unit', 'in', gen_restart) | list }}"
  loop_control:
    label: "{{ item.unit }}"
  register: gen_sglang_pre
  changed_when: false
  failed_when: false
  check_mode: false  # read-only on the host: the --check preview runs it too
  tags: [preflight]

- name: Preflight inside the new unit's own sandbox (devices, model folder, cache folders)
  ansible.builtin.script:
    cmd: "gen-sandbox.py run {{ item.sandbox }}"
    executable: "{{ gen_python | quote }}"
  loop: "{{ gen_scope | selectattr('unit', 'in', gen_restart) | list }}"
  loop_control:
    label: "{{ item.unit }}"
  register: gen_sandbox_pre
  changed_when: false
  failed_when: false
  check_mode: false  # read-only on the host: the --check preview runs it too
  tags: [preflight]

- name: Note what the preflight checks refused (each its deciding line first, then its detail)
  ansible.builtin.set_fact:
    gen_pre_failures: "{{ gen_pre_failures + ((@JSON@.services[R.item.name] | rejectattr('ok') | map(attribute='detail') | map('regex_replace', '^', who) | list) if '@MARKER@' in R.stdout else [who ~ 'no result (exit ' ~ R.rc ~ ')\\n' ~ R.stdout ~ R.stderr]) }}"
  vars:
    R: "{{ item.0 }}"
    who: "{{ item.0.item.unit ~ ' on ' ~ inventory_hostname ~ ' ' ~ item.1 ~ ': ' }}"
  loop: "{{ (gen_sglang_pre.results | default([]) | rejectattr('skipped', 'defined') | product(['sglang-preflight']) | list) + (gen_sandbox_pre.results | default([]) | rejectattr('skipped', 'defined') | product(['sandbox']) | list) }}"
  loop_control:
    label: "{{ item.0.item.unit }} {{ item.1 }}"
  tags: [preflight]

- name: Note what systemd-analyze refused
  ansible.builtin.set_fact:
    gen_pre_failures: "{{ gen_pre_failures + [item.item.unit ~ ' on ' ~ inventory_hostname ~ ' systemd-analyze: ' ~ item.stderr] }}"
  loop: "{{ gen_analyze.results | default([]) | rejectattr('skipped', 'defined') | rejectattr('rc', 'equalto', 0) | list }}"
  loop_control:
    label: "{{ item.item.unit }}"
  tags: [preflight]

- name: "Preview (--check): say whether the preflight checks would pass"
  ansible.builtin.debug:
    msg: "{{ ('preview: preflight would pass (' ~ gen_restart | join(', ') ~ ')') if not gen_pre_failures else ('preview: preflight would FAIL: ' ~ gen_pre_failures | map('split', '\\n') | map('first') | join('; ')) }}"
  when: ansible_check_mode and gen_restart | length > 0
  tags: [preflight]

- name: Keep the outcome of each service preflight refused on the host (gen status shows it)
  ansible.builtin.script:
    cmd: "gen-rollout.py record {{ {'outcome': 'refused by preflight', 'units': units, 'reasons': dict(units | zip(gen_pre_failures | map('split', '\\n') | map('first'))), 'inventory': inventory_hostname, 'digest': gen_digest} | to_json | b64encode }}"
    executable: "{{ gen_python | quote }}"
  vars:
    units: "{{ gen_pre_failures | map('split', ' ') | map('first') | list }}"
  changed_when: false
  when: gen_pre_failures | length > 0 and not ansible_check_mode
  tags: [preflight]

- name: Stop before anything running is touched when a preflight check failed on a host of this batch
  ansible.builtin.fail:
    # The deciding line of every refusal first, then each one's detail (at most its last 30 lines).
    msg: "@REFUSALS_STOPPED@"
  vars:
    F: "{{ ansible_play_batch | map('extract', hostvars, 'gen_pre_failures') | flatten }}"
  # The preview goes on to show every file diff; its last step fails for the refusals.
  when: F | length > 0 and not ansible_check_mode
  tags: [preflight]

- name: Keep the live files of each changed service as its previous set (under /var/lib/gen/previous)
  ansible.builtin.script:
    cmd: "gen-rollout.py save {{ gen_scope | selectattr('unit', 'in', gen_changed + gen_restart) | list | to_json | b64encode }}"
    executable: "{{ gen_python | quote }}"
  when: (gen_changed + gen_restart) | length > 0 and not ansible_check_mode
  tags: [copy]

- name: Install the rendered files (units pass systemd-analyze verify first)
  ansible.builtin.copy:
    src: "{{ gen_output_dir }}/{{ inventory_hostname }}/{{ item.path }}"
    dest: "/{{ item.path }}"
    mode: "{{ item.mode }}"
    owner: root
    group: root
    validate: "{{ (gen_verify_unit ~ ' ' ~ item.unit) if item.unit is defined else omit }}"
  loop: "{{ gen_files | selectattr('service', 'in', gen_scope | map(attribute='unit') | list) | list }}"
  loop_control:
    label: "/{{ item.path }}"
  register: gen_installed
  tags: [copy]

- name: Reload systemd (a unit file changed)
  ansible.builtin.systemd_service:
    daemon_reload: true
  when: gen_installed.results | default([]) | selectattr('changed') | selectattr('item.unit', 'defined') | list | length > 0
  tags: [copy]

- name: Keep enabled false services stopped and disabled (never started)
  ansible.builtin.systemd_service:
    name: "{{ item.unit }}"
    state: stopped
    enabled: false
  loop: "{{ gen_scope | rejectattr('enabled') | list }}"
  loop_control:
    label: "{{ item.unit }}"
  tags: [restart]

- name: Restart every changed service of the batch at once (no rank waits for another)
  ansible.builtin.script:
    cmd: "gen-rollout.py start {{ gen_scope | selectattr('unit', 'in', gen_restart) | list | to_json | b64encode }}"
    executable: "{{ gen_python | quote }}"
  register: gen_start
  when: gen_restart | length > 0 and not ansible_check_mode
  tags: [restart]

- name: Wait until each restarted service is active and answers its own /health
  ansible.builtin.script:
    cmd: "gen-rollout.py wait {{ {'services': gen_scope | selectattr('unit', 'in', gen_restart) | list, 'started': @JSON_START@} | to_json | b64encode }}"
    executable: "{{ gen_python | quote }}"
  register: gen_wait
  changed_when: false
  failed_when: false
  when: gen_restart | length > 0 and not ansible_check_mode
  tags: [restart]

- name: Note the services that did not become healthy
  ansible.builtin.set_fact:
    gen_failures: "{{ @JSON_WAIT@ | dict2items | map(attribute='value') | rejectattr('ok') | list }}"
  when: gen_wait is not skipped and gen_wait.stdout is defined
  tags: [restart]

- name: Decide what rolls back (a group, or a batch past its failure budget, as a whole; else the failed services)
  ansible.builtin.set_fact:
    gen_rollback: "{{ (gen_scope | selectattr('unit', 'in', gen_changed + gen_restart) | list) if (gen_rollout_group != '' and failed | length > 0) or (failed | length * 100 > gen_max_fail_percentage | int * ansible_play_batch | length) else (gen_scope | selectattr('unit', 'in', gen_failures | map(attribute='unit') | list) | list) }}"
    gen_batch_failed: "{{ failed }}"
  vars:
    failed: "{{ ansible_play_batch | map('extract', hostvars) | selectattr('gen_failures') | map(attribute='inventory_hostname') | list }}"
  tags: [restart]

- name: Roll back (previous set restored byte for byte, reloaded, restarted; a new service is disabled)
  ansible.builtin.script:
    cmd: "gen-rollout.py rollback {{ gen_rollback | to_json | b64encode }}"
    executable: "{{ gen_python | quote }}"
  register: gen_rolled
  when: gen_rollback | length > 0
  tags: [restart]

- name: Wait until each rolled-back service is healthy again
  ansible.builtin.script:
    cmd: "gen-rollout.py wait {{ {'services': gen_rollback | selectattr('unit', 'in', @JSON_ROLLED@ | dict2items | selectattr('value.active') | map(attribute='key') | list) | list, 'started': @JSON_ROLLED@} | to_json | b64encode }}"
    executable: "{{ gen_python | quote }}"
  register: gen_rewait
  changed_when: false
  failed_when: false
  when: gen_rollback | length > 0
  tags: [restart]

- name: Keep the outcome of each restarted service that stays on the new files (gen status shows it)
  ansible.builtin.script:
    cmd: "gen-rollout.py record {{ {'outcome': 'applied', 'units': units, 'reason': 'active and answering /health after the restart', 'inventory': inventory_hostname, 'digest': gen_digest} | to_json | b64encode }}"
    executable: "{{ gen_python | quote }}"
  vars:
    units: "{{ gen_restart | difference(gen_rollback | map(attribute='unit') | list) }}"
  changed_when: false
  when: units | length > 0 and not ansible_check_mode
  tags: [restart]

- name: Keep the outcome of each rolled-back service on the host (gen status shows it)
  ansible.builtin.script:
    cmd: "gen-rollout.py record {{ {'outcome': 'rolled back', 'units': gen_rollback | map(attribute='unit') | list, 'reasons': dict(gen_failures | map(attribute='unit') | zip(gen_failures | map(attribute='reason'))), 'reason': ('rolled back with its group ' ~ gen_rollout_group) if gen_rollout_group else ('rolled back with its batch: ' ~ gen_batch_failed | join(', ') ~ ' failed'), 'down': (R | dict2items | rejectattr('value.ok') | map(attribute='key') | list), 'inventory': inventory_hostname, 'digest': gen_digest} | to_json | b64encode }}"
    executable: "{{ gen_python | quote }}"
  vars:
    R: "{{ @JSON_REWAIT@ if gen_rewait.stdout is defined else {} }}"
  changed_when: false
  when: gen_rollback | length > 0
  tags: [restart]

- name: Fail with the reason first, then the failed check, the rollback and the journal excerpt
  ansible.builtin.fail:
    msg: "{% for f in gen_failures %}{{ f.unit }} on {{ inventory_hostname }}: {{ f.reason }}\\n{% endfor %}{% if not gen_failures and gen_rollout_group %}rolled back with its group {{ gen_rollout_group }}: {{ ansible_play_batch | map('extract', hostvars, 'gen_failures') | flatten(levels=1) | map(attribute='unit') | join(', ') }} failed on another rank\\n{% elif not gen_failures %}rolled back with its batch: {{ gen_batch_failed | length }} of its {{ ansible_play_batch | length }} host(s) failed ({{ gen_batch_failed | join(', ') }}), more than the failure budget max_fail_percentage {{ gen_max_fail_percentage }}%\\n{% endif %}rollback: {% for r in R.values() %}{{ r.detail if r.ok else ('FAILED, ' ~ r.unit ~ ' is down: ' ~ r.reason ~ ' (' ~ r.detail ~ ')') }}{{ '' if loop.last else '; ' }}{% else %}nothing to restart{% endfor %}{% for f in gen_failures %}{{ '\\n' }}--- {{ f.unit }} on {{ inventory_hostname }} failed its {{ f.check }} check: {{ f.detail }}\\n--- journal of {{ f.unit }} since the failed start (excerpt; all of it: gen status --host {{ inventory_hostname }} --service {{ f.unit | regex_replace('^sglang-', '') | regex_replace('[.]service$', '') }}) ---\\n{{ f.journal }}{% endfor %}"
  vars:
    R: "{{ @JSON_REWAIT@ if gen_rewait.stdout is defined else {} }}"
  when: gen_rollback | length > 0
  tags: [restart]

- name: Keep the other enabled services enabled and running
  ansible.builtin.systemd_service:
    name: "{{ item.unit }}"
    state: started
    enabled: true
  loop: "{{ gen_scope | selectattr('enabled') | rejectattr('unit', 'in', gen_restart) | list }}"
  loop_control:
    label: "{{ item.unit }}"
  tags: [restart]

- name: Verify that each enabled service answers /health with 200
  ansible.builtin.uri:
    url: "{{ item.health_url }}"
    status_code: 200
    timeout: 5
  register: gen_health
  until: gen_health.status == 200
  retries: 30
  delay: 2
  loop: "{{ gen_scope | selectattr('enabled') | list }}"
  loop_control:
    label: "{{ item.unit }} {{ item.health_url }}"
  when: not ansible_check_mode
  tags: [verify]

- name: "Preview (--check): fail where the preflight checks would fail (nothing was changed)"
  ansible.builtin.fail:
    msg: "@REFUSALS_PREVIEW@"
  vars:
    F: "{{ gen_pre_failures }}"
  when: ansible_check_mode and gen_pre_failures | length > 0
  tags: [preflight]
"""


# The preflight refusals F as one message: every deciding line first, then @SAYS@, then each
# refusal's detail (its last 30 lines).
_REFUSALS = ("{% for f in F %}{{ f.split('\\n')[0] }}\\n{% endfor %}@SAYS@{% for f in F if '\\n' in f %}"
             "{{ '\\n' }}--- {{ f.split('\\n')[0] }}\\n{{ f.split('\\n', 1)[1].split('\\n')[-30:] | join('\\n') }}"
             "{% endfor %}")


def _json_of(var: str) -> str:
    return _JSON.replace("R.", f"{var}.")


def tasks_text() -> str:
    """The tasks file's body (YAML)."""
    return (TASKS.replace("@REFUSALS_STOPPED@", _REFUSALS.replace("@SAYS@", "preflight failed, nothing running was touched"))
            .replace("@REFUSALS_PREVIEW@", _REFUSALS.replace("@SAYS@", "preview: preflight would fail, nothing was changed"))
            .replace("@STAGE@", STAGE_DIR).replace("@MARKER@", MARKER).replace("@JSON@", _JSON)
            .replace("@JSON_START@", _json_of("gen_start")).replace("@JSON_WAIT@", _json_of("gen_wait"))
            .replace("@JSON_ROLLED@", _json_of("gen_rolled")).replace("@JSON_REWAIT@", _json_of("gen_rewait")))
