"""Tests for generator/systemd.py: tables, refusals, and parse-back through the real systemd.

Escaping is proven by parsing back (podman quadlet's way), not by comparing strings: the
escaped text is written into a unit or env file under its real name and the real systemd
252 on this machine parses it (see tests/systemd_unquote.py for how, and what it cannot
show offline). The few string tables only pin the readable form of common words.
"""

from __future__ import annotations

import random
import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from systemd_unquote import (
    analyze_verify,
    env_file_readback,
    exec_time_dollars,
    split_quoted,
    systemd_load,
)

from generator.systemd import (
    check_env_name,
    check_unit_name,
    env_file_line,
    environment_assignment,
    environment_line,
    exec_line,
    exec_lines,
    exec_word,
    noncharacter,
    path_value,
    unit_name_ok,
)

PROGRAM = "/bin/echo"  # exists, so systemd-analyze verify has nothing to say about it
UNIT_HEAD = "[Unit]\nDescription=gen escaping test\nDefaultDependencies=no\n\n[Service]\n"

# Words that broke or could break naive quoting: specifiers, variables, quotes, backslashes
# (also at the end, where a bare one would continue the line), comment and separator
# characters at the start of a continuation line, blanks, globs, non-ASCII.
NASTY = [
    "", " ", "  lead", "trail  ", "a b", "\t", "tab\there", "%", "%n", "%%", "%i%u", "$",
    "$$", "$HOME", "${HOME}", "$$HOME", "a$", "\\", "\\\\", "end\\", "\\;", ";", ";x", "#",
    "#x", "# comment", "'", '"', "it's", 'say "hi"', "'\"'", "a'b\"c", "`cmd`", "*", "?[a]",
    "{a,b}", "~", "!", "-", "--", "@", "+", ":", "=", "a=b", "--flag=va lue", "ü", "日本語",
    "emoji 🙂", "\\x41", "\\n", "\\t", "%%n$$x\\\\", "x;y", "a\\ b", "\u00a0nbsp", "\u2028ls",
]

CONTROL = ["\n", "\r", "\x00", "\x1b", "\x7f", "\x85", "a\nb", "tail\n"]

# Without noncharacters: systemd refuses them, so gen does (test_noncharacters_are_refused).
printable = (st.characters(blacklist_categories=("Cc", "Cs")).filter(lambda c: noncharacter(c) is None)
             | st.just("\t"))
words = st.text(alphabet=printable, max_size=20)


def _unit(body: str) -> str:
    """A minimal service around ``body`` ([Service] lines)."""
    return UNIT_HEAD + body + "\n"


def _readback_argv(groups: list[list[str]]) -> list[str]:
    """Render ``groups`` with exec_lines, load with real systemd, return exec-time argv."""
    parsed = systemd_load("gen-escape-test.service", _unit(exec_lines(groups)))
    [argv] = parsed.commands["ExecStart"]
    return [exec_time_dollars(w) for w in argv]


# ---------------------------------------------------------------- readable forms (tables)


@pytest.mark.parametrize(
    ("word", "written"),
    [
        ("--model-path", "--model-path"),
        ("/shared/models/Qwen3.5-122B-A10B", "/shared/models/Qwen3.5-122B-A10B"),
        ("0.85", "0.85"),
        ("host:8000", "host:8000"),
        ("50%", "50%%"),
        ("$HOME", "$$HOME"),
        ("a b", '"a b"'),
        ("", '""'),
        ('a"b', '"a\\"b"'),
        ("a\\b", '"a\\\\b"'),
        ("\t", '"\\t"'),
        (";", '";"'),
        ("#x", '"#x"'),
    ],
)
def test_exec_word_readable_form(word: str, written: str) -> None:
    """Common words stay readable; only what needs it is quoted or doubled."""
    assert exec_word(word) == written


def test_exec_lines_layout() -> None:
    """One flag per continuation line, program words on the first line, no trailing newline."""
    text = exec_lines(
        [["/opt/venv/bin/python", "-m", "sglang.launch_server"], ["--model-path", "/x"],
         ["--trust-remote-code"]]
    )
    assert text == (
        "ExecStart=/opt/venv/bin/python -m sglang.launch_server \\\n"
        "  --model-path /x \\\n"
        "  --trust-remote-code"
    )
    assert exec_lines([["/bin/true"]], key="ExecStartPre") == "ExecStartPre=/bin/true"


