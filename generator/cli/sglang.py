"""``gen sglang ...``: capture a pin's flag catalog from a real SGLang, and compare two pins.

* ``gen sglang snapshot --python PATH`` runs the probe with a local interpreter;
  ``--host NAME`` runs it over SSH with the inventory's address, SSH user and port, its
  ``sglang.python``, and records ``git rev-parse HEAD`` of ``sglang.source_dir``.
  The catalog is written to ``catalogs/sglang/<pin>.json`` (or ``--out``).
* ``gen sglang diff PIN_A PIN_B`` prints flags added, removed, renamed, deprecated and
  changed (see :mod:`generator.sglang.catalog_diff`).

The work is in :mod:`generator.sglang.snapshot` and :mod:`generator.sglang.catalog_diff`; this module
only parses the command line and prints.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import Any

import click

from generator.sglang.catalog import Catalog, known_pins, load_catalog, load_flag_tables
from generator.sglang.catalog_diff import diff_catalogs, format_diff
from generator.cli import complete, output
from generator.cli.common import (EXIT_CODES_HELP, NAME, SIZE_GB, RegularFile, guard, output_options, report, report_run,
                                  root_option, ssh_option)
from generator.cli.output import diagnostic_json
from generator.errors import CatalogMissingError, ExitCode, InputError
from generator.load.captured import MAX_CAPTURED_BYTES
from generator.load.files import read_file
from generator.importer.build import import_command as import_manifest
from generator.live.target import target_for_host
from generator.pipeline.fleet import load_inventory_host
from generator.load.resolve import Host
from generator.sglang.snapshot import (
    SnapshotError,
    catalog_path,
    catalog_pin,
    snapshot_python,
    snapshot_remote,
    without_date,
    write_catalog,
)
from generator.pipeline.upgrade import format_report, upgrade_report
from generator.load import json_text


@click.group(epilog=EXIT_CODES_HELP)
def sglang() -> None:
    """Capture and compare SGLang flag catalogs (catalogs/sglang/<pin>.json)."""


def _load_host(root: Path, name: str) -> Host:
    """The inventory ``name`` from ``root/hosts``; its own findings are printed first.

    An unknown name raises (exit 2); a file that does not load is exit 1 with its findings.
    """
    host, own = load_inventory_host(root, name)  # the per-host pipeline, without rendering
    if host is None:
        raise InputError(own)
    report(own)
    return host


def _same_capture(path: Path, catalog: dict[str, Any]) -> bool:
    """True when ``path`` already holds this catalog, apart from the capture date."""
    data, problem = read_file(path, str(path), limit=MAX_CAPTURED_BYTES)  # no link, FIFO or /dev/zero
    try:
        old = json_text.loads(data) if data is not None and problem is None else None
    except ValueError:
        return False
    return isinstance(old, dict) and without_date(old) == without_date(catalog)


def _snapshot_env(python: str | None, inventory: Host | None, ssh_options: tuple[str, ...],
                  catalog: dict[str, Any], path: Path) -> None:
    """Capture the env catalog with the same interpreter and write it beside the flag catalog."""
    from generator.sglang.envsnapshot import env_path_for, snapshot_env_python, snapshot_env_remote

    commit = catalog["sglang"].get("commit")
    _snapshot_beside(python, inventory, ssh_options, env_path_for(path),
                     lambda local: snapshot_env_python(local, commit=commit),
                     lambda prefix, remote: snapshot_env_remote(prefix, remote, commit=commit),
                     "SGLang's environment variables")
    _snapshot_architectures(python, inventory, ssh_options, path)


def _snapshot_beside(python: str | None, inventory: Host | None, ssh_options: tuple[str, ...], path: Path,
                     local: Callable[[str], bytes], remote: Callable[[Sequence[str], str], bytes], what: str) -> None:
    """Capture one companion file of the pin's flag catalog with the same SGLang (locally or over ssh:
    the same ssh command line as the flag catalog's capture)."""
    from generator.sglang.envsnapshot import write_env_catalog

    if python:
        text = local(python)
    else:
        assert inventory is not None
        text = remote(target_for_host(inventory, ssh_args=ssh_options).ssh_argv(), inventory.sglang.python)
    state = "wrote    " if write_env_catalog(text, path) else "unchanged"
    output.current().say(f"{state} {path}: {what}")


