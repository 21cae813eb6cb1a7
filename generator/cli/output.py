"""How a command speaks: text (quiet, normal, verbose; colored on a TTY) or one JSON document.

Every command carries one :class:`Output` (built by ``output_options`` in
:mod:`generator.cli.common`, kept in click's context). Commands hand it their diagnostics
and results; in text mode it prints them as it always did, in ``--format json`` it prints
nothing until the command ends and then one document on stdout::

    {"format_version": 1, "command": "check", "exit_code": 1,
     "diagnostics": [{"file", "line", "column", "severity", "code", "message", "fix"}],
     "summary": {"errors": 1, "warnings": 0}, ...the command's own results...}

``format_version`` changes only when a key is removed or changes meaning (adding keys
does not). ``docs/json-output.md`` documents every command's keys.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any

import click

from generator.errors import Diagnostic, Severity, printable, printable_lines, quoted

FORMAT_VERSION = 1
TEXT, JSON, SARIF = "text", "json", "sarif"

_SEVERITY_COLOR = {Severity.ERROR: "red", Severity.WARNING: "yellow"}


def color_wanted(stream: Any = None) -> bool:
    """Color only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def unstyled(text: str, **_: Any) -> str:
    """``click.style``'s signature, without the style (color off)."""
    return text


_DIFF_COLORS = (("+++", None), ("---", None), ("@@", "cyan"), ("+", "green"), ("-", "red"))


def diff_text(text: str, color: bool) -> str:
    """A unified diff, its added lines green and removed ones red when ``color`` (as git shows it)."""
    if not color or not text:
        return printable_lines(text)
    lines = []
    for line in printable_lines(text).split("\n"):
        fg = next((c for prefix, c in _DIFF_COLORS if line.startswith(prefix)), None)
        bold = line.startswith(("+++", "---"))
        lines.append(click.style(line, fg=fg, bold=True if bold else None) if fg or bold else line)
    return "\n".join(lines)


def error_text(text: str) -> str:
    """An error message as gen prints it: its first line :func:`printable`, any further line
    (a probe's stderr, a path or value that held a newline) :func:`quoted` behind the gutter,
    so no line of it can pose as a line of its own (``::error file=...::`` in a CI log)."""
    first, *rest = text.split("\n")
    return "\n".join([printable(first), *([quoted("\n".join(rest))] if rest else [])])


def diagnostic_json(d: Diagnostic) -> dict[str, Any]:
    """One diagnostic as the JSON document carries it (line/column null when unknown)."""
    return {
        "file": d.pos.path,
        "line": d.pos.line or None,
        "column": (d.pos.col or 1) if d.pos.line else None,
        "severity": d.severity.value,
        "code": d.code,
        "message": d.message,
        "fix": d.hint,
    }