def test_environment_and_env_file_forms() -> None:
    """Both writers always quote; each escapes its own parser's specials."""
    assert environment_assignment("A", "50% $x") == '"A=50%% $x"'
    assert environment_line("A", "1") == 'Environment="A=1"'
    assert env_file_line("A", 'x"\\`$%') == 'A="x\\"\\\\\\`\\$%"'


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize("bad", CONTROL)
def test_control_characters_refused(bad: str) -> None:
    """NUL, newline and other control characters cannot be written anywhere."""
    with pytest.raises(ValueError, match="control character"):
        exec_word(bad)
    with pytest.raises(ValueError, match="control character"):
        environment_assignment("A", bad)
    with pytest.raises(ValueError, match="control character"):
        env_file_line("A", bad)


def test_control_regexes_match_unicodedata() -> None:
    """The regexes _refuse_control searches hold exactly Unicode's Cc and Cs (TAB aside)."""
    import unicodedata

    from generator.systemd import _CONTROL, _CONTROL_NO_TAB

    for code in range(0x110000):
        ch = chr(code)
        refused = unicodedata.category(ch) in ("Cc", "Cs")
        assert (_CONTROL.match(ch) is not None) == refused, hex(code)
        assert (_CONTROL_NO_TAB.match(ch) is not None) == (refused and ch != "\t"), hex(code)
    with pytest.raises(ValueError, match="control character U\\+0007 at offset 3"):
        exec_word("a\tb\x07\x08")  # the first refused one, past an allowed TAB

def test_lone_surrogate_refused() -> None:
    """A string that is not valid UTF-8 cannot reach a unit file."""
    with pytest.raises(ValueError):
        exec_word("\udc80")


@pytest.mark.parametrize(
    "argv",
    [[], ["echo"], ["bin/echo"], ["-/bin/echo"], ["/bin/"], ["/bin/e$cho"], ["/bin/e\\cho"],
     ['/bin/"echo'], ["/bin/e'cho"], ["/bin/ec\nho"], "/bin/echo"],
)
def test_exec_line_refuses_bad_program(argv: list[str]) -> None:
    """The program must be a plain absolute path systemd runs exactly as written."""
    with pytest.raises(ValueError):
        exec_line(argv)


@pytest.mark.parametrize(
    ("groups", "key"),
    [([], "ExecStart"), ([["/bin/echo"], []], "ExecStart"), ([["/bin/echo"], "ab"], "ExecStart"),
     ([["/bin/echo"]], "Environment"), ([["/bin/echo"]], "ExecStart\n")],
)
def test_exec_lines_refuses_bad_shape(groups: list, key: str) -> None:
    """Empty groups, bare strings and non-Exec keys are programming errors."""
    with pytest.raises(ValueError):
        exec_lines(groups, key=key)


@pytest.mark.parametrize("name", ["", "1A", "A-B", "A B", "A=B", "Ä", "A.B", "A\n"])
def test_bad_env_names_refused(name: str) -> None:
    """Only [A-Za-z_][A-Za-z0-9_]* names (systemd's env_name_is_valid)."""
    with pytest.raises(ValueError, match="invalid environment variable name"):
        check_env_name(name)
    with pytest.raises(ValueError):
        environment_assignment(name, "x")
    with pytest.raises(ValueError):
        env_file_line(name, "x")


@pytest.mark.parametrize("name", ["A", "_", "CUDA_VISIBLE_DEVICES", "a1", "_X_9"])
def test_good_env_names(name: str) -> None:
    """Valid names pass unchanged."""
    assert check_env_name(name) == name


GOOD_UNITS = ["sglang-qwen.service", "sglang_kimi-k2.5.service", "a.service", "x.y.target",
              "A" * 247 + ".service"]
BAD_UNITS = ["", "sglang-qwen", "a..b.service", ".hidden.service", "-lead.service",
             "sp ace.service", "ü.service", "x@.service", "x@y.service", "a\\x2d.service",
             "a.bogus", ".service", "A" * 248 + ".service", "a/b.service", "a.service\n",
             "x:y.service"]