def _snapshot_architectures(python: str | None, inventory: Host | None, ssh_options: tuple[str, ...],
                            path: Path) -> None:
    """Capture the model classes the same SGLang registers, beside its flag catalog."""
    from generator.sglang.architectures import (architectures_path, snapshot_architectures_python,
                                                snapshot_architectures_remote)

    _snapshot_beside(python, inventory, ssh_options, architectures_path(path), snapshot_architectures_python,
                     snapshot_architectures_remote, "the model architectures SGLang registers")
    _snapshot_pipeline(python, inventory, ssh_options, path)


def _snapshot_pipeline(python: str | None, inventory: Host | None, ssh_options: tuple[str, ...],
                       path: Path) -> None:
    """Capture which of those architectures split their layers across pipeline stages."""
    from generator.sglang.pipeline import pipeline_path, snapshot_pipeline_python, snapshot_pipeline_remote

    _snapshot_beside(python, inventory, ssh_options, pipeline_path(path), snapshot_pipeline_python,
                     snapshot_pipeline_remote, "which architectures split their layers across pipeline stages")


def _snapshot_devices(python: str | None, inventory: Host | None, ssh_options: tuple[str, ...],
                      path: Path) -> None:
    """Capture what the same SGLang checks against the GPU, beside its flag catalog."""
    from generator.sglang.devices import devices_path, snapshot_devices_python, snapshot_devices_remote

    _snapshot_beside(python, inventory, ssh_options, devices_path(path), snapshot_devices_python,
                     snapshot_devices_remote, "SGLang's GPU checks (capability probes, quantization minimums, "
                     "attention registry)")


@sglang.command(epilog=EXIT_CODES_HELP)
@click.option("--python", "python", metavar="PATH",
              help="A local interpreter in which `import sglang` works.")
@click.option("--host", metavar="NAME", shell_complete=complete.host_names,
              help="Capture over SSH from this inventory host (its sglang.python, source_dir).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write here instead of catalogs/sglang/<pin>.json under --root.")
@click.option("--commit", metavar="HASH",
              help="With --python: the git commit of a source install (the pin becomes git-HASH).")
@ssh_option
@root_option
@output_options()
@guard
def snapshot(python: str | None, host: str | None, out: Path | None, commit: str | None,
             ssh_options: tuple[str, ...], root: Path) -> int:
    """Capture the flag and env catalogs of a real SGLang (SGLang is imported: 5-50 s)."""
    if bool(python) == bool(host):
        raise click.UsageError("give --python PATH or --host NAME (one of them)")
    inventory: Host | None = None
    if python:
        if ssh_options:
            raise click.UsageError("--ssh-option only applies to --host")
        catalog = snapshot_python(python, commit=commit)
    else:
        if commit:
            raise click.UsageError("--commit only applies to --python; --host reads it from "
                                   "the host's sglang.source_dir")
        assert host is not None
        inventory = _load_host(root, host)
        catalog = snapshot_remote(target_for_host(inventory, ssh_args=ssh_options).ssh_argv(),
                                  inventory.sglang.python, source_dir=inventory.sglang.source_dir)
    try:
        pin: str | None = catalog_pin(catalog)  # what the probe printed, proven a pin first
    except SnapshotError:
        if out is None:
            raise
        pin = None  # --out FILE: the operator names the file; the catalog says what it is
    path = out or catalog_path(catalog, root)
    count = sum(a.get("kind") != "help" for a in catalog["actions"])
    what = f"SGLang {catalog['sglang']['version']} ({catalog['sglang'].get('source')}), {count} flags"
    if _same_capture(path, catalog):
        # Keep the committed date: a re-capture of the same SGLang changes nothing in git.
        output.current().say(f"unchanged {path}: pin {pin or '(none: not a pin)'}, {what}")
    else:
        write_catalog(catalog, path)
        output.current().say(f"wrote     {path}: pin {pin or '(none: not a pin)'}, {what}")
    _snapshot_env(python, inventory, ssh_options, catalog, path)
    _snapshot_devices(python, inventory, ssh_options, path)
    if inventory is not None and pin is not None and inventory.sglang.pin != pin:
        output.current().error_line(
            f"gen: note: host '{inventory.name}' pins SGLang '{inventory.sglang.pin}' but "
            f"runs '{pin}'; set sglang.pin: \"{pin}\" in {inventory.doc.path} to check "
            f"its services against what it runs")
    return ExitCode.OK


