"""Read values back through the real systemd 252 installed on this machine (test helper).

PID 1 here is not systemd, but two real systemd programs parse unit and env files offline:

* ``/lib/systemd/systemd --test --system --unit=NAME`` loads the units found through
  ``$SYSTEMD_UNIT_PATH`` with the real unit-file parser (conf-parser.c, config_parse_exec,
  config_parse_environ) and dumps what it parsed: each command as ``Command Line: ...``
  and each ``Environment: NAME=value``. It refuses to run as root, so as root it is run as
  ``nobody`` through ``setpriv``.
* ``/usr/lib/systemd/user-environment-generators/30-systemd-environment-d-generator`` reads
  ``$XDG_CONFIG_HOME/environment.d/*.conf`` with the same env-file.c parser that
  EnvironmentFile= uses, and prints the result. It differs from EnvironmentFile= in one
  known way: it then expands ``$VAR`` in values (and drops empty values), so callers keep
  ``$`` and empty values out of what they read back here.

Both print values in systemd's ``shell_maybe_quote()`` form; :func:`split_quoted` decodes
that form strictly (only the escapes systemd emits for the characters gen allows).
What still needs a booted systemd (container test host): the exec-time ``$$`` -> ``$``
substitution, and EnvironmentFile= itself at exec time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

SYSTEMD = Path("/lib/systemd/systemd")
ENV_D_GENERATOR = Path(
    "/usr/lib/systemd/user-environment-generators/30-systemd-environment-d-generator"
)
NOBODY = 65534

# The escapes systemd's shell_maybe_quote() writes inside "..." for the characters gen
# lets through (SHELL_NEED_ESCAPE, plus cescape() of TAB).
_QUOTED_ESCAPES = {'"': '"', "\\": "\\", "`": "`", "$": "$", "t": "\t"}


def split_quoted(text: str) -> list[str]:
    """Split a line of shell_maybe_quote()d words (systemd's dump format) into the words.

    Words are separated by one space; a word is either bare (no space, quote or backslash)
    or ``"..."`` with backslash escapes. Anything else raises ValueError, so a format this
    decoder does not know cannot pass silently.
    """
    words: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == '"':
            i += 1
            buf: list[str] = []
            while True:
                if i >= n:
                    raise ValueError(f"unterminated quote in {text!r}")
                c = text[i]
                if c == '"':
                    i += 1
                    break
                if c == "\\":
                    if i + 1 >= n or text[i + 1] not in _QUOTED_ESCAPES:
                        raise ValueError(f"unexpected escape at {i} in {text!r}")
                    buf.append(_QUOTED_ESCAPES[text[i + 1]])
                    i += 2
                    continue
                buf.append(c)
                i += 1
            words.append("".join(buf))
        else:
            j = text.find(" ", i)
            j = n if j < 0 else j
            bare = text[i:j]
            if not bare or any(c in bare for c in "\"'\\"):
                raise ValueError(f"unexpected character in bare word {bare!r} of {text!r}")
            words.append(bare)
            i = j
        if i < n:
            if text[i] != " ":
                raise ValueError(f"expected a space at {i} in {text!r}")
            i += 1
            if i == n:
                raise ValueError(f"trailing space in {text!r}")
    return words


def exec_time_dollars(word: str) -> str:
    """Apply systemd's exec-time ``$`` rule to a word gen wrote: ``$$`` -> ``$``.

    systemd.service(5): ``$VAR``/``${VAR}`` are substituted when the command runs and
    ``$$`` is a literal ``$``. gen never means a variable, so any ``$`` not doubled raises.
    This is the only part of ExecStart= parsing that ``systemd --test`` does not show.
    """
    out: list[str] = []
    i = 0
    while i < len(word):
        if word[i] == "$":
            if word[i + 1 : i + 2] != "$":
                raise ValueError(f"undoubled '$' at {i} would expand a variable: {word!r}")
            out.append("$")
            i += 2
        else:
            out.append(word[i])
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class ParsedService:
    """What ``systemd --test`` dumped for one service: commands by setting, environment."""

    commands: dict[str, list[list[str]]] = field(default_factory=dict)
    environment: list[str] = field(default_factory=list)
    dump: str = ""


def _public_tempdir() -> Path:
    """A temp dir ``nobody`` can read (pytest's tmp_path is 0700 under root)."""
    d = Path(tempfile.mkdtemp(prefix="gen-systemd-"))
    d.chmod(0o755)
    return d


def _as_unprivileged() -> list[str]:
    """Command prefix that drops root: ``systemd --test`` refuses to run as root."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def systemd_load(unit_name: str, unit_text: str, system_units: bool = False) -> ParsedService:
    """Load ``unit_text`` as ``unit_name`` with the real systemd and return what it parsed.

    Raises AssertionError if systemd logged anything about the unit (a warning such as
    "Ignoring unknown escape sequences" or "Unbalanced quoting" means the value did not
    parse as written) or if the unit did not load. ``system_units`` also searches the
    host's unit folders (a whole rendered unit Wants=/After= targets that live there).
    """
    return systemd_load_many({unit_name: unit_text}, system_units)[unit_name]


# Wants= every unit of a systemd_load_many call, so one `systemd --test` loads them all.
_ALL_TARGET = "gen-test-all.target"


def systemd_load_many(units: dict[str, str], system_units: bool = False) -> dict[str, ParsedService]:
    """:func:`systemd_load` of several units in one ``systemd --test`` run (a target wants them
    all); each unit gets exactly the checks it would get alone: nothing logged naming it,
    and its own dump block saying it loaded. Unit names must not contain one another."""
    d = _public_tempdir()
    try:
        for unit_name, unit_text in units.items():
            path = d / unit_name
            path.write_text(unit_text, encoding="utf-8")
            path.chmod(0o644)
        start = next(iter(units)) if len(units) == 1 else _ALL_TARGET
        if len(units) > 1:
            (d / _ALL_TARGET).write_text(
                "[Unit]\nDefaultDependencies=no\n" + "".join(f"Wants={n}\n" for n in units), encoding="utf-8")
            (d / _ALL_TARGET).chmod(0o644)
        proc = subprocess.run(
            [*_as_unprivileged(), str(SYSTEMD), "--test", "--system", f"--unit={start}",
             "--no-pager", "--log-target=console", "--log-level=info"],
            env={"SYSTEMD_UNIT_PATH": str(d) + (":" if system_units else ""), "PATH": "/usr/bin:/bin", "HOME": "/nonexistent",
                 "LANG": "C.UTF-8"},
            capture_output=True, text=True, timeout=60, check=False,
        )
    finally:
        shutil.rmtree(d)
    # split("\n"), not splitlines(): values may hold U+2028 or U+0085, which are not
    # line ends for systemd.
    for unit_name in units:
        about_unit = [ln for ln in proc.stderr.split("\n") if unit_name in ln]
        assert not about_unit, "systemd complained:\n" + "\n".join(about_unit)
    assert proc.returncode == 0, f"systemd --test exited {proc.returncode}:\n{proc.stderr}"
    return {unit_name: _parse_dump(proc.stdout, unit_name) for unit_name in units}


def _parse_dump(dump: str, unit_name: str) -> ParsedService:
    """Pick one unit's commands and environment out of a ``systemd --test`` dump."""
    lines = dump.split("\n")
    try:
        start = lines.index(f"\t-> Unit {unit_name}:")
    except ValueError:
        raise AssertionError(f"{unit_name} not in systemd dump:\n{dump[-2000:]}") from None
    block: list[str] = []
    for ln in lines[start + 1 :]:
        if ln.startswith(("\t-> Unit ", "-> ")):
            break
        block.append(ln)
    assert "\t\tUnit Load State: loaded" in block, "\n".join(block)
    commands: dict[str, list[list[str]]] = {}
    environment: list[str] = []
    current: str | None = None
    for ln in block:
        if ln.startswith("\t\t-> Exec") and ln.endswith(":"):
            current = ln[len("\t\t-> ") : -1]
            commands[current] = []
        elif ln.startswith("\t\t\tCommand Line: ") and current:
            commands[current].append(split_quoted(ln[len("\t\t\tCommand Line: ") :]))
        elif ln.startswith("\t\tEnvironment: "):
            environment.append(ln[len("\t\tEnvironment: ") :])
        elif not ln.startswith("\t\t\t"):
            current = None
    return ParsedService(commands=commands, environment=environment, dump="\n".join(block))


def analyze_verify(unit_name: str, unit_text: str) -> str:
    """Run ``systemd-analyze verify`` on the unit under its real name; return all output.

    verify exits 0 even for unknown settings, so callers treat any output as failure.
    """
    d = _public_tempdir()
    try:
        path = d / unit_name
        path.write_text(unit_text, encoding="utf-8")
        proc = subprocess.run(
            ["systemd-analyze", "verify", "--man=no", str(path)],
            capture_output=True, text=True, timeout=120, check=False,
        )
    finally:
        shutil.rmtree(d)
    return (proc.stdout + proc.stderr).strip() + (
        f"\n(exit {proc.returncode})" if proc.returncode else ""
    )


def env_file_readback(
    text: str, extra_env: dict[str, str] | None = None
) -> tuple[dict[str, str], str]:
    """Parse env-file ``text`` with systemd's env-file.c (via the environment.d generator).

    Returns the variables it printed (decoded) and its stderr. The generator also reads the
    host's /etc/environment.d, so callers look only at their own names. ``extra_env`` is
    the generator's own environment, which its ``$VAR`` expansion reads.
    """
    d = Path(tempfile.mkdtemp(prefix="gen-envfile-"))
    try:
        (d / "environment.d").mkdir()
        (d / "environment.d" / "50-gen-test.conf").write_text(text, encoding="utf-8")
        proc = subprocess.run(
            [str(ENV_D_GENERATOR)],
            env={"XDG_CONFIG_HOME": str(d), "HOME": str(d), "LANG": "C.UTF-8",
                 **(extra_env or {})},
            capture_output=True, text=True, timeout=60, check=True,
        )
    finally:
        shutil.rmtree(d)
    out: dict[str, str] = {}
    for ln in proc.stdout.split("\n"):
        if not ln:
            continue
        name, _, quoted = ln.partition("=")
        [value] = split_quoted(quoted) if quoted else [""]
        out[name] = value
    return out, proc.stderr
