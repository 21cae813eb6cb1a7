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

from .errors import Diagnostic, ExitCode, GenError, InputError, TemplateError

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
        except InputError as exc:
            report(exc.diagnostics)
            code = ExitCode.FINDINGS
        except KeyError as exc:  # GenErrors that are lookups (unknown host, service, pin)
            if not isinstance(exc, GenError):
                raise
            click.echo(f"gen: {exc}", err=True)
            code = ExitCode.USAGE
        except (OSError, TemplateError) as exc:
            if not isinstance(exc, GenError):
                raise
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

    return functools.wraps(fn)(wrapper)


root_option = click.option(
    "--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
    show_default=True, help="The deployment repository (with hosts/, models/, templates/).")


