"""Writers for the unit settings beyond command lines: bind specs, whole-value paths, free
text, user names, directory names, CPU lists, time spans, comments; and the Jinja filters.

Like :mod:`generator.systemd` (whose path and environment escaping these build on), every
function is pure and either returns text systemd 252 parses back to exactly the input or
raises ``ValueError``. Each setting's syntax is cited from systemd.exec(5)/systemd.unit(5)
and src/core/load-fragment.c. tests/test_systemd_settings.py holds the table of every
template setting that takes a value from the inputs, with hostile values, read back
through the real systemd (``systemd --test`` dump).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from generator.systemd import (_UNIT_STEM, _refuse_control, env_file_line, environment_assignment, exec_lines,
                               exec_word, path_value, plain_memo)


@plain_memo
def bind_path_value(path: str) -> str:
    r"""Write one path for BindPaths=/BindReadOnlyPaths= as ``SRC`` (bound onto itself).

    systemd.exec(5) BindPaths=: each entry is ``SRC[:DST[:OPTIONS]]``, split on ``:`` and
    blanks with ``EXTRACT_UNQUOTE|EXTRACT_UNESCAPE_SEPARATORS``, so a ``:`` inside a path
    must be written ``\:`` (otherwise ``/root/x:/etc`` binds over /etc and ``:norbind``
    is an option). Otherwise as :func:`path_value`: absolute, normalized, ``%`` doubled,
    a path with blanks quoted; quotes and backslashes are refused.
    """
    written = path_value(path)
    return written.replace(":", "\\:")


@plain_memo
def single_path_value(path: str) -> str:
    """Write the one absolute path of EnvironmentFile= (and similar whole-value settings).

    config_parse_unit_env_file() takes the whole value (no word splitting, no unquoting),
    expands specifiers and reads a leading ``-`` as "ignore if missing"; the line's leading
    and trailing blanks are stripped. So: as :func:`path_value`, ``%`` doubled, never quoted,
    and blanks at either end refused.
    """
    path_value(path)
    if path != path.strip():
        raise ValueError(f"path starts or ends with a blank: {path!r}")
    return path.replace("%", "%%")


@plain_memo
def unit_string_value(text: str) -> str:
    """Write free text for Description= (a specifier-expanded string, not unquoted).

    ``%`` is doubled; control characters are refused (a newline would end the line and
    start a new setting); blanks at either end (stripped by the parser) and a trailing
    backslash (a line continuation) are refused.
    """
    if not isinstance(text, str):
        raise TypeError(f"unit setting value must be a string, got {type(text).__name__}")
    _refuse_control(text, "unit setting value", allow_tab=False)
    if text != text.strip() or text.endswith("\\"):
        raise ValueError(f"unit setting value has blanks at an end or a trailing backslash: {text!r}")
    return text.replace("%", "%%")


@plain_memo
def comment_value(text: str) -> str:
    """Text for a ``# ...`` comment line: a control character (a newline) would end it."""
    if not isinstance(text, str):
        raise TypeError(f"comment must be a string, got {type(text).__name__}")
    _refuse_control(text, "comment", allow_tab=False)
    if text.endswith("\\"):  # env-file.c: a backslash escapes the newline, even in a comment
        raise ValueError(f"comment ends with a backslash: {text!r}")
    return text


_USER = re.compile(r"[a-z_][a-z0-9_-]{0,31}")


@plain_memo
def user_value(name: str) -> str:
    """Write User=/Group=: a portable user name (``[a-z_][a-z0-9_-]{0,31}``), else ValueError.

    systemd expands specifiers in User= and refuses names it does not consider valid;
    the portable subset has neither ``%`` nor blanks, so it is written as is.
    """
    if not isinstance(name, str) or not _USER.fullmatch(name):
        raise ValueError(f"invalid user name {name!r} (want [a-z_][a-z0-9_-]{{0,31}})")
    return name


@plain_memo
def relative_dir_value(name: str) -> str:
    """Write one CacheDirectory=/StateDirectory= entry: a single name of ``[A-Za-z0-9_.-]``.

    Those settings take a blank-separated list of relative paths (specifiers expanded,
    ``..`` refused by systemd); gen writes one unit-named folder, so anything else is refused.
    """
    if not isinstance(name, str) or not _UNIT_STEM.fullmatch(name) or name.startswith("."):
        raise ValueError(f"invalid directory name {name!r} (want [A-Za-z0-9_.-], not starting with '.')")
    return name


