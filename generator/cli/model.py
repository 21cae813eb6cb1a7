"""``gen model snapshot``: capture the facts of the checkpoint a model manifest deploys.

The work is in :mod:`generator.checkpoint.capture` (the sources) and
:mod:`generator.checkpoint.snapshot` (the format); this module parses the command line,
prints every problem positioned, and writes ``catalogs/models/<model>.json`` only when
there is none.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from generator.checkpoint.capture import (
    CaptureError,
    capture_folder,
    capture_host,
    capture_hub,
    checkpoint_document,
    looks_like_repo_id,
    problems_as_diagnostics,
    snapshot_document,
)
from generator.checkpoint.snapshot import render_snapshot, snapshot_path, valid_model_name
from generator.cli import complete, output
from generator.cli.common import EXIT_CODES_HELP, guard, output_options, report, root_option, ssh_option
from generator.errors import Diagnostic, ExitCode
from generator.sglang.envsnapshot import write_env_catalog


@click.group(epilog=EXIT_CODES_HELP)
def model() -> None:
    """Capture model checkpoint facts (catalogs/models/<model>.json)."""


def _capture(source: str, host: str | None, revision: str | None, root: Path, ssh_options: tuple[str, ...],
             role: str) -> tuple[dict[str, Any], list[Diagnostic]]:
    """One checkpoint's snapshot part and the problems found reading it."""
    if host is not None:
        from generator.cli.sglang import _load_host
        from generator.live.target import target_for_host

        inventory = _load_host(root, host)
        prefix = target_for_host(inventory, ssh_args=ssh_options).ssh_argv()
        facts, where = capture_host(prefix, inventory.sglang.python, host, source)
        display = f"{host}:{source}"
    elif revision is not None or looks_like_repo_id(source):
        facts, where = capture_hub(source, revision)
        display = f"{source}@{where['commit'][:12]}"
    else:
        if not os.path.isdir(source):
            raise click.BadParameter(f"{source} is neither a checkpoint folder nor a hub repo id (org/name)",
                                     param_hint=role)
        facts, where = capture_folder(source)
        display = source
    document = checkpoint_document(facts, where)  # adds the weights' consistency problems
    return document, problems_as_diagnostics(facts, display)


@model.command(epilog=EXIT_CODES_HELP)
@click.option("--model", "name", required=True, metavar="NAME", shell_complete=complete.model_names,
              help="The model manifest (models/NAME.yaml) this checkpoint serves.")
@click.argument("source")
@click.option("--draft", metavar="SOURCE", help="The draft model's checkpoint (EAGLE/EAGLE3), same kinds of source.")
@click.option("--host", metavar="H", shell_complete=complete.host_names,
              help="SOURCE (and --draft) are folders on this inventory host, read over SSH.")
@click.option("--revision", metavar="REV", help="SOURCE is a hub repo id: this branch, tag or commit (default main).")
@click.option("--draft-revision", metavar="REV", help="The draft's hub revision.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write here instead of catalogs/models/NAME.json under --root.")
@ssh_option
@root_option
@output_options()
@guard
def snapshot(name: str, source: str, draft: str | None, host: str | None, revision: str | None,
             draft_revision: str | None, out: Path | None, ssh_options: tuple[str, ...], root: Path) -> int:
    """Read SOURCE's config files, safetensors index and headers (never the weights) into
    catalogs/models/NAME.json.

    \b
    gen model snapshot --model qwen3.5-122b-a10b /shared/models/Qwen3.5-122B-A10B
    gen model snapshot --model kimi --host llm-two /shared/models/Kimi-K2.5 --draft /shared/models/K-eagle3
    gen model snapshot --model ds Qwen/Qwen3.5-122B-A10B --revision main
    """
    if not valid_model_name(name):
        raise click.BadParameter(f"'{name}' cannot name a model manifest (lower-case letters, digits, . _ -)",
                                 param_hint="--model")
    if host is not None and (revision or draft_revision):
        raise click.UsageError("--revision is for a hub repo id; with --host SOURCE is a folder on that host")
    if ssh_options and host is None:
        raise click.UsageError("--ssh-option only applies to --host")
    try:
        checkpoint, problems = _capture(source, host, revision, root, ssh_options, "SOURCE")
        draft_part = None
        if draft is not None:
            draft_part, more = _capture(draft, host, draft_revision, root, ssh_options, "--draft")
            problems += more
    except CaptureError as exc:
        output.current().fail(f"gen: {exc}")
        return ExitCode.ENVIRONMENT
    if not (root / "models").joinpath(f"{name}.yaml").is_file() and not (root / "models" / f"{name}.yml").is_file():
        output.current().say(f"gen: note: models/{name}.yaml does not exist yet: the snapshot is used once a "
                             "manifest of that name does", err=True)
    report(problems)
    if any(d.is_error for d in problems):
        output.current().fail(f"gen: no snapshot written: the checkpoint has {len(problems)} problem(s)")
        return ExitCode.FINDINGS
    path = out or snapshot_path(root, name)
    text = render_snapshot(snapshot_document(name, checkpoint, draft_part))
    weights = checkpoint["weights"] or {}
    what = (f"{checkpoint['config'].get('architectures', ['?'])[0] if checkpoint['config'].get('architectures') else '?'}, "
            f"{len(weights.get('shards', []))} shard(s), {weights.get('total_size') or 0} bytes"
            + (", with its draft" if draft_part else ""))
    # the one writer of captured files: atomic, and left alone when it already holds this text
    state = "wrote    " if write_env_catalog(text.encode("utf-8"), path) else "unchanged"
    output.current().say(f"{state} {path}: {what}")
    return ExitCode.OK
