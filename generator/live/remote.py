"""Small helpers over a testinfra host: run the on-host script, read unit properties.

The on-host script (:mod:`generator.live.onhost`) goes as ``python -c SOURCE`` with the
host's own SGLang interpreter, so no file is ever left on the host.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from testinfra.host import Host as InfraHost

from generator.errors import ExitCode, GenError
from generator.live.onhost import RESULT_MARKER
from generator.load import json_text

ONHOST = Path(__file__).with_name("onhost.py")

UNIT_PROPERTIES = (
    "Id", "LoadState", "ActiveState", "SubState", "Result", "UnitFileState", "NRestarts",
    "MainPID", "ExecMainStatus", "ExecMainCode", "InvocationID", "NeedDaemonReload",
    "ControlGroup", "FragmentPath", "DropInPaths", "ActiveEnterTimestamp",
)


class RemoteError(GenError, RuntimeError):
    """The on-host script did not produce a result (its output is the message)."""

    exit_code = ExitCode.ENVIRONMENT


@cache
def onhost_source() -> str:
    """The text of the on-host script."""
    return ONHOST.read_text(encoding="utf-8")


def parse_result(stdout: str) -> Any:
    """The JSON document printed after the result marker."""
    if RESULT_MARKER not in stdout:
        raise RemoteError("no result from the on-host script")
    return json_text.loads(stdout.rsplit(RESULT_MARKER, 1)[1].strip())


def onhost(host: InfraHost, python: str, mode: str, *args: str) -> Any:
    """Run one mode of the on-host script with PYTHON and return its JSON result."""
    placeholders = " ".join(["%s"] * len(args))
    out = host.run(f"%s -c %s %s {placeholders}", python, onhost_source(), mode, *args)
    try:
        return parse_result(out.stdout)
    except (RemoteError, ValueError) as exc:
        raise RemoteError(f"{python} on-host {mode} failed (exit {out.rc}): {exc}\n"
                          f"{out.stderr.strip()}") from exc


def unit_properties(host: InfraHost, unit: str) -> dict[str, str]:
    """``systemctl show`` of UNIT for the properties the checks and status use."""
    out = host.run("systemctl show --no-pager -p %s %s", ",".join(UNIT_PROPERTIES), unit)
    props: dict[str, str] = {}
    for line in out.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            props[key] = value
    return props
