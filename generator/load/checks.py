"""The cerberus validator with gen's own rules: names, paths, addresses, CPU lists.

Each ``check_with`` rule here records a custom error that :mod:`generator.load.schema`
turns into a positioned diagnostic with its own code (see ``CUSTOM``). The validator also
replaces cerberus' bulk error insertion, which re-sorts the whole error list after every
error (quadratic: 4,000 errors took 31 s); gen sorts diagnostics by position itself.
"""

from __future__ import annotations

import ipaddress
import posixpath
import re
from typing import Any

from cerberus import TypeDefinition, Validator

from generator import systemd
from generator.load.addresses import inet_aton

# The highest CPU number Linux supports (NR_CPUS is at most 8192).
MAX_CPU = 8191
_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?")
# Looks like an IP literal (digits and dots, or any ':'): must then parse as one.
_IP_LIKE = re.compile(r"^[0-9.]+$|:")

# code, text for each custom error; ``{detail}`` is filled from the rule's own message.
CUSTOM: dict[str, tuple[str, str]] = {
    "unit_name": ("S007", "is not a valid name: {detail}"),
    "abs_path": ("S006", "must be an absolute path"),
    "norm_path": ("S006", "{detail}"),
    "not_bool": ("S002", "must be a string or a number, not a boolean (quote it)"),
    "ip_address": ("S012", "{detail}"),
    "cpu_list": ("S012", "{detail}"),
    "rollout_size": ("A001", "{detail}"),
}
# The one spelling of a rollout percentage, '1%' to '100%': gen's check and the editor schema's
# pattern (load/schema_json.py), so an editor never accepts what gen refuses, or the reverse.
ROLLOUT_PERCENT = r"([1-9][0-9]?|100)%"
_PERCENT = re.compile(ROLLOUT_PERCENT)
_NUMBER_PERCENT = re.compile(r"\s*0*([0-9]+)\s*%\s*")


def rollout_size_problem(value: Any) -> str | None:
    """Why the string VALUE is no rollout size: a percentage '1%' to '100%' (a count has min/max)."""
    if not isinstance(value, str):  # a count is bounded by the schema's min and max
        return None  # the type rule reports other types
    if _PERCENT.fullmatch(value):
        return None
    near = _NUMBER_PERCENT.fullmatch(value)
    if near is None:
        return "is neither a number of hosts nor a percentage like '25%' (write 10 or '10%')"
    if not 1 <= int(near.group(1)) <= 100:
        return "must be a percentage from '1%' to '100%'"
    return f"is a percentage written with blanks or leading zeros: write '{int(near.group(1))}%'"


def path_problem(value: str) -> str | None:
    """Why an absolute path is not written plainly: ``..``, ``.``, ``//``, a trailing ``/``.

    gen compares paths as strings (P008 retired volumes, P009 model root), and systemd
    wants normalized paths, so they must already be normalized; the fix is shown.
    Symlinks on the target host are not resolved (gen never sees that file system).
    """
    if not value.startswith("/"):
        return None  # abs_path reports it
    normal = posixpath.normpath(value)
    normal = "/" + normal.lstrip("/")  # normpath keeps a leading '//'
    if normal == value:
        return None
    if ".." in value.split("/"):
        return f"must not contain '..' (write the real path, e.g. {normal!r})"
    return f"must be a normalized path (no '//', '.' or trailing '/'): write {normal!r}"


def normalized_path(value: str) -> str | None:
    """``value`` without '//', '.' and a trailing '/' (what :func:`path_problem` asks for), or
    None when that needs the disk: a '..' (the folder before it may be a symlink) or no leading '/'."""
    if not value.startswith("/") or ".." in value.split("/"):
        return None
    return "/" + posixpath.normpath(value).lstrip("/")


