"""Shared pieces of the command line: exit codes, diagnostics output, the error guard.

Every command module (cli.py, cli_*.py) wraps its commands in :func:`guard`, so user
input never produces a Python traceback and every failure maps to a documented code.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

import click

from generator.errors import Diagnostic, ExitCode, GenError, InputError

EXIT_CODES_HELP = """\b
Exit codes:
  0  success
  1  findings: invalid input, differences (diff/check), failed live checks
  2  usage error: bad command line, unknown host
  3  environment failure: a file cannot be written, a template is broken, a host is unreachable
  4  internal error in gen (set GEN_DEBUG=1 for the traceback)
"""


def report(diagnostics: list[Diagnostic]) -> None:
    """Print every diagnostic to stderr, then a one-line count."""
    for d in diagnostics:
        click.echo(str(d), err=True)
    errors = sum(d.is_error for d in diagnostics)
    warnings = len(diagnostics) - errors
    if diagnostics:
        click.echo(f"gen: {errors} error(s), {warnings} warning(s)", err=True)


def guard(fn: Callable[..., int]) -> Callable[..., Any]:
    """Turn gen's errors into messages and exit codes: never a traceback for user input."""

    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            code = fn(*args, **kwargs)
        except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - every exception ends in a code, deliberately
            code = _exit_code_for(exc)
        sys.exit(int(code))

    return functools.wraps(fn)(wrapper)


def _exit_code_for(exc: Exception) -> ExitCode:
    """Print one message for ``exc`` and pick its documented exit code."""
    if isinstance(exc, InputError):
        report(exc.diagnostics)
        return ExitCode.FINDINGS
    if isinstance(exc, GenError):  # each class carries its code (errors.GenError)
        click.echo(f"gen: {exc}", err=True)
        return exc.exit_code
    # Anything else is a bug in gen: one clear line, the traceback only on request.
    if os.environ.get("GEN_DEBUG"):
        traceback.print_exception(exc)
    click.echo(f"gen: internal error: {type(exc).__name__}: {exc} (set GEN_DEBUG=1 for the traceback)", err=True)
    return ExitCode.INTERNAL


root_option = click.option(
    "--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
    show_default=True, help="The deployment repository (with hosts/, models/, templates/).")


