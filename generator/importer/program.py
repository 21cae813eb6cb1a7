"""Find the SGLang program in a split command: ``python -m sglang.launch_server``, ``sglang serve``.

Prefix words (``VAR=value``, ``env`` with its options, ``nohup``, ``exec``) are taken off
first; the ``VAR=value`` words become the manifest's environment. Code I005: not an SGLang
launch command; I009: an option of ``env`` that a unit cannot carry (``-C``, ``-S``, signals).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from generator.errors import Diagnostics, Position
from generator.importer.cmdline import Word
from generator.importer.grouping import looks_like_option

_PYTHON = re.compile(r"^(?:.*/)?python(?:3(?:\.\d+)?)?$")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Programs that run the next words (by their file name: a unit writes /usr/bin/env).
_PREFIX_WORDS = frozenset({"nohup", "exec", "env"})
# Programs that run the server in a way gen decides itself, from the inventory: refused with
# what gen does instead, so the operator removes them knowingly (their options vary, and
# dropping a CPU binding without a word would change where the server runs).
_WRAPPERS = {
    "numactl": "gen binds each service to its GPUs' NUMA node itself (CPUAffinity=, NUMAPolicy=bind, "
               "NUMAMask= from the inventory's numa and gpus)",
    "taskset": "gen binds each service to its GPUs' NUMA node's CPUs itself (CPUAffinity= from the inventory)",
    "sudo": "the unit runs the server as its service user (User=), never through sudo",
    "su": "the unit runs the server as its service user (User=)",
    "runuser": "the unit runs the server as its service user (User=)",
    "setpriv": "the unit runs the server as its service user (User=) with gen's hardening",
    "systemd-run": "gen renders the unit itself; import the command systemd-run starts",
    "docker": "gen runs the host's own SGLang install, not a container; import the command the container runs",
    "podman": "gen runs the host's own SGLang install, not a container; import the command the container runs",
    "srun": "gen runs one unit per node (multinode:); import the command srun starts on each node",
    "torchrun": "SGLang starts its own workers; import the `python -m sglang.launch_server` command",
}
# CPython's own options before "-m" (its getopt: letters run together, as in '-uB'; one that
# takes a value takes the rest of its word or the next word: '-msglang.launch_server', '-Xdev',
# '-X dev'). Letters without a value, and those with one (other than -m, -c), of CPython 3.x:
_PY_SWITCH_LETTERS = frozenset("bBdEiIOPqRsSuvx")
_PY_VALUE_LETTERS = frozenset("WX")
_PY_VALUED_LONG = frozenset({"--check-hash-based-pycs"})
# GNU env's options. Without them, 'env -i PATH=/usr/bin python -m ...' read '-i' as the first
# SGLang flag and the program's own words as more. What a service's environment already is
# (systemd starts it empty of the caller's variables, and sets no variable it is not told to)
# makes these say nothing a unit needs: dropped, and said so.
_ENV_SWITCHES = {"-i": "starts from an empty environment", "--ignore-environment": "starts from an empty environment",
                 "-": "starts from an empty environment", "-0": "ends its output lines with NUL",
                 "--null": "ends its output lines with NUL", "-v": "prints what it runs",
                 "--debug": "prints what it runs"}
_ENV_UNSET = ("-u", "--unset")
# Options whose effect a unit would lose (a working folder, an argv split from one string,
# signal dispositions): refused, so the imported service does not run otherwise than the line.
_ENV_REFUSED = ("-C", "--chdir", "-S", "--split-string", "-P", "--default-signal", "--ignore-signal",
                "--block-signal", "--list-signal-handling")


def find_program(words: Sequence[Word], diags: Diagnostics,
                 notes: list[str]) -> tuple[int, list[Word]] | None:
    """Index of the first SGLang flag, and the ``VAR=value`` words before the program."""
    env: list[Word] = []
    i = 0
    while i < len(words):
        w = words[i].text
        if _ENV_ASSIGN.match(w):
            env.append(words[i])
        elif PurePosixPath(w).name in _PREFIX_WORDS:
            notes.append(f"'{w}' before the command dropped: systemd runs the server")
            if PurePosixPath(w).name == "env":
                i = _skip_env_options(words, i + 1, diags, notes, env)
                if i < 0:
                    return None
                continue
        else:
            break
        i += 1
    if i == len(words):
        diags.error(words[-1].pos if words else Position("<command>"), "I005",
                    "no command found: expected `python -m sglang.launch_server ...` or "
                    "`sglang serve ...`")
        return None
    first = words[i]
    name = PurePosixPath(first.text).name
    # Any interpreter path counts (a venv's bin/python, /opt/sglang/bin/py3...) when it runs
    # the launcher module.
    after = _python_module_run(words, i + 1)
    if after is not None:
        notes.append(f"'{' '.join(w.text for w in words[i:after])}' dropped: the service "
                     "runs the host's own sglang.python")
        return after, env
    if _PYTHON.fullmatch(first.text):
        diags.error(first.pos, "I005",
                    f"'{first.text}' does not run `-m sglang.launch_server`; gen imports SGLang "
                    "server commands only")
        return None
    if name == "sglang" and i + 1 < len(words) and words[i + 1].text == "serve":
        notes.append(f"'{first.text} serve' dropped: the service runs the host's own "
                     "`sglang.python -m sglang.launch_server`, which takes the same flags")
        return i + 2, env
    if name in _WRAPPERS:
        diags.error(first.pos, "I005",
                    f"'{first.text}' runs the server inside another program: {_WRAPPERS[name]}",
                    f"remove '{first.text}' and its options from the command, and import the "
                    "`python -m sglang.launch_server ...` part")
        return None
    if looks_like_option(first.text):
        notes.append("flags without a program: read as `python -m sglang.launch_server` flags")
        return i, env
    diags.error(first.pos, "I005",
                f"'{first.text}' is not an SGLang launch command: expected "
                "`python -m sglang.launch_server ...` or `sglang serve ...`")
    return None


def _python_module_run(words: Sequence[Word], j: int) -> int | None:
    """The index after ``-m sglang.launch_server`` when ``words[j:]`` are an interpreter's options
    that run it, read as CPython reads them; None for anything else (``-c``, ``-h``, a script)."""
    while j < len(words):
        w = words[j].text
        if w in _PY_VALUED_LONG:
            j += 2
            continue
        if len(w) < 2 or w[0] != "-" or w[1] == "-":
            return None
        k = 1
        while k < len(w) and w[k] in _PY_SWITCH_LETTERS:
            k += 1
        if k == len(w):
            j += 1
            continue
        if w[k] not in _PY_VALUE_LETTERS and w[k] != "m":
            return None  # -c CMD, -h, -V, or a letter CPython refuses
        value, j = (w[k + 1:], j + 1) if w[k + 1:] else (words[j + 1].text if j + 1 < len(words) else None, j + 2)
        if w[k] == "m":
            return j if value == "sglang.launch_server" else None
    return None


def _skip_env_options(words: Sequence[Word], i: int, diags: Diagnostics, notes: list[str],
                      env: list[Word]) -> int:
    """Index of the first word after ``env``'s options (from ``words[i]``), or -1 after an
    I009 for an option a unit cannot carry. ``-u NAME`` (``--unset=NAME``, ``-uNAME``) and
    the switches of :data:`_ENV_SWITCHES` are dropped with a note; ``--`` ends the options.
    As env does, ``-i`` forgets the ``VAR=value`` words before it and ``-u NAME`` that one."""
    while i < len(words):
        w = words[i].text
        if w == "--":
            return i + 1
        if w in _ENV_SWITCHES:
            if _ENV_SWITCHES[w].startswith("starts from an empty"):
                notes.extend(f"'{e.text}' dropped: 'env {w}' after it forgets it" for e in env)
                env.clear()
            notes.append(f"'env {w}' dropped: env {_ENV_SWITCHES[w]}; a service starts with systemd's "
                         "environment and the variables of its unit only")
            i += 1
            continue
        unset = next((o for o in _ENV_UNSET if w == o or w.startswith(o + "=")
                      or (o == "-u" and w.startswith("-u") and len(w) > 2)), None)
        if unset is not None:
            name = w[len(unset):].lstrip("=") if w != unset else None
            if name is None:
                if i + 1 == len(words):
                    return len(words)  # 'env -u' and nothing to run: no command (I005)
                name = words[i + 1].text
                i += 1
            notes.extend(f"'{e.text}' dropped: 'env {unset} {name}' after it unsets it"
                         for e in env if e.text.partition("=")[0] == name)
            env[:] = [e for e in env if e.text.partition("=")[0] != name]
            notes.append(f"'env {unset} {name}' dropped: the service gets the variables its unit sets "
                         "(gen's own and env:), no others")
            i += 1
            continue
        refused = next((o for o in _ENV_REFUSED if w == o or w.startswith(o + "=")
                        or (len(o) == 2 and w.startswith(o) and len(w) > 2)), None)
        if refused is not None or w.startswith("-"):  # an option of env gen does not know: the same
            shown = refused or w
            diags.error(words[i].pos, "I009",
                        f"'env {shown}': " + ("an option of env that a unit gen renders does not carry (a "
                                              "working folder, one string split into words, signal handling)"
                                              if refused else "an option of env gen does not know")
                        + ", so the service would not run as this line does",
                        f"remove '{w}' from the command; if the server needs what it did, say so in the "
                        "host's template")
            return -1
        return i
    return i