@pytest.mark.parametrize("name", GOOD_UNITS)
def test_unit_names_accepted_and_loaded_by_systemd(name: str) -> None:
    """Names gen accepts are names systemd loads without a word."""
    assert unit_name_ok(name)
    assert check_unit_name(name) == name
    body = _unit(f"ExecStart={PROGRAM}") if name.endswith(".service") else "[Unit]\nDescription=t\n"
    assert analyze_verify(name, body) == ""


@pytest.mark.parametrize("name", BAD_UNITS)
def test_unit_names_refused(name: str) -> None:
    """Names outside the subset are refused with a reason."""
    assert not unit_name_ok(name)
    with pytest.raises(ValueError, match="invalid unit name"):
        check_unit_name(name)


# ---------------------------------------------------------------- parse-back: ExecStart=


def test_nasty_words_parse_back_one_per_line() -> None:
    """Each nasty word as its own continuation line comes back exactly (real systemd)."""
    groups = [[PROGRAM], *[[w] for w in NASTY]]
    assert _readback_argv(groups) == [PROGRAM, *NASTY]


def test_nasty_words_parse_back_on_one_line() -> None:
    """All nasty words on one line come back exactly, and verify prints nothing."""
    argv = [PROGRAM, *NASTY]
    line = "ExecStart=" + exec_line(argv)
    parsed = systemd_load("gen-escape-line.service", _unit(line))
    assert [exec_time_dollars(w) for w in parsed.commands["ExecStart"][0]] == argv
    assert analyze_verify("gen-escape-line.service", _unit(line)) == ""


def test_nasty_groups_verify_silently() -> None:
    """systemd-analyze verify says nothing about the multi-line rendering either."""
    groups = [[PROGRAM, "-m", "x"], *[["--flag", w] for w in NASTY]]
    assert analyze_verify("gen-escape-verify.service", _unit(exec_lines(groups))) == ""


def test_naive_quoting_is_caught() -> None:
    """The read-back can fail: shlex quoting loses specifiers and comment-like lines."""
    naive = "ExecStart=" + " \\\n  ".join([PROGRAM, shlex.quote("%n"), "#x", "y"])
    [argv] = systemd_load("gen-naive.service", _unit(naive)).commands["ExecStart"]
    assert argv != [PROGRAM, "%n", "#x", "y"]  # %n became the unit name, '#x' a comment
    assert argv == [PROGRAM, "gen-naive.service", "y"]


def test_seeded_bulk_words_parse_back() -> None:
    """800 random words over a hostile alphabet, one systemd load, all come back exactly."""
    rng = random.Random(20250101)
    alphabet = list(" \t%$\\\"'#;`*?[]{}~!-=@:,./ü日🙂") + list("abcXYZ019_")
    bulk = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(800)]
    groups = [[PROGRAM], *[bulk[i : i + 4] for i in range(0, len(bulk), 4)]]
    assert _readback_argv(groups) == [PROGRAM, *bulk]


@settings(max_examples=examples(15))
@given(st.lists(st.lists(words, min_size=1, max_size=4), min_size=1, max_size=12))
def test_property_exec_lines_parse_back(groups: list[list[str]]) -> None:
    """Any printable words in any grouping come back from systemd exactly."""
    assert _readback_argv([[PROGRAM], *groups]) == [PROGRAM, *(w for g in groups for w in g)]


# Found by test_property_exec_lines_parse_back (groups=[['\ufdd0']]): systemd called the
# line "not UTF-8 clean" and dropped the ExecStart=. Kept, with its siblings, as examples.
@pytest.mark.parametrize("char", ["\ufdd0", "\ufdef", "\ufffe", "\uffff", "\U0001fffe", "\U0010ffff"])
def test_noncharacters_are_refused(char: str) -> None:
    """systemd drops a line holding a Unicode noncharacter, so gen refuses to write one."""
    raw = _unit(f"ExecStart={PROGRAM} a{char}b")
    assert "is not UTF-8 clean" in analyze_verify("gen-nonchar-test.service", raw)
    for write in (exec_word, lambda w: env_file_line("A", w), lambda w: path_value("/m/" + w),
                  lambda w: environment_assignment("A", w)):
        with pytest.raises(ValueError, match="noncharacter"):
            write(f"a{char}b")
    assert noncharacter(f"a{char}b") == char and noncharacter("a\ufdcf\ufdf0\ufffdb") is None


