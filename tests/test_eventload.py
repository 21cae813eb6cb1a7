"""Unit tests for generator.load.eventload: one parse gives exactly what composing gave.

The differential tests load the same text both ways, :func:`manifests.load_text` (events
first, straight from the parser or collected when the text has an ``&``; the composed way
when they give up) and :func:`manifests.load_text_composed` (the
old path alone), and compare everything a caller can see: the data with its types, both
position tables in insertion order, and every diagnostic in order. The inputs are every
YAML file of the repository, hostile cases, and generated documents (tokens, anchors,
aliases, duplicate and merge keys, every YAML 1.2 scalar spelling ruamel resolves).
"""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.errors import Diagnostics
from generator.load import eventload, libyaml
from generator.load.limits import MAX_DEPTH, MAX_NODES, MAX_SCALAR_CHARS
from generator.load.manifests import load_text, load_text_composed
from generator.load.values import check_values
from hypothesis_budget import examples

ROOT = Path(__file__).resolve().parent.parent
LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))


def test_libyaml_is_installed() -> None:
    """ruamel.yaml.clib is a dependency (pyproject.toml): the builder below is the path taken."""
    assert libyaml.FAST


def _outcome(loader: object, text: str) -> tuple[object, list[str]]:
    diags = Diagnostics()
    doc = loader(text, "m.yaml", diags)  # type: ignore[operator]
    seen = None if doc is None else (repr(doc.data), repr(list(doc.value_pos.items())),
                                     repr(list(doc.key_pos.items())), doc.refused, doc.dropped)
    return seen, [repr(d) for d in diags.items]


def _same(text: str) -> None:
    assert _outcome(load_text, text) == _outcome(load_text_composed, text), text
    doc = load_text(text, "m.yaml", Diagnostics())
    if doc is not None and doc.clean_values:  # the whole-document walk would find nothing indeed
        walked, diags = replace(doc, clean_values=False, refused=set()), Diagnostics()
        assert check_values(walked, diags) and diags.items == [] and walked.refused == set(), text