def _pin_catalog(root: Path, pin: str, param: str) -> Catalog:
    """The committed catalog of ``pin``; an unknown pin is a usage error (exit 2)."""
    try:
        return load_catalog(root, pin)
    except CatalogMissingError as exc:
        raise click.BadParameter(str(exc), param_hint=param) from None


def used_flags(root: Path, catalogs: list[Catalog]) -> dict[str, list[str]]:
    """Option string -> the ``host/service`` whose rendered argv sets it, in every spelling
    the ``catalogs`` have for the same setting (so a renamed flag is still found)."""
    from generator.pipeline.fleet import run_fleet  # every host's full render

    result = run_fleet(root, None, detail=True)
    report_run(result)
    by_dest: dict[str, set[str]] = {}
    for render in result.renders:
        for svc in render.services:
            for group in svc.argv.groups:
                by_dest.setdefault(group.action.dest, set()).add(f"{render.host.name}/{svc.placement.service.name}")
    used: dict[str, set[str]] = {}
    for catalog in catalogs:
        tables = load_flag_tables(catalog.source_file)
        for action in catalog.actions:
            users = {u for name in tables.dest_names(action.dest) for u in by_dest.get(name, ())}
            for opt in action.option_strings if users else ():
                used.setdefault(opt, set()).update(users)
    return {opt: sorted(users) for opt, users in used.items()}


@sglang.command(epilog=EXIT_CODES_HELP)
@click.argument("pin_a", shell_complete=complete.pins)
@click.argument("pin_b", shell_complete=complete.pins)
@click.option("--used", is_flag=True, help="Mark the flags this repository's rendered services use.")
@root_option
@output_options()
@guard
def diff(pin_a: str, pin_b: str, used: bool, root: Path) -> int:
    """Flags and SGLang environment variables added, removed and changed from PIN_A to PIN_B.

    A release without a committed catalog is compared from the flag history
    (catalogs/sglang/history.json: 34 releases since 0.4.0), flags only. --used marks the
    flags this repository's rendered services set (committed pins only).
    """
    known = set(known_pins(root))
    if pin_a not in known or pin_b not in known:
        if used:
            raise click.UsageError("--used needs two pins with a committed catalog (catalogs/sglang/)")
        return _diff_from_history(root, pin_a, pin_b)
    a = _pin_catalog(root, pin_a, "PIN_A")
    b = _pin_catalog(root, pin_b, "PIN_B")
    output.current().data(format_diff(diff_catalogs(a, b), used_flags(root, [a, b]) if used else None), nl=False)
    _diff_env(a, b)
    return ExitCode.OK


def _diff_from_history(root: Path, pin_a: str, pin_b: str) -> int:
    """``gen sglang diff`` between releases the history knows (flags only)."""
    from generator.sglang.catalog import catalogs_dir
    from generator.sglang.flaghistory import format_history_diff, load_history, resolve_version

    history = load_history(catalogs_dir(root) / "history.json")
    found = [resolve_version(history, p) if history else None for p in (pin_a, pin_b)]
    for pin, version, param in zip((pin_a, pin_b), found, ("PIN_A", "PIN_B"), strict=True):
        if version is None:  # neither committed nor in the history: the usual message
            _pin_catalog(root, pin, param)
    assert history is not None and found[0] is not None and found[1] is not None
    output.current().data(format_history_diff(history, found[0], found[1]), nl=False)
    return ExitCode.OK


def _diff_env(a: Catalog, b: Catalog) -> None:
    """The environment variables' part of ``gen sglang diff``, when both pins have env catalogs."""
    from generator.sglang.envcheck import env_catalog_path, load_env_catalog
    from generator.sglang.envdiff import format_env_diff

    ea = load_env_catalog(env_catalog_path(a.source_file, a.pin), a.pin)
    eb = load_env_catalog(env_catalog_path(b.source_file, b.pin), b.pin)
    if ea is None or eb is None:
        missing = a.pin if ea is None else b.pin
        output.current().data(f"\n(no environment catalog for SGLang {missing}: variables not compared)")
        return
    output.current().data("\n" + format_env_diff(ea, eb), nl=False)