# ---------------------------------------------------------------- parse-back: Environment=


def test_environment_parse_back() -> None:
    """Environment= values come back exactly, '$' literal and '%' undoubled."""
    pairs = [(f"GEN_V{i}", v) for i, v in enumerate(NASTY)]
    body = "ExecStart=/bin/true\n" + "\n".join(environment_line(n, v) for n, v in pairs)
    parsed = systemd_load("gen-env-test.service", _unit(body))
    assert parsed.environment == [f"{n}={v}" for n, v in pairs]
    assert analyze_verify("gen-env-test.service", _unit(body)) == ""


@settings(max_examples=examples(12))
@given(st.lists(words, min_size=1, max_size=20))
def test_property_environment_parse_back(values: list[str]) -> None:
    """Any printable values survive Environment= quoting."""
    pairs = [(f"GEN_P{i}", v) for i, v in enumerate(values)]
    body = "ExecStart=/bin/true\n" + "\n".join(environment_line(n, v) for n, v in pairs)
    parsed = systemd_load("gen-env-prop.service", _unit(body))
    assert parsed.environment == [f"{n}={v}" for n, v in pairs]


# ---------------------------------------------------------------- parse-back: env files


def _env_file_roundtrip(values: list[str]) -> dict[str, str]:
    """Write values with env_file_line, read back through systemd's env-file parser."""
    names = [f"GEN_F{i}" for i in range(len(values))]
    text = "# written by gen\n" + "".join(env_file_line(n, v) + "\n" for n, v in zip(names, values))
    got, stderr = env_file_readback(text)
    assert "50-gen-test.conf" not in stderr, stderr
    return {n: got.get(n, "<missing>") for n in names}


def test_env_file_parse_back() -> None:
    """Env-file values come back exactly ('$' and empty are checked separately below)."""
    values = [v for v in NASTY if v and "$" not in v]
    assert _env_file_roundtrip(values) == {f"GEN_F{i}": v for i, v in enumerate(values)}


def test_env_file_dollar_is_unescaped_by_the_parser() -> None:
    """'\\$' reaches the value as '$': the generator then expands it, which proves it.

    EnvironmentFile= does not expand, the environment.d generator does; so '$GEN_X' written
    by env_file_line must come out as GEN_X's value here, not as a literal backslash.
    """
    line = env_file_line("GEN_D", "cost $GEN_X or ${GEN_X}, `q`")
    got, _ = env_file_readback(line + "\n", extra_env={"GEN_X": "42"})
    assert got["GEN_D"] == "cost 42 or 42, `q`"


@settings(max_examples=examples(12))
@given(st.lists(st.text(alphabet=printable.filter(lambda c: c != "$"), min_size=1, max_size=20),
                min_size=1, max_size=20))
def test_property_env_file_parse_back(values: list[str]) -> None:
    """Any printable value without '$' comes back from the env-file parser exactly."""
    assert _env_file_roundtrip(values) == {f"GEN_F{i}": v for i, v in enumerate(values)}


# ---------------------------------------------------------------- the decoder itself


@pytest.mark.parametrize(
    ("text", "words_"),
    [("a b", ["a", "b"]), ('"a b" ""', ["a b", ""]), ('"\\$\\"\\\\\\t\\`"', ['$"\\\t`']),
     ("", [])],
)
def test_split_quoted(text: str, words_: list[str]) -> None:
    """The dump decoder reads systemd's quoting."""
    assert split_quoted(text) == words_


@pytest.mark.parametrize("text", ['"open', '"\\q"', "a\\b", "a  b", "a ", '"a"b'])
def test_split_quoted_refuses_unknown(text: str) -> None:
    """Anything outside the known dump format fails loudly instead of decoding wrongly."""
    with pytest.raises(ValueError):
        split_quoted(text)


def test_exec_time_dollars_refuses_variables() -> None:
    """An undoubled '$' would be a variable reference at exec time."""
    assert exec_time_dollars("a$$b") == "a$b"
    with pytest.raises(ValueError):
        exec_time_dollars("$HOME")
