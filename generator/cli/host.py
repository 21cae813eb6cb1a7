"""``gen host snapshot NAME``: the host's GPU facts, read over ssh, written into hosts/NAME.yaml.

The work is in :mod:`generator.live.host_snapshot`; this module parses the command line,
prints the change as a unified diff (stdout) and the notes (stderr), and writes the file
unless ``--dry-run``.
"""

from __future__ import annotations

from pathlib import Path

import click

from generator.cli import complete, output
from generator.cli.common import EXIT_CODES_HELP, guard, output_options, root_option
from generator.cli.live import ssh_config_option
from generator.errors import ExitCode


@click.group(epilog=EXIT_CODES_HELP)
def host() -> None:
    """Read a host's hardware facts into its inventory (hosts/NAME.yaml)."""


@host.command(epilog=EXIT_CODES_HELP)
@click.argument("name", metavar="NAME", shell_complete=complete.host_names)
@click.option("--dry-run", is_flag=True, help="Print the change; write nothing.")
@ssh_config_option
@root_option
@output_options(output.JSON)
@guard
def snapshot(name: str, dry_run: bool, ssh_config: Path | None, root: Path) -> int:
    """Capture the GPUs (nvidia-smi: name, bus id, memory, compute capability, driver), their
    link matrix, NUMA nodes (sysfs), CUDA and the host SGLang's torch, and update the
    inventory's gpus, numa and facts in place, keeping everything else as written.

    The change is printed as a unified diff; unchanged facts leave the file byte for byte.
    """
    from generator.live.host_snapshot import snapshot_host, write_snapshot

    out = output.current()
    snap = snapshot_host(root, name, ssh_config)
    for note in snap.update.notes:
        out.say(f"gen: note: {note}", err=True)
    written = snap.update.changed and not dry_run
    out.results.update(host=snap.host, path=snap.display, changed=snap.update.changed, written=written,
                       diff=snap.diff, notes=list(snap.update.notes))
    out.data(snap.diff, nl=False)
    if written:
        write_snapshot(snap)
    verb = "would update" if dry_run and snap.update.changed else "updated" if written else "unchanged"
    out.say(f"gen: {verb} {snap.display}: {len(snap.live.gpus)} GPU(s) seen, "
            f"driver {snap.live.driver_version or 'unknown'}", err=True)
    return ExitCode.OK