@click.command("import", epilog=EXIT_CODES_HELP)
@click.option("--sglang", "pin", metavar="PIN", shell_complete=complete.pins,
              help="Check the flags against this SGLang pin.")
@click.option("--host", metavar="NAME", shell_complete=complete.host_names,
              help="Check against the pin of this inventory host.")
@click.option("--file", "file", metavar="FILE", type=RegularFile(allow_dash=True),
              help="Read the command from FILE (a shell command or a unit with ExecStart=); "
                   "'-' reads stdin.")
@click.option("--name", type=NAME, metavar="NAME", help="The manifest's name (default: from the command).")
@click.option("--size-gb", type=SIZE_GB, metavar="GB",
              help="Size of the weights on disk; without it size_gb is left to fill in.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@root_option
@output_options(output.JSON)
@guard
def import_command(pin: str | None, host: str | None, file: str | None, name: str | None,
                   size_gb: float | None, command: tuple[str, ...], root: Path) -> int:
    """Turn an SGLang command (after --) or an old unit into a model manifest on stdout.

    \b
    gen import --sglang 0.5.9 -- python -m sglang.launch_server --model-path ... --tp 4
    gen import --host llm-two --file old.service
    pbcopy-output | gen import --sglang 0.5.23 --file -

    Every flag is checked against the pin's catalog; problems go to stderr with their
    line and column, and on any error no manifest is printed (exit 1).
    """
    if bool(pin) == bool(host):
        raise click.UsageError("give --sglang PIN or --host NAME (one of them)")
    if bool(file) == bool(command):
        raise click.UsageError("give the command after --, or --file FILE (or --file - for stdin)")
    model_root: str | None = None
    if host is not None:
        inventory = _load_host(root, host)
        pin, model_root = inventory.sglang.pin, inventory.model_root
    assert pin is not None
    catalog = _pin_catalog(root, pin, "--sglang" if host is None else "--host")
    others = [load_catalog(root, p) for p in known_pins(root) if p != pin]
    if file == "-":
        text, source = sys.stdin.read(), "<stdin>"
    elif file is not None:
        try:
            text, source = Path(file).read_text(encoding="utf-8"), file
        except (OSError, UnicodeDecodeError) as exc:
            raise click.BadParameter(f"cannot read {file}: {exc}", param_hint="--file") from None
    elif len(command) == 1 and any(c.isspace() for c in command[0]):
        # The whole command as one quoted argument (`gen import -- "python -m ..."`): its own
        # quoting is read as the shell would have, so an unclosed quote inside is reported.
        text, source = command[0], "<command>"
    else:
        text, source = shlex.join(command), "<command>"
    result = import_manifest(text, source, catalog, others, name=name, size_gb=size_gb, model_root=model_root,
                             root=root)
    report(list(result.diagnostics))
    out = output.current()
    out.results.update(pin=pin, source=source, manifest=result.manifest)
    if result.manifest is None:
        out.fail("gen: no manifest printed: fix the errors above")
        return ExitCode.FINDINGS
    out.data(result.manifest, nl=False)
    return ExitCode.OK


def check_pin(root: Path, pin: str) -> int:
    """``gen check --sglang PIN``: every service checked against another pin; nothing rendered.

    Prints one block per service (its findings with file, line and fix, and how its argv
    would render differently), then a summary; exit 1 when any service would break.
    """
    note = None
    if pin not in known_pins(root):
        from generator.sglang.historycatalog import history_catalog

        found = history_catalog(root, pin)
        if found is None:
            _pin_catalog(root, pin, "--sglang")  # the usage error, with how to capture one
        else:
            note = found.note
    result = upgrade_report(root, pin)
    out = output.current()
    if note:
        out.say(f"note: {note}")
    out.results.update(pin=pin, ok=result.ok, note=note, services=[{
        "host": s.host, "service": s.service, "current_pin": s.current_pin, "breaks": s.breaks,
        "diagnostics": [diagnostic_json(d) for d in s.diagnostics],
        "renders_no_longer": list(s.removed_words), "renders_instead": list(s.added_words),
    } for s in result.services])
    out.diagnostics.extend(d for s in result.services for d in s.diagnostics)  # for sarif, summary
    for line in format_report(result):
        out.say(line)
    report(list(result.other))
    return ExitCode.OK if result.ok else ExitCode.FINDINGS
