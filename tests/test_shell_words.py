"""``gen import``'s word splitting (generator/importer/cmdline.py) against the real bash.

A model card's command is written for bash. For every text below, and for random texts
over the characters a shell treats specially, either gen refuses the text (I001 unterminated
quote, I002 something the shell expands, I011 shell syntax that is no word), or gen's words
are exactly the words bash passes to the program (``printf '%s\\0'`` prints them). Run in an
empty folder, so a glob matches nothing and bash keeps it as written, as gen does (I010).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from generator.errors import Diagnostics
from generator.importer.cmdline import split_command

BASH = shutil.which("bash") or "/bin/bash"


def bash_words(text: str, cwd: Path) -> list[str] | None:
    """The words bash makes of ``text`` (after a command name), or None when bash refuses it."""
    proc = subprocess.run([BASH, "--norc", "--noprofile", "-c", "printf '%s\\0' " + text], capture_output=True,
                          cwd=cwd, timeout=20, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/nonexistent"},
                          check=False)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]


def gen_words(text: str) -> tuple[list[str], set[str]]:
    diags = Diagnostics()
    command = split_command(text, "<command>", diags)
    return [w.text for w in command.words], {d.code for d in diags.items}


REFUSED = {"I001", "I002", "I011"}
NOT_COMPARED = {"I003", "I004", "I010"}  # a second command, an operator, a glob: said, and read otherwise on purpose


def agree(text: str, cwd: Path) -> None:
    words, codes = gen_words(text)
    if codes & REFUSED or codes & NOT_COMPARED:
        return
    assert words == bash_words(text, cwd), (text, words)


@pytest.mark.parametrize("text, words, codes", [
    ("x $'a\\tb\\x41\\u00e9\\z'", ["x", "a\tbAé\\z"], set()),  # bash's ANSI-C quoting
    ("x $'it\\'s' $'\\101\\0ignored'", ["x", "it's", "A"], set()),  # octal; a NUL ends it
    ("x $'\\cA\\e'", ["x", "\x01\x1b"], set()),
    ('x $"translated"', ["x", "translated"], set()),  # a locale string: as written in the C locale
    ("x \"$'not'\"", ["x", "$'not'"], set()),  # not special inside double quotes
    ("x $(nproc)", None, {"I002"}), ('x "$(hostname)-a"', None, {"I002"}), ("x `id -u`", None, {"I002"}),
    ('x "`id -u`"', None, {"I002"}), ("x $((2*4))", None, {"I002"}), ("x ${MODEL", None, {"I002"}),
    ("x $\\\n(pwd)", None, {"I002"}),  # a continuation between '$' and '(' is no separation
    ("x $\\\n'a\\tb'", ["x", "a\tb"], set()), ('x $\\\n"a"', ["x", "a"], set()),  # nor before a quote
    ("x (a)", None, {"I011"}), ("x a)b", None, {"I011"}), ("x $'\\xe9'", None, {"I011"}),
    ("x '(a)' \\( \"$\" '`'", ["x", "(a)", "(", "$", "`"], set()),  # quoted: literal
])
def test_shell_forms(text: str, words: list[str] | None, codes: set[str], tmp_path: Path) -> None:
    got, found = gen_words(text)
    assert found == codes, (text, found)
    if words is not None:
        assert got == words
        assert bash_words(text, tmp_path) == words  # the table itself is what bash does
    else:
        assert bash_words(text, tmp_path) != got  # bash makes something else of it, or refuses it


def test_a_unit_s_exec_start_keeps_what_only_a_shell_expands() -> None:
    """systemd reads '$(', '`' and '(' as plain characters (it expands only $VAR and ${VAR}),
    and a quote inside a word is a quote of that word (extract_first_word with
    EXTRACT_UNQUOTE), so "$'d'" is '$' then the quoted 'd': no ANSI-C string."""
    diags = Diagnostics()
    command = split_command("[Service]\nExecStart=/x/python -m sglang.launch_server --served-model-name a(`b`)$(c)$'d'\n",
                            "u.service", diags)
    assert [w.text for w in command.words][-1] == "a(`b`)$(c)$d" and not diags.items


PIECES = list("ab-= '\"\\$()`#{},~*\t") + ["\\\n", "$(", "${", "$'", '$"', "\\'", "x=", "a,b", "\\x4", "\\x41",
                                           "\\u00e9", "\\U0001F600", "\\101", "\\0", "\\c", "\\e", "\\n", "\\z",
                                           "\\uD800", "7", "F", "$A", "${A}", "$1", "$$"]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=10).map("".join))
def test_gen_refuses_or_splits_as_bash_does(tmp_path_factory: pytest.TempPathFactory, body: str) -> None:
    empty = tmp_path_factory.getbasetemp() / "bash-empty"
    empty.mkdir(exist_ok=True)
    agree("x " + body, empty)
