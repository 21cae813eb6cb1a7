"""Shared pieces of the command line: exit codes, diagnostics output, the error guard.

Every command module (cli.py, cli_*.py) wraps its commands in :func:`guard`, so user
input never produces a Python traceback and every failure maps to a documented code.
"""

from __future__ import annotations

import functools
import math
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import click

from generator.cli import output
from generator.errors import Diagnostic, ExitCode, GenError, InputError
from generator.load.limits import MAX_JOBS

if TYPE_CHECKING:
    from generator.pipeline.fleet import RenderResult

EXIT_CODES_HELP = """\b
Exit codes:
  0  success
  1  findings: invalid input, differences (diff/check), failed live checks
  2  usage error: bad command line, unknown host
  3  environment failure: a file cannot be written, a template is broken, a host is unreachable
  4  internal error in gen (set GEN_DEBUG=1 for the traceback)
"""


def report(diagnostics: list[Diagnostic]) -> None:
    """Print every diagnostic to stderr, then a one-line count (or keep them for --format json)."""
    output.current().report(list(diagnostics))


def report_run(result: RenderResult, more: Sequence[Diagnostic] = ()) -> None:
    """A fleet run's findings (:func:`report`), with MORE of the command's own (rollout.yaml's),
    and its acknowledged warnings (``result.acknowledged``, generator/pipeline/acks.py)."""
    report(list(result.diagnostics) + list(more))
    output.current().acknowledge([(a.diagnostic, a.ack.reason, a.ack.where) for a in result.acknowledged])


def guard(fn: Callable[..., int]) -> Callable[..., Any]:
    """Turn gen's errors into messages and exit codes: never a traceback for user input."""

    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            code = fn(*args, **kwargs)
        except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - every exception ends in a code, deliberately
            code = _exit_code_for(exc, kwargs.get("root"))
        output.current().finish(int(code))  # --format json/sarif: the one document, last
        sys.exit(int(code))

    return functools.wraps(fn)(wrapper)


def _exit_code_for(exc: Exception, root: object = None) -> ExitCode:
    """Print one message for ``exc`` and pick its documented exit code."""
    if isinstance(exc, InputError):
        report(exc.diagnostics)
        return ExitCode.FINDINGS
    if isinstance(exc, GenError):  # each class carries its code (errors.GenError)
        output.current().fail(f"gen: {_repo_relative(str(exc), root)}")
        return exc.exit_code
    # Anything else is a bug in gen: one clear line, the traceback only on request.
    if os.environ.get("GEN_DEBUG"):
        import traceback  # a bug's report only: not imported on every run

        traceback.print_exception(exc)
    output.current().fail(f"gen: internal error: {type(exc).__name__}: {exc} (set GEN_DEBUG=1 for the traceback)")
    return ExitCode.INTERNAL


def _repo_relative(text: str, root: object) -> str:
    """``text`` with the repository's own path (``--root``) left out of the files it names, as
    every diagnostic names them (``catalogs/sglang/0.5.9.json``, not ``/ci/work/…/catalogs/…``)."""
    if not isinstance(root, Path):
        return text
    for prefix in {str(root), str(root.absolute()), os.path.realpath(root)}:
        if prefix not in ("", ".", "/"):
            text = text.replace(prefix.rstrip("/") + "/", "")
    return text


# --jobs of render/diff/check/verify: 0, negative or more than MAX_JOBS is a usage error (2).
JOBS = click.IntRange(min=1, max=MAX_JOBS)


class FiniteFloat(click.FloatRange):
    """A float option in [min, max] that refuses NaN and infinity (click's FloatRange lets NaN
    through: every comparison with NaN is false)."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """Convert as FloatRange does, then refuse what is not a finite number (exit 2)."""
        result = super().convert(value, param, ctx)
        if not math.isfinite(result):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return result


class RegularFile(click.Path):
    """An existing regular file (a symlink to one is fine: the operator names it). A FIFO or a
    device would block the read forever (``--inventory``, ``--file``): a usage error, exit 2."""

    def __init__(self, allow_dash: bool = False, path_type: Any = None) -> None:
        super().__init__(exists=True, dir_okay=False, allow_dash=allow_dash, path_type=path_type)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """Check as click.Path does, then that the file is a regular one."""
        result = super().convert(value, param, ctx)
        if str(value) != "-" and not stat.S_ISREG(os.stat(value).st_mode):
            self.fail(f"{str(value)!r} is not a regular file", param, ctx)
        return result


class Name(click.ParamType):
    """A model, host or service name gen will write (``gen import --name``): the one name check,
    systemd.name_problem, as the manifest's loader applies it (S007). A newline, a control
    character, a device name (CON) or a YAML boolean is a usage error (exit 2), not a manifest
    that gen check then refuses, nor a name that breaks the file written."""

    name = "name"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The name, when systemd.name_problem accepts it."""
        from generator.systemd import name_problem

        problem = name_problem(value)
        if problem is not None:
            self.fail(f"{value!r} is not a name: {problem}", param, ctx)
        return value


NAME = Name()

# --size-gb of `gen import`: the bounds of weights.size_gb in load/schema.py.
SIZE_GB = FiniteFloat(min=0.001, max=100_000)

# A --root that does not exist, or is a file, is a usage error (exit 2), not a finding.
root_option = click.option(
    "--root", type=click.Path(exists=True, file_okay=False, path_type=Path), default=Path("."),
    show_default=True, help="The deployment repository (with hosts/, models/, templates/).")

# --ssh-option of the captures that read a host over SSH (gen sglang snapshot, gen model snapshot).
ssh_option = click.option("--ssh-option", "ssh_options", multiple=True, metavar="OPT",
                          help="Extra ssh argument before the destination, e.g. -F CONFIG (repeatable).")


def output_options(*formats: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """-q/--quiet, -v/--verbose and (when ``formats`` name more than text) --format, once for all.

    Put it above :func:`guard`: it takes its options out of the command's arguments and
    keeps an :class:`generator.cli.output.Output` in click's context, which ``report``,
    ``guard`` and the command itself then use (pip-tools defines shared options this way).
    """
    choices = (output.TEXT, *formats)

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            ctx = click.get_current_context()
            quiet, verbose = kwargs.pop("quiet"), kwargs.pop("verbose")
            if quiet and verbose:
                raise click.UsageError("give -q or -v, not both")
            ctx.meta["gen.output"] = output.Output(
                # "gen sglang diff" -> "sglang diff"; a command invoked on its own is its name
                command=" ".join(ctx.command_path.split()[1:]) or ctx.info_name or "gen",
                format=kwargs.pop("output_format", output.TEXT),
                verbosity=-1 if quiet else verbose, color=output.color_wanted())
            return fn(*args, **kwargs)

        wrapped: Callable[..., Any] = click.option(
            "-q", "--quiet", is_flag=True, help="Print errors only.")(wrapper)
        wrapped = click.option("-v", "--verbose", count=True,
                               help="Also say what each stage decided (placement, NUMA, defaults).")(wrapped)
        if len(choices) > 1:
            wrapped = click.option(
                "--format", "output_format", type=click.Choice(choices), default=output.TEXT, show_default=True,
                help="Output format: text for people; json is one versioned document on stdout "
                     "(docs/json-output.md)" + ("; sarif 2.1.0 for code scanning" if output.SARIF in choices else "")
                     + ".")(wrapped)
        return wrapped

    return decorate