_SPECIFIER_DIRS = frozenset({"%S", "%C", "%t", "%L", "%E"})


@plain_memo
def environment_under(name: str, specifier: str, tail: str) -> str:
    """One Environment= word ``"NAME=%S/tail"``: a directory specifier, then escaped ``tail``.

    ``specifier`` is written as is (one of %S %C %t %L %E, systemd's state, cache, runtime,
    logs and configuration roots); ``tail`` is escaped as :func:`environment_assignment`
    escapes a value, so a ``%`` in it stays literal.
    """
    if specifier not in _SPECIFIER_DIRS:
        raise ValueError(f"not a directory specifier: {specifier!r}")
    escaped = environment_assignment(name, tail)  # '"NAME=tail"', with tail escaped
    return f'"{name}={specifier}/{escaped[len(name) + 2:]}'


CPU_MAX = 8191  # systemd's cpu_set_t parser refuses CPUs beyond 8191 (CPU_SIZE_MAX)


@plain_memo
def cpu_list_value(spec: str | int) -> str:
    """Write a CPU or NUMA node list for CPUAffinity=/NUMAMask=: ``0-7,16-23`` or ``3``.

    parse_cpu_set_extend() reads comma- or blank-separated numbers and ranges; a reversed
    range such as ``31-0`` or a number beyond 8191 drops the whole setting with only a log
    line. So every item must be ``N`` or ``A-B`` with ``A <= B <= 8191``; written with commas.
    """
    text = str(spec) if isinstance(spec, int) and not isinstance(spec, bool) else spec
    if not isinstance(text, str):
        raise TypeError(f"CPU list must be a string, got {type(spec).__name__}")
    items = [i for i in re.split(r"[,\s]+", text.strip()) if i]
    if not items:
        raise ValueError(f"empty CPU list: {spec!r}")
    for item in items:
        m = re.fullmatch(r"(\d{1,4})(?:-(\d{1,4}))?", item)
        if not m or int(m.group(2) or m.group(1)) > CPU_MAX or int(m.group(1)) > int(m.group(2) or m.group(1)):
            raise ValueError(f"invalid CPU list item {item!r} in {spec!r} (want N or A-B, A <= B <= {CPU_MAX})")
    return ",".join(items)


# parse_time() refuses a number of minutes >= USEC_INFINITY / USEC_PER_MINUTE (ERANGE).
MINUTES_MAX = (2**64 - 1) // 60_000_000 - 1


def minutes_value(minutes: int) -> str:
    """Write a time span in minutes (``18min``) for TimeoutStartSec= and similar.

    A value whose microseconds overflow 64 bits is dropped by systemd with only a log line
    (the default then applies), so only integers from 1 to that bound are written.
    """
    if isinstance(minutes, bool) or not isinstance(minutes, int):
        raise ValueError(f"minutes must be an integer, got {minutes!r}")
    if not 1 <= minutes <= MINUTES_MAX:
        raise ValueError(f"minutes out of range 1..{MINUTES_MAX}: {minutes}")
    return f"{minutes}min"


_CREDENTIAL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,255}")


@plain_memo
def credential_value(name: str, path: str) -> str:
    """Write ``NAME:PATH`` for LoadCredential=.

    config_parse_load_credential() splits at the first ``:``: the name must be a valid file
    name (gen allows ``[A-Za-z0-9_.-]``, not ``.`` or ``..``), the rest is the path, with
    specifiers expanded. The path is written as :func:`single_path_value`.
    """
    if not isinstance(name, str) or not _CREDENTIAL_NAME.fullmatch(name) or name in (".", ".."):
        raise ValueError(f"invalid credential name {name!r} (want [A-Za-z0-9_.-])")
    return f"{name.replace('%', '%%')}:{single_path_value(path)}"


# Filters for the Jinja environment that renders units: templates/hardening.j2 uses
# ``systemd_path``; the renderer registers them with ``env.filters.update(JINJA_FILTERS)``.
JINJA_FILTERS: dict[str, Callable[..., str]] = {
    "systemd_path": path_value,
    "exec_word": exec_word,
    "exec_lines": exec_lines,
    "env_file_line": env_file_line,
    "systemd_bind_path": bind_path_value,
    "systemd_single_path": single_path_value,
    "unit_string": unit_string_value,
    "systemd_user": user_value,
    "systemd_dir": relative_dir_value,
    "environment_under": environment_under,
    "cpu_list": cpu_list_value,
    "minutes": minutes_value,
    "credential": credential_value,
}