@dataclass
class Output:
    """One command's way of speaking, and what it collected for a machine-readable ending."""

    command: str
    format: str = TEXT
    verbosity: int = 0  # -1 quiet (errors only), 0 normal, 1 and up: what each stage decided
    color: bool = False
    diagnostics: list[Diagnostic] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # messages that are no diagnostic (exit 2/3/4)
    # Warnings an ack: entry took out of the findings, with the ack's reason and place.
    acknowledged: list[tuple[Diagnostic, str, str]] = field(default_factory=list)

    @property
    def machine(self) -> bool:
        """True for json/sarif: stdout carries exactly one document, nothing else."""
        return self.format != TEXT

    @property
    def quiet(self) -> bool:
        """True with -q: errors only."""
        return self.verbosity < 0

    @property
    def verbose(self) -> bool:
        """True with -v."""
        return self.verbosity > 0

    # Every line gen prints goes through these methods, and each escapes what it prints
    # (errors.printable_lines): text from the repository, output/, a probed interpreter or a
    # host's journal cannot move the cursor, color the terminal, link (OSC 8) or overwrite a
    # line (CR). Diagnostics are escaped when they are made (errors.Diagnostic).

    def say(self, text: str, err: bool = False, nl: bool = True) -> None:
        """Normal output: shown in text mode unless -q."""
        if not self.machine and not self.quiet:
            click.echo(printable_lines(text), err=err, nl=nl)

    def data(self, text: str, nl: bool = True) -> None:
        """The command's product on stdout (a diff, a manifest): shown in text mode even with -q."""
        if not self.machine:
            click.echo(printable_lines(text), nl=nl)

    def styled_data(self, text: str, nl: bool = True) -> None:
        """Like :meth:`data`, for text styled after each of its parts was escaped (the escape
        codes of the style are gen's own; escaping them again would print them as text)."""
        if not self.machine:
            click.echo(text, nl=nl)

    def detail(self, text: str) -> None:
        """What a stage decided: on stderr with -v only."""
        if self.verbose and not self.machine:
            click.echo(self.paint(printable_lines(text), dim=True), err=True)

    def error_line(self, text: str) -> None:
        """A line that details an error (shown with -q too), kept out of the document's errors."""
        if not self.machine:
            click.echo(error_text(text), err=True)

    def fail(self, text: str) -> None:
        """An error that is no diagnostic (unknown host, unreachable host): always reported."""
        text = error_text(text)
        self.errors.append(text)
        if not self.machine:
            click.echo(text, err=True)

    def paint(self, text: str, fg: str | None = None, dim: bool = False, bold: bool = False) -> str:
        """``text`` styled when color is on, else as it is."""
        return click.style(text, fg=fg, dim=dim, bold=bold) if self.color else text

    def report(self, diagnostics: list[Diagnostic]) -> None:
        """Every diagnostic to stderr with a count (text), or kept for the document."""
        self.diagnostics.extend(diagnostics)
        if self.machine:
            return
        shown = [self._painted(d) for d in diagnostics if d.is_error or not self.quiet]
        errors = sum(d.is_error for d in diagnostics)
        if shown:  # one write: a fleet's thousands of warnings are not thousands of echo calls
            shown.append(f"gen: {errors} error(s), {len(diagnostics) - errors} warning(s)")
            click.echo("\n".join(shown), err=True)

    def acknowledge(self, items: list[tuple[Diagnostic, str, str]]) -> None:
        """Acknowledged warnings (diagnostic, reason, where the ack is): kept for the document;
        in text one line says how many are not shown, and -v shows each with its reason."""
        self.acknowledged.extend(items)
        if self.machine or self.quiet or not items:
            return
        if self.verbose:
            for d, reason, where in items:
                click.echo(self.paint(f"{d} [acknowledged at {where}: {printable(reason)}]", dim=True), err=True)
        by_code: dict[str, int] = {}
        for d, _, _ in items:
            by_code[d.code] = by_code.get(d.code, 0) + 1
        codes = ", ".join(f"{c} x{n}" if n > 1 else c for c, n in sorted(by_code.items()))
        click.echo(f"gen: {len(items)} acknowledged warning(s) not shown ({codes}); -v or `gen show` lists them",
                   err=True)

    def _painted(self, d: Diagnostic) -> str:
        if not self.color:
            return str(d)
        word = self.paint(f"{d.severity.value}[{d.code}]", fg=_SEVERITY_COLOR[d.severity], bold=True)
        text = f"{self.paint(str(d.pos), bold=True)}: {word}: {d.message}"
        return text + (f" ({d.hint})" if d.hint else "")

    def document(self, exit_code: int) -> dict[str, Any]:
        """The JSON document: version, command, exit code, diagnostics, summary, results."""
        errors = sum(d.is_error for d in self.diagnostics)
        doc: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "command": self.command,
            "exit_code": int(exit_code),
            "diagnostics": [diagnostic_json(d) for d in sorted(self.diagnostics, key=Diagnostic.sort_key)],
            "summary": {"errors": errors, "warnings": len(self.diagnostics) - errors},
            "errors": list(self.errors),
            "acknowledged": [dict(diagnostic_json(d), reason=reason, ack=where)
                             for d, reason, where in sorted(self.acknowledged, key=lambda a: a[0].sort_key())],
        }
        doc.update(self.results)
        return doc

    def finish(self, exit_code: int) -> None:
        """Print the machine-readable document (json or sarif) once, at the end."""
        if self.format == JSON:
            click.echo(json.dumps(self.document(exit_code), indent=2, sort_keys=False))
        elif self.format == SARIF:
            from generator.cli.sarif import sarif_log  # only `check --format sarif` needs it

            click.echo(json.dumps(sarif_log(self.diagnostics, self.acknowledged), indent=2))


def current() -> Output:
    """The running command's Output (a plain text one outside a command, e.g. in library use)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        found = ctx.meta.get("gen.output")
        if isinstance(found, Output):
            return found
    return Output(command=ctx.info_name if ctx is not None and ctx.info_name else "gen")