def ip_problem(value: str) -> str | None:
    """Why ``value`` is not an IPv4/IPv6 address (``ipaddress`` rules), or None."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return "is not an IP address like '127.0.0.1' or '::1'"
    return None


def cpu_list_problem(value: str) -> str | None:
    """Why a CPU list like '0-31,64-95' is one systemd would drop: a reversed range, a CPU
    number above MAX_CPU (CPUAffinity= ignores the whole line), or None when it is fine."""
    for part in value.split(","):
        match = _RANGE.fullmatch(part)
        if not match:
            return None  # the regex rule reports the syntax
        low = int(match.group(1))
        high = int(match.group(2)) if match.group(2) is not None else low
        if high < low:
            return f"has the reversed range '{part}': write '{high}-{low}'"
        if high > MAX_CPU:
            return f"names CPU {high}; Linux numbers CPUs 0 to {MAX_CPU}"
    return None


class GenValidator(Validator):
    """cerberus with the project's own checks (names, absolute paths, addresses, CPU lists)."""

    # cerberus counts true/false as integers (bool is an int in Python): ``tp: true`` passed.
    types_mapping = {**Validator.types_mapping,
                     "integer": TypeDefinition("integer", (int,), (bool,))}

    def _error(self, *args: Any) -> None:
        if len(args) != 1:  # one error: cerberus builds it, then calls back with a list
            super()._error(*args)
            return
        # Bulk insertion as cerberus does it, minus ``self._errors.sort()`` and the schema
        # error tree (both re-sort per error; gen reads neither order nor that tree).
        self._errors.extend(args[0])
        for error in args[0]:
            self.document_error_tree.add(error)
            self.error_handler.emit(error)

    def _check_with_unit_name(self, field: str, value: Any) -> None:
        problem = systemd.name_problem(value) if isinstance(value, str) else None
        if problem:
            self._error(field, "unit_name:" + problem)

    def _check_with_not_bool(self, field: str, value: Any) -> None:
        if isinstance(value, bool):  # cerberus counts bool as integer; we do not
            self._error(field, "not_bool")

    def _check_with_abs_path(self, field: str, value: Any) -> None:
        if isinstance(value, str) and not value.startswith("/"):
            self._error(field, "abs_path")
        elif isinstance(value, str) and path_problem(value):
            self._error(field, "norm_path:" + str(path_problem(value)))

    def _check_with_unit_path(self, field: str, value: Any) -> None:
        """Paths written into unit settings as they are (program, sandbox paths)."""
        if not isinstance(value, str):
            return
        if not value.startswith("/"):
            self._error(field, "abs_path")
            return
        if path_problem(value):
            self._error(field, "norm_path:" + str(path_problem(value)))
            return
        try:
            systemd.path_value(value)
            if "$" in value:  # an ExecStart program path is not variable-expanded, argv[0] is
                raise ValueError(f"path contains '$': {value!r}")
        except ValueError as exc:
            self._error(field, "unit_path:" + str(exc))

    def _check_with_rollout_size(self, field: str, value: Any) -> None:
        problem = rollout_size_problem(value)
        if problem:
            self._error(field, "rollout_size:" + problem)

    def _check_with_ip_address(self, field: str, value: Any) -> None:
        if isinstance(value, str) and ip_problem(value):
            self._error(field, "ip_address:" + str(ip_problem(value)))

    def _check_with_net_address(self, field: str, value: Any) -> None:
        """A DNS name (the regex rule) or, when it looks like one, a valid IP literal; never a
        name ssh reads as another spelling of an IPv4 address (``0x0a000001``, ``10.1``)."""
        if not isinstance(value, str):
            return
        spelled = inet_aton(value)
        if spelled is not None and str(spelled) != value:
            self._error(field, f"ip_address:is read by ssh and Ansible (inet_aton) as the IPv4 address "
                               f"{spelled}: write '{spelled}'")
        elif _IP_LIKE.search(value) and ip_problem(value):
            self._error(field, "ip_address:" + str(ip_problem(value)))

    def _check_with_cpu_list(self, field: str, value: Any) -> None:
        if isinstance(value, str) and cpu_list_problem(value):
            self._error(field, "cpu_list:" + str(cpu_list_problem(value)))
