"""Pure helpers that write values systemd reads back exactly as meant.

Every function here is pure (no I/O) and either returns text that systemd 252 parses back to
the input, or raises ``ValueError`` naming what cannot be written (``TypeError`` for a value
that is not a string at all). The rules implemented, and where they come from:

* ExecStart= (systemd.service(5) "Command lines"; src/core/load-fragment.c
  ``config_parse_exec``): the value is split into words by ``extract_first_word()`` with
  ``EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE`` (systemd.syntax(7) quoting: ``"..."``/``'...'`` group,
  backslash escapes as in C), then each word gets specifier expansion (systemd.unit(5):
  ``%%`` is a literal ``%``), and at exec time ``$VAR``/``${VAR}`` are substituted, ``$$``
  being a literal ``$``. A lone unquoted ``;`` separates commands.
* Unit-file lines (src/shared/conf-parser.c): a line whose last backslash is unescaped
  continues on the next line; a physical line whose first non-blank character is ``#`` or
  ``;`` is a comment, even in the middle of a continuation.
* Environment= (systemd.exec(5)): words split like ExecStart=, specifiers expanded, but
  ``$`` has no meaning.
* EnvironmentFile= (systemd.exec(5); src/basic/env-file.c ``parse_env_file_internal``):
  shell-like ``KEY=VALUE`` lines; inside ``"..."`` a backslash escapes only the double
  quote, backslash, backtick and dollar; no specifier or variable expansion.
* Unit names (systemd.unit(5); src/basic/unit-name.c ``unit_name_is_valid``).

The tests read every escaped value back through the real systemd (``systemd --test`` dumps
the argv and environment it parsed; the environment.d generator runs the real env-file
parser), not by comparing strings.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

# Characters that never need quoting in an ExecStart= word. Everything else (spaces, quotes,
# backslash, '#', ';', glob or shell characters, non-ASCII) is written inside double quotes.
# '%' and '$' are in the set because they are doubled rather than quoted.
_EXEC_BARE = re.compile(r"[A-Za-z0-9_@%$+=:,./-]+")

# Environment variable names systemd accepts (src/basic/env-util.c env_name_is_valid):
# ASCII letters, digits and '_', not starting with a digit.
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Unit types systemd knows (systemd.unit(5)); the suffix decides the unit's type.
UNIT_TYPES: frozenset[str] = frozenset(
    {"service", "socket", "device", "mount", "automount", "swap", "target", "path", "timer",
     "slice", "scope"}
)

# The stem of a unit name gen writes: systemd's VALID_CHARS minus '\\' (gen never writes
# escaped names), '@' (gen writes no templates) and ':' (systemd-analyze verify, which
# operators and testinfra's is_valid use, reads FILE:ALIAS and fails on such a file).
_UNIT_STEM = re.compile(r"[A-Za-z0-9_.-]+")

UNIT_NAME_MAX = 255  # UNIT_NAME_MAX is 256 including the terminating NUL


# Unicode noncharacters: U+FDD0-U+FDEF and the last two code points of every plane.
# systemd's unichar_is_valid() (src/basic/utf8.c) refuses them, so a unit-file line with
# one is "not UTF-8 clean" and systemd ignores the whole assignment (an ExecStart= too).
_NONCHARACTER = re.compile(
    "[\ufdd0-\ufdef" + "".join(f"{chr(p + 0xFFFE)}{chr(p + 0xFFFF)}" for p in range(0, 0x110000, 0x10000)) + "]"
)


def noncharacter(s: str) -> str | None:
    """The first Unicode noncharacter in ``s`` (which systemd refuses), or None."""
    match = _NONCHARACTER.search(s)
    return match.group(0) if match else None


# Exactly the characters of Unicode categories Cc (U+0000-001F, U+007F-009F) and Cs (the
# surrogates U+D800-DFFF): tests/test_systemd.py checks this against unicodedata.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_CONTROL_NO_TAB = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff]")


def _refuse_control(s: str, what: str, allow_tab: bool) -> None:
    """Raise ValueError if ``s`` holds a control character (Unicode Cc), a lone surrogate or
    a noncharacter.

    NUL cannot be stored in a C string, a newline would end the unit-file line, and the other
    control characters are never meant in a command line or a variable; refusing them keeps
    the rendered files printable and reviewable in a diff. systemd itself refuses a line
    with a noncharacter (see ``_NONCHARACTER``).
    """
    found = (_CONTROL_NO_TAB if allow_tab else _CONTROL).search(s)
    if found is not None:
        raise ValueError(f"{what} contains control character U+{ord(found.group()):04X} at offset "
                         f"{found.start()}: {s!r}")
    bad = noncharacter(s)
    if bad is not None:
        raise ValueError(f"{what} contains the Unicode noncharacter U+{ord(bad):04X}, which "
                         f"systemd refuses: {s!r}")


_R = TypeVar("_R")
MEMO_SIZE = 4096  # distinct values per writer kept; a fleet repeats a few hundred


def plain_memo(fn: Callable[..., _R]) -> Callable[..., _R]:
    """Speed only (ARCHITECTURE.md): keep ``fn``'s results for calls whose arguments are all exact ``str``.

    For the pure writers of this module and :mod:`generator.systemd_settings`: the same
    words, paths and variables recur on every service of a fleet, and each was checked and
    escaped again. Only plain strings are kept, by value: a str subclass (an
    :class:`ExecVariable` equals its text but is written differently), a non-string (its
    TypeError) or a keyword argument runs ``fn`` itself. A call that raises is not kept, so
    a refused value raises the same error every time.
    """
    cached = functools.lru_cache(maxsize=MEMO_SIZE)(fn)

    @functools.wraps(fn)
    def writer(*args: Any, **kwargs: Any) -> _R:
        if kwargs:
            return fn(*args, **kwargs)
        for a in args:
            if type(a) is not str:
                return fn(*args)
        return cached(*args)

    writer.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return writer


# ``${NAME}`` (optionally followed by plain path characters): a word systemd must expand
# at exec time, e.g. ``${CREDENTIALS_DIRECTORY}/x.yaml``, which only the service's own
# environment knows.
_EXEC_VARIABLE = re.compile(r"\$\{[A-Z_][A-Z0-9_]*\}(/[A-Za-z0-9_.-]+)*")


class ExecVariable(str):
    """An ExecStart= word that is written unescaped so systemd expands its ``${NAME}``.

    Only gen's own code makes these (never a value from the inputs), and only the shape
    ``${NAME}/plain/path`` is accepted, so nothing else can be expanded or split.
    """

    def __new__(cls, value: str) -> ExecVariable:
        if not _EXEC_VARIABLE.fullmatch(value):
            raise ValueError(f"not a ${{NAME}}/path word: {value!r}")
        return super().__new__(cls, value)


@plain_memo
def exec_word(s: str) -> str:
    """Quote one argv word for ExecStart= so that systemd splits it back to exactly ``s``.

    Implements systemd.service(5) "Command lines" and systemd.syntax(7) quoting:

    * ``%`` becomes ``%%``: systemd.unit(5) specifiers are expanded in every word.
    * ``$`` becomes ``$$``: ``$VAR`` is substituted at exec time; ``$$`` is a literal ``$``.
    * A word with any character outside ``[A-Za-z0-9_@%$+=:,./-]``, or the empty word, is
      wrapped in ``"..."`` with ``\\`` -> ``\\\\``, ``"`` -> ``\\"`` and TAB -> ``\\t``
      (``EXTRACT_CUNESCAPE`` decodes them). This also covers a word that begins with ``#``
      or ``;`` (a continuation line starting with those is a comment) and a lone ``;``
      (the command separator), since quoting hides both from the line-level checks.
    * Control characters other than TAB (NUL, newline, ESC, ...) raise ValueError.
    """
    if not isinstance(s, str):
        raise TypeError(f"argv word must be a string, got {type(s).__name__}: {s!r}")
    if isinstance(s, ExecVariable):
        return str(s)  # checked when made: ${NAME} then plain path characters only
    _refuse_control(s, "ExecStart word", allow_tab=True)
    doubled = s.replace("%", "%%").replace("$", "$$")
    if _EXEC_BARE.fullmatch(s):
        return doubled
    inner = doubled.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
    return f'"{inner}"'


def _check_program(program: str) -> None:
    """Refuse an ExecStart= program systemd would reject or run differently than written.

    config_parse_exec() requires an absolute path (or a bare file name; gen always writes
    absolute paths), refuses paths with quotes, backslashes or control characters
    (``string_is_safe``) and paths ending in ``/``, and would read a leading ``-@:+!`` as a
    prefix. ``$`` is refused because the executed path is not variable-expanded while
    argv[0] is, so the two would differ.
    """
    if not isinstance(program, str) or not program.startswith("/"):
        raise ValueError(f"ExecStart program must be an absolute path: {program!r}")
    if program.endswith("/"):
        raise ValueError(f"ExecStart program must not end with '/': {program!r}")
    bad = sorted({c for c in program if c in "\\\"'$"})
    if bad:
        raise ValueError(f"ExecStart program contains {''.join(bad)!r}: {program!r}")
    _refuse_control(program, "ExecStart program", allow_tab=False)


def exec_line(argv: Sequence[str]) -> str:
    """Return the value of an ExecStart= line (without the key) for the given argv.

    argv[0] is the program and must be an absolute path (systemd.service(5) "Command
    lines"); every word is quoted with :func:`exec_word` and joined with single spaces.
    """
    if isinstance(argv, str) or not argv:
        raise ValueError(f"argv must be a non-empty list of strings: {argv!r}")
    _check_program(argv[0])
    return " ".join(exec_word(w) for w in argv)


def exec_lines(groups: Sequence[Sequence[str]], key: str = "ExecStart") -> str:
    """Render ``key=`` with one group of words per physical line, joined by continuations.

    ``groups[0]`` holds the program and its leading words (e.g. ``[python, "-m",
    "sglang.launch_server"]``); every later group is one flag with its values (e.g.
    ``["--model-path", "/x"]`` or ``["--trust-remote-code"]``). The result, without a
    trailing newline, reads::

        ExecStart=/usr/bin/python3 -m sglang.launch_server \\
          --model-path /x \\
          --trust-remote-code

    conf-parser.c joins a line ending in an unescaped backslash with the next one, replacing
    the backslash by a space; no word of :func:`exec_word` ends in a bare backslash, and a
    continuation line never starts with ``#`` or ``;`` unquoted (those would be comments).
    """
    if not re.fullmatch(r"Exec[A-Za-z]+", key):
        raise ValueError(f"not an Exec*= setting name: {key!r}")
    if isinstance(groups, str) or not groups:
        raise ValueError("groups must be a non-empty list of word lists")
    for g in groups:
        if isinstance(g, str) or not g:
            raise ValueError(f"every group must be a non-empty list of words: {g!r}")
    first = exec_line(list(groups[0]))
    rest = [" ".join(exec_word(w) for w in g) for g in groups[1:]]
    return " \\\n  ".join([f"{key}={first}", *rest])


def check_env_name(name: str) -> str:
    """Return ``name`` if it is a valid environment variable name, else raise ValueError.

    systemd's env_name_is_valid() (systemd.exec(5) Environment=) accepts ASCII letters,
    digits and ``_``, not starting with a digit; assignments with other names are dropped
    with a warning, so gen refuses them up front.
    """
    if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
        raise ValueError(
            f"invalid environment variable name {name!r} (want [A-Za-z_][A-Za-z0-9_]*)"
        )
    return name


@plain_memo
def environment_assignment(name: str, value: str) -> str:
    """Return one quoted ``"NAME=value"`` word for an Environment= line.

    systemd.exec(5) Environment=: the line is split like a command line
    (``EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE``), then specifiers are expanded, so ``%`` is
    doubled and ``\\``, ``"``, TAB are escaped inside double quotes. ``$`` has no meaning in
    Environment= and is written as is. Control characters other than TAB raise ValueError.
    """
    check_env_name(name)
    if not isinstance(value, str):
        raise TypeError(f"value of {name} must be a string, got {type(value).__name__}")
    _refuse_control(value, f"value of {name}", allow_tab=True)
    inner = (
        f"{name}={value}".replace("%", "%%")
        .replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\t", "\\t")
    )
    return f'"{inner}"'


def environment_line(name: str, value: str) -> str:
    """Return a whole ``Environment="NAME=value"`` line (no newline); see environment_assignment."""
    return f"Environment={environment_assignment(name, value)}"


@plain_memo
def env_file_line(name: str, value: str) -> str:
    """Return one ``NAME="value"`` line (no newline) for a file read by EnvironmentFile=.

    src/basic/env-file.c: inside double quotes a backslash escapes the double quote,
    backslash, backtick and dollar (and is kept before any other character); leading and
    trailing blanks are kept; ``#`` is literal; nothing is expanded (no specifiers, no
    variables). Escaping the dollar and backtick as well makes the same line safe for a POSIX
    shell's ``.`` too. TAB is written as is (env files have no ``\\t`` escape); other control
    characters raise ValueError.
    """
    check_env_name(name)
    if not isinstance(value, str):
        raise TypeError(f"value of {name} must be a string, got {type(value).__name__}")
    _refuse_control(value, f"value of {name}", allow_tab=True)
    inner = re.sub(r'(["\\`$])', r"\\\1", value)
    return f'{name}="{inner}"'


@plain_memo
def path_value(path: str) -> str:
    """Write one absolute path for ReadOnlyPaths=/ReadWritePaths= (and similar) settings.

    systemd.exec(5) "Sandboxing": each entry is one word split with ``EXTRACT_UNQUOTE``
    (no C escapes), then specifiers are expanded, and the result must be an absolute,
    normalized path; a leading ``-`` or ``+`` would be a prefix. So: the path must be
    absolute and normalized (no ``//``, ``.``, ``..``, trailing ``/``), must not hold quotes,
    backslashes or control characters; ``%`` is doubled and a path with blanks is quoted.
    """
    if not isinstance(path, str) or not path.startswith("/"):
        raise ValueError(f"path must be absolute: {path!r}")
    _refuse_control(path, "path", allow_tab=False)
    if posixpath.normpath(path) != path or path.startswith("//"):
        raise ValueError(f"path must be normalized (no //, ., .. or trailing /): {path!r}")
    bad = sorted({c for c in path if c in "\\\"'"})
    if bad:
        raise ValueError(f"path contains {''.join(bad)!r}: {path!r}")
    doubled = path.replace("%", "%%")
    return f'"{doubled}"' if re.search(r"\s", path) else doubled


def unit_name_ok(name: str) -> bool:
    """True when ``name`` is a unit name gen may write, e.g. ``sglang-qwen.service``.

    A subset of systemd's unit_name_is_valid() (systemd.unit(5)): a stem of
    ``[A-Za-z0-9_.-]``, then ``.`` and a known unit type; at most 255 characters.
    Stricter than systemd on purpose: no ``..``, no leading ``.`` or ``-`` (a hidden file,
    or an argument systemctl would take for an option), no ``@`` templates, no ``\\`` escapes,
    and no ``:`` (systemd accepts it, but ``systemd-analyze verify x:y.service`` reads the
    argument as FILE:ALIAS and fails with "Couldn't process aliases").
    """
    if not isinstance(name, str) or not 0 < len(name) <= UNIT_NAME_MAX:
        return False
    stem, dot, suffix = name.rpartition(".")
    if not dot or suffix not in UNIT_TYPES or not stem:
        return False
    return bool(_UNIT_STEM.fullmatch(stem)) and ".." not in name and stem[0] not in ".-"


def check_unit_name(name: str) -> str:
    """Return ``name`` if :func:`unit_name_ok` accepts it, else raise ValueError saying why."""
    if unit_name_ok(name):
        return name
    raise ValueError(
        f"invalid unit name {name!r}: want [A-Za-z0-9_.-] then a unit type suffix such as"
        f" '.service', no '..', not starting with '.' or '-', at most {UNIT_NAME_MAX} characters"
    )


# A name in models/ or hosts/ (model, host, service): it becomes part of unit names
# (``sglang-<service>.service``), file names (``etc/sglang/<service>.env``) and folder names
# (``output/<host>/``). Starts with a letter or digit, ends with a letter, digit or '_',
# no '..' inside, so that ``sglang-<name>.service`` is always a name :func:`unit_name_ok`
# accepts and no file name derived from it is hidden, relative or an option.
_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9_])?")
NAME_MAX = 100  # sglang-<name>.secret.env and the like stay far below NAME_MAX (255) of Linux
NAME_RULE = "[A-Za-z0-9_.-], starting with a letter or digit, not ending in '.' or '-', no '..'"
# Device names Windows reserves in every folder, whatever follows the first dot (``CON.yaml``,
# ``nul.x``): hosts/<name>.yaml, models/<name>.yaml and output/<host>/ cannot exist on a Windows
# checkout (git refuses the path), and a reviewer there sees the pull request fail to check out.
# (CONIN$ and CONOUT$ too, but '$' is no character of a name.)
DEVICE_NAMES = ("con", "prn", "aux", "nul", "com[0-9]", "lpt[0-9]")  # regular expressions
_DEVICE_NAME = re.compile(f"(?:{'|'.join(DEVICE_NAMES)})(?:\\.|$)", re.IGNORECASE)


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a model, host or service name, or None when it can.

    The one name check gen uses everywhere (schema validation, rendering, importer): the
    names it yields render unit names systemd accepts (tested against the real systemd).
    """
    if not isinstance(name, str):
        return f"a name must be a string, got {type(name).__name__}"
    if not name or len(name) > NAME_MAX:
        return f"a name has 1 to {NAME_MAX} characters"
    if not _NAME.fullmatch(name) or ".." in name:
        return f"use {NAME_RULE}"
    if not unit_name_ok(f"sglang-{name}.service"):  # the derived unit name, checked as such
        return "the unit name sglang-<name>.service would be invalid"
    device = device_name_problem(name)
    if device is not None:
        return device
    read_as = yaml_reads_as(name)
    if read_as is not None:  # host names are keys of the Ansible inventory, read by YAML 1.1
        return f"a YAML reader takes '{name}' for {read_as}, not a name (Ansible's inventory reads it so): choose another"
    return None


def device_name_problem(name: str) -> str | None:
    """Why a file named ``name`` cannot exist on a Windows checkout (a device name such as CON, or
    ``nul.x``: whatever follows the first dot), or None."""
    if _DEVICE_NAME.match(name):
        return (f"'{name.split('.', 1)[0]}' is a device name on Windows: no file or folder named after it "
                "(hosts/, models/, templates/, output/) can exist on a Windows checkout; choose another")
    return None


@functools.lru_cache(maxsize=4096)  # pure: the fleet asks for the same few names again and again
def yaml_reads_as(text: str) -> str | None:
    """What a plain YAML scalar ``text`` is read as when it is no string (``a boolean`` for
    ``on``, ``a number`` for ``1_000``, ``a date`` for ``2024-01-01``), by YAML 1.1 (PyYAML,
    so Ansible) or 1.2 (ruamel, so gen): the resolvers of ruamel.yaml, which holds both."""
    from ruamel.yaml.resolver import implicit_resolvers  # a name's check only, not every run

    words = {"bool": "a boolean", "int": "a number", "float": "a number", "null": "null",
             "timestamp": "a date", "merge": "a merge key", "value": "a value key"}
    for _versions, tag, regexp, _first in implicit_resolvers:
        kind = tag.rsplit(":", 1)[-1]
        if kind in words and regexp.match(text):
            return words[kind]
    return None


def check_name(name: str) -> str:
    """Return ``name`` if :func:`name_problem` finds nothing, else raise ValueError saying why."""
    problem = name_problem(name)
    if problem is not None:
        raise ValueError(f"invalid name {name!r}: {problem}")
    return name