def _repo_texts() -> list[tuple[str, str]]:
    listed = subprocess.run(["git", "ls-files", "*.yaml", "*.yml"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.split()
    out = []
    for name in listed:
        try:
            text = (ROOT / name).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # a fixture of a file that is not UTF-8: load_bytes refuses it before either path
        out.append((name, text.removeprefix("\ufeff")))
    return out


REPO = _repo_texts()


def test_the_repository_has_yaml_files_of_every_kind() -> None:
    folders = {name.split("/")[0] for name, _ in REPO}
    assert {"models", "hosts", "catalogs", "tests"} <= folders and len(REPO) > 40


@pytest.mark.parametrize(("name", "text"), REPO, ids=[name for name, _ in REPO])
def test_every_yaml_file_of_the_repository_loads_the_same(name: str, text: str) -> None:
    _same(text)


def test_the_repositorys_own_manifests_take_the_quick_way() -> None:
    """Not just equal: the one-parse builder really is what loads gen's own files
    (the rules catalog included, whose anchors and aliases it replays)."""
    own = [(n, t) for n, t in REPO if n.split("/")[0] in ("models", "hosts", "catalogs")]
    assert len(own) >= 10
    assert [n for n, t in own if eventload.build(t) is None] == []
    assert any("&" in t and "*" in t for _, t in own)


HOSTILE = [
    LAUGHS, "[" * 20_000, "{" * 20_000, "k: " + "[" * 20_000, "- " * 10_000 + "x", "? " * 10_000,
    "".join(" " * i + "a:\n" for i in range(80)), "[" * MAX_DEPTH + "]" * MAX_DEPTH,
    "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1), "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
    "name: &a [*a, *a]\n", "a: &a {b: *a}\n", "a: *nope\n", "a: &x 1\nb: &x 2\nc: *x\n",
    "a: &x [&x 1, *x]\nb: *x\n", "x: &a 1\n*a : 2\n", "x: &a [1]\n? *a\n: 2\n", "&k a: 1\nb: 2\n",
    "a: 'x&y'\nb: 1\n", "a: x&y\nb: *c\n", "- *a\n", "[&a 1, *a]\n", "--- &a 1\n--- *a\n", "&a [1]\n--- 2\n",
    "a: &x " + "[" * 70 + "]" * 70 + "\n", "a: &x [&y [&z 1]]\nb: [*z, *y, *x]\n", "&a [&a 1]\n", "&r {a: 1}\n",
    "&k a: 1\nb: *k\n", "&k 1: x\nb: [*k, *k]\n", "&k a: *k\n", "a: &v 1\n&k b: *v\nc: *k\n",
    "a: &d [" + ", ".join(["[1, 2, 3, 4, 5, 6, 7, 8]"] * 60) + "]\nb: [" + ", ".join(["*d"] * 11) + "]\n",
    "a: &n [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n"
    "b: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[*n]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
    "".join(f"k{i}: {i}\n" for i in range(MAX_NODES)), "".join(f"k{i}: {i}\n" for i in range(MAX_NODES // 2 - 1)),
    "k: " + "a" * (MAX_SCALAR_CHARS + 1) + "\n", "k: " + "a" * MAX_SCALAR_CHARS + "\n",
    "a: 1\n---\nb: 2\n", "--- 1\n...\n", "---\n", "", "# only a comment\n", "...\n", "%YAML 1.1\n---\na: yes\n",
    "%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n", "a: !!python/object:os.system x\n", "a: !!binary aGk=\n",
    "a: !foo {b: 1}\n", "a: !!str 1\nb: !!int '2'\n", "a: ! 1\n", "a: !!map x\n", "a: !!int x\n",
    "a: 1\nb: " + "9" * 5000 + "\n", "9" * 5000 + ": 1\n", "a: 1\na: 2\n", "1: a\ntrue: b\n1.0: c\n",
    ".nan: a\n.nan: b\n", "a: .nan\nb: [.inf, -.inf, 1e999]\n", "2024-01-01: a\nb: 2024-01-01\n",
    "<<: {a: 1}\n", "a:\n  <<: *x\n", "a: [<<]\n", "'<<': 1\n", "[a, b]: 1\n", "{a: 1}: 2\n", "? [a]\n: b\n",
    "a: \x07\n", "a: \"\\x07\"\n", "a: \x85b\n", "a: b\ufeffc\n", "a\u202e: 1\n", "a: \t1\n", "a:\tb\n",
    "a: 1\r\nb: 2\r\n", "a: [1, 2\n", "a: {b\n", "a: 'x\n", "- a\nb: 1\n", "a:\n- b\n -c\n", "\x00",
    "a: |\n  line\n  two\n", "a: >-\n  folded\n  text\n", "a: 'it''s'\nb: \"\\u00e9\"\n", "~: 1\nnull: 2\n",
    "a: 0o17\nb: 0x1F\nc: 1_000\nd: +1\ne: -0\nf: 0b101\ng: 017\nh: .5\ni: 1.\nj: 1e3\nk: =\n",
    "a: True\nb: TRUE\nc: yes\nd: on\ne: Null\nf: NULL\ng: ''\nh:\n",
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_and_unusual_documents_load_the_same(text: str) -> None:
    _same(text)


def test_anything_that_could_be_reported_goes_the_composed_way() -> None:
    """The builder gives up on whatever the old path reports (and a little more)."""
    for text in (LAUGHS, "name: &a [*a]\n", "a: 1\na: 2\n", "<<: {a: 1}\n", "[a]: 1\n", "a: !!str 1\n",
                 "a: 1\n---\nb: 2\n", "", "a: [1\n", "a: \x07\n", "a: " + "9" * 5000 + "\n"):
        assert eventload.build(text) is None, text


def test_without_libyaml_the_composed_path_is_the_only_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(libyaml, "FAST", False)
    assert eventload.build("a: 1\n") is None
    diags = Diagnostics()
    doc = load_text("a: 1\n", "m.yaml", diags)
    assert diags.items == [] and doc is not None and doc.data == {"a": 1}


# Spellings ruamel resolves to every type (and a few it keeps as strings).
WORDS = ["a", "b", "1", "-1", "+1", "0", "00", "017", "0o17", "0x1F", "0b101", "1_000", "1.5", ".5", "1.", "1e3",
         "-1e999", ".nan", ".NaN", ".inf", "-.inf", "true", "True", "FALSE", "yes", "no", "on", "null", "Null",
         "~", "", "2024-01-01", "2001-12-14t21:59:43.10-05:00", "<<", "=", "'1'", '"true"', "'<<'", '"a\\tb"',
         "a b", "1:2", "99999999999999999999", "9" * 30, "'it''s'", '"\\x07"', "-", "?x", "é", "1e999",
         '"\\u200b"', '"\\u00a0"', "9223372036854775807", "-9223372036854775808", "9223372036854775808",
         '"\\ue000"', '"a\\u202eb"']
SCALARS = st.one_of(st.sampled_from(WORDS), st.text(alphabet="az09-_.:+", max_size=6))
# Words that are valid in any position (block or flow, key or value): most documents made of
# them have no finding, so the builder's own path (aliases replayed) is what gets compared.
SAFE = st.one_of(st.sampled_from([w for w in WORDS if w and w[0] not in "-?<=" and ":" not in w]),
                 st.text(alphabet="az09_", min_size=1, max_size=6))


@st.composite
def documents(draw: st.DrawFn, clean: bool = False) -> str:
    """YAML text in block and flow style, with anchors and aliases that may be undefined,
    cyclic, reused or used as keys (``clean``: valid words, aliases to complete anchors)."""
    words = SAFE if clean else SCALARS
    done: list[str] = []  # anchors whose node is complete: most aliases use one of them
    names = iter(range(10**6))

    def anchor() -> str:
        if draw(st.integers(0, 4)):
            return ""
        reuse = done and not clean and draw(st.integers(0, 5)) == 0
        return f"&{draw(st.sampled_from(done)) if reuse else f'a{next(names)}'} "

    def alias() -> str:
        if done and (clean or draw(st.integers(0, 4))):
            return f"*{draw(st.sampled_from(done))}"
        return f"*a{draw(st.integers(0, 5))}"  # undefined, or inside its own anchor

    def complete(text: str) -> str:
        if text.startswith("&"):
            done.append(text[1:].split(" ", 1)[0])
        return text

    def inline(depth: int) -> str:
        pick = draw(st.integers(0, 9))
        if pick == 0 or (clean and pick == 1 and done):
            return alias()
        if depth >= 3 or pick < 6:
            return complete(anchor() + draw(words))
        items = draw(st.lists(st.tuples(words, st.just(None)), max_size=3))
        head = anchor()
        if pick < 8:
            return complete(head + "[" + ", ".join(inline(depth + 1) for _ in items) + "]")
        return complete(head + "{" + ", ".join(f"{k}: {inline(depth + 1)}" for k, _ in items) + "}")

    def block(depth: int, indent: int) -> str:
        pad = " " * indent
        lines = []
        as_list = draw(st.booleans())
        for key in draw(st.lists(words, min_size=1, max_size=4)):
            head = f"{pad}- " if as_list else f"{pad}{key}:"
            if depth < 3 and draw(st.integers(0, 3)) == 0:
                name = anchor()
                lines.append(f"{head} {name}".rstrip() + "\n" + block(depth + 1, indent + 2))
                complete(name)
            else:
                lines.append(f"{head} {inline(depth)}")
        return "\n".join(lines)

    return block(0, 0) + "\n"


@settings(max_examples=examples(300))
@given(text=documents())
def test_generated_documents_load_the_same(text: str) -> None:
    _same(text)


@settings(max_examples=examples(200))
@given(text=st.text(alphabet="ab1:- \n\t[]{},&*!'\"#?|>.~<=%\\", max_size=60))
def test_generated_token_soup_loads_the_same(text: str) -> None:
    _same(text)


@settings(max_examples=examples(300))
@given(text=documents(clean=True))
def test_generated_documents_with_aliases_load_the_same(text: str) -> None:
    _same(text)


@settings(max_examples=examples(100))
@given(text=st.one_of(documents(), documents(clean=True)))
def test_generated_documents_without_findings_take_the_quick_way(text: str) -> None:
    """The builder gives up only where composing finds something (or on an alias used as a
    key, which these documents never write): the differential tests above compare its own
    results, not the composed path twice."""
    seen, errors = _outcome(load_text_composed, text)
    if seen is not None and not errors:
        assert eventload.build(text) is not None, text


# More cases from an attack on the builder (session 4): YAML 1.1 spellings under a %YAML 1.1
# directive, a date key against the same text quoted, line breaks inside quoted scalars, an
# alias that carries a nested collection to the depth limit, and the node limit reached
# exactly through aliases (the builder's own path just below it, the composed one just past).
ATTACK = [
    "%YAML 1.1\n---\na: 0o17\nb: 017\nc: 1_000\nd: 2024-01-01\ne: on\nf: 0b1\ng: 1:20\n",
    "2024-01-01: a\n'2024-01-01': b\n", "2024-01-01: a\n2024-01-01 00:00:00: b\n", "2024-02-30: a\n",
    "0: a\n-0: b\n", "0: a\n-0.0: b\n", "0: a\nfalse: b\n", "'': a\n: b\n", "? \n: b\n", "{? a: 1}\n",
    "a: 1\r\nb: 'x\r\n  y'\r\n", "a: 1\rb: 2\r", "\"a\nb\": 1\n", "a: \"x\n\n y\"\n", "a: \"\\L\\N\\_\"\n",
    "a: 0x_1F\nb: 0o_17\nc: 1__0\nd: +.inf\ne: +.5\nf: -.nan\ng: 1e+3\nj: 190:20:30\nk: -0x1\n",
    "a: &a " + "x" * MAX_SCALAR_CHARS + "\nb: *a\n", "a: &x 1\nb: &y *x\n", "&a a: &b b\n*b : *a\n",
    *("a: &n " + "[" * d + "1" + "]" * d + "\nb: " + "[" * (64 - d) + "*n" + "]" * (64 - d) + "\n"
      for d in (31, 32, 33, 62, 63)),
    *("a: &n " + "{k: " * d + "1" + "}" * d + "\nb: " + "[" * (63 - d) + "*n" + "]" * (63 - d) + "\n"
      for d in (31, 32, 62)),
    # 5 nodes + one per alias; 13 nodes + 9 per alias: MAX_NODES - 1, MAX_NODES, MAX_NODES + 1 (or + 9)
    *("a: &a x\nb: [" + ", ".join(["*a"] * (MAX_NODES - 5 + extra)) + "]\n" for extra in (-1, 0, 1)),
    *("a: &a [" + ", ".join(["1"] * 8) + "]\nb: [" + ", ".join(["*a"] * ((MAX_NODES - 13) // 9 + extra)) + "]\n"
      for extra in (0, 1)),
]


@pytest.mark.parametrize("text", ATTACK, ids=range(len(ATTACK)))
def test_attack_cases_load_the_same(text: str) -> None:
    _same(text)
