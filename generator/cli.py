"""The ``gen`` command line: click, output and exit codes only; the work is in the modules.

Exit codes (also in ``gen --help`` and the README):
  0  success
  1  findings: invalid input, differences (diff/check), failed live checks
  2  usage error: bad command line, unknown host
  3  environment failure: a file could not be written, a template is broken
  4  internal error: a bug in gen (the message says how to get the traceback)
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

import click

from . import __version__
from .errors import Diagnostic, ExitCode, GenError, InputError, TemplateError
from .pipeline import RenderResult, UnknownHostError, run
from .writer import WriteError, apply, unified_diff

EXIT_CODES_HELP = """\b
Exit codes:
  0  success
  1  findings: invalid input, differences (diff/check), failed live checks
  2  usage error: bad command line, unknown host
  3  environment failure: a file could not be written, a template is broken
  4  internal error in gen (set GEN_DEBUG=1 for the traceback)
"""
ENV_FAILURE = 3
INTERNAL = 4


def _report(diagnostics: list[Diagnostic]) -> None:
    """Print every diagnostic to stderr, then a one-line count."""
    for d in diagnostics:
        click.echo(str(d), err=True)
    errors = sum(d.is_error for d in diagnostics)
    warnings = len(diagnostics) - errors
    if diagnostics:
        click.echo(f"gen: {errors} error(s), {warnings} warning(s)", err=True)


def _guard(fn: Callable[..., int]) -> Callable[..., Any]:
    """Turn gen's errors into messages and exit codes: never a traceback for user input."""

    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            code = fn(*args, **kwargs)
        except InputError as exc:
            _report(exc.diagnostics)
            code = ExitCode.FINDINGS
        except UnknownHostError as exc:
            click.echo(f"gen: {exc}", err=True)
            code = ExitCode.USAGE
        except (WriteError, TemplateError) as exc:
            click.echo(f"gen: {exc}", err=True)
            code = ENV_FAILURE
        except GenError as exc:
            click.echo(f"gen: {exc}", err=True)
            code = int(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt):
            raise
        except Exception as exc:  # a bug: one clear line, the traceback only on request
            if os.environ.get("GEN_DEBUG"):
                traceback.print_exc()
            click.echo(f"gen: internal error: {type(exc).__name__}: {exc} "
                       "(set GEN_DEBUG=1 for the traceback)", err=True)
            code = INTERNAL
        sys.exit(int(code))

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


root_option = click.option(
    "--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
    show_default=True, help="The deployment repository (with hosts/, models/, templates/).")


@click.group(epilog=EXIT_CODES_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gen")
def main() -> None:
    """Render version-pinned SGLang systemd services from models/ and hosts/."""


def _hosts(host: tuple[str, ...], all_hosts: bool, required: bool) -> list[str] | None:
    if host and all_hosts:
        raise click.UsageError("give --host or --all, not both")
    if not host and not all_hosts and required:
        raise click.UsageError("give --host NAME or --all")
    return list(host) if host else None


def _render(root: Path, hosts: list[str] | None) -> RenderResult:
    result = run(root, hosts)
    _report(result.diagnostics)
    return result


@main.command(epilog=EXIT_CODES_HELP)
@click.option("--host", multiple=True, metavar="NAME", help="Render this host (repeatable).")
@click.option("--all", "all_hosts", is_flag=True, help="Render every host in hosts/.")
@root_option
@_guard
def render(host: tuple[str, ...], all_hosts: bool, root: Path) -> int:
    """Validate, then write output/<host>/ atomically; print what changed per file."""
    result = _render(root, _hosts(host, all_hosts, required=True))
    if not result.ok:
        click.echo("gen: nothing written", err=True)
        return ExitCode.FINDINGS
    apply(root / "output", result.changes)
    for change in result.changes:
        click.echo(f"{change.action.value:9} output/{change.path}")
    return ExitCode.OK


@main.command(epilog=EXIT_CODES_HELP)
@click.option("--host", multiple=True, metavar="NAME", help="Only this host (repeatable).")
@root_option
@_guard
def diff(host: tuple[str, ...], root: Path) -> int:
    """Show a unified diff between output/ and a fresh render; writes nothing."""
    result = _render(root, list(host) or None)
    if not result.ok:
        return ExitCode.FINDINGS
    text = unified_diff(result.changes)
    click.echo(text, nl=False)
    return ExitCode.FINDINGS if result.dirty else ExitCode.OK


@main.command(epilog=EXIT_CODES_HELP)
@root_option
@_guard
def check(root: Path) -> int:
    """Validate everything and fail when output/ is not current (for CI and pre-commit)."""
    result = _render(root, None)
    if not result.ok:
        return ExitCode.FINDINGS
    for change in result.dirty:
        click.echo(f"gen: output/{change.path} would be {change.action.value}", err=True)
    if result.dirty:
        click.echo("gen: output/ is not current; run `gen render --all`", err=True)
        return ExitCode.FINDINGS
    click.echo(f"gen: {len(result.trees)} host(s) checked, output/ is current")
    return ExitCode.OK
