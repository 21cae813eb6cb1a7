"""Find the SGLang program in a split command: ``python -m sglang.launch_server``, ``sglang serve``.

Prefix words (``VAR=value``, ``env``, ``nohup``, ``exec``) are taken off first; the
``VAR=value`` words become the manifest's environment. Code I005: not an SGLang launch
command.
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
_PREFIX_WORDS = {"nohup": "nohup", "exec": "exec", "env": "env"}
# Python options that may stand before "-m" (those taking a value take the next word).
_PY_SWITCHES = {"-u", "-O", "-OO", "-B", "-s", "-S", "-E", "-I", "-q"}
_PY_VALUED = {"-X", "-W"}


def find_program(words: Sequence[Word], diags: Diagnostics,
                 notes: list[str]) -> tuple[int, list[Word]] | None:
    """Index of the first SGLang flag, and the ``VAR=value`` words before the program."""
    env: list[Word] = []
    i = 0
    while i < len(words):
        w = words[i].text
        if _ENV_ASSIGN.match(w):
            env.append(words[i])
        elif w in _PREFIX_WORDS:
            notes.append(f"'{w}' before the command dropped: systemd runs the server")
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
    j = i + 1
    while j < len(words) and (words[j].text in _PY_SWITCHES or words[j].text in _PY_VALUED):
        j += 2 if words[j].text in _PY_VALUED else 1
    # Any interpreter path counts (a venv's bin/python, /opt/sglang/bin/py3...) when it runs
    # the launcher module.
    if j + 1 < len(words) and words[j].text == "-m" and words[j + 1].text == "sglang.launch_server":
        notes.append(f"'{' '.join(w.text for w in words[i:j + 2])}' dropped: the service "
                     "runs the host's own sglang.python")
        return j + 2, env
    if _PYTHON.match(first.text):
        diags.error(first.pos, "I005",
                    f"'{first.text}' does not run `-m sglang.launch_server`; gen imports SGLang "
                    "server commands only")
        return None
    if name == "sglang" and i + 1 < len(words) and words[i + 1].text == "serve":
        notes.append(f"'{first.text} serve' dropped: the service runs the host's own "
                     "`sglang.python -m sglang.launch_server`, which takes the same flags")
        return i + 2, env
    if looks_like_option(first.text):
        notes.append("flags without a program: read as `python -m sglang.launch_server` flags")
        return i, env
    diags.error(first.pos, "I005",
                f"'{first.text}' is not an SGLang launch command: expected "
                "`python -m sglang.launch_server ...` or `sglang serve ...`")
    return None
