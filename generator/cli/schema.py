"""``gen schema``: the JSON Schemas of manifests and inventories, and the files generated from them.

* ``gen schema model`` / ``gen schema host`` print the JSON Schema (draft 2020-12);
* ``gen schema --write`` writes ``schemas/*.schema.json``, ``docs/manifests.md`` and ``docs/rules.md``
  under ``--root`` (``gen check`` fails when the committed ones are stale).
"""

from __future__ import annotations

from pathlib import Path

import click

from generator.cli import output
from generator.cli.common import EXIT_CODES_HELP, guard, output_options, root_option
from generator.cli.generated import generated_files
from generator.cli.schema_pins import schema_file_text
from generator.emit.writer import atomic_write, read_existing
from generator.errors import ExitCode


@click.command("schema", epilog=EXIT_CODES_HELP)
@click.argument("kind", required=False, type=click.Choice(["model", "host", "rollout"]))
@click.option("--write", is_flag=True,
              help="Write schemas/model.schema.json, host.schema.json, rollout.schema.json, docs/manifests.md and docs/rules.md.")
@root_option
@output_options()
@guard
def schema_command(kind: str | None, write: bool, root: Path) -> int:
    """Print the JSON Schema of a model manifest, a host inventory or rollout.yaml (for editors),
    with the parser names, flag choices and flags of ROOT's committed SGLang pins."""
    out = output.current()
    if bool(kind) == write:
        raise click.UsageError("give KIND (model or host), or --write")
    if kind is not None:
        text = schema_file_text(kind, root)
        if text is None:
            out.fail("gen: a catalog of catalogs/sglang/ was edited after its capture: `gen check` says "
                     "where; the schema completes the pins' values again once it is re-captured")
            return ExitCode.FINDINGS
        out.data(text, nl=False)
        return ExitCode.OK
    for path, text in generated_files(root).items():
        same = read_existing(root / path) == text
        if not same:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            atomic_write(root / path, text)
        out.say(f"{'unchanged' if same else 'wrote':9} {path}")
    return ExitCode.OK
