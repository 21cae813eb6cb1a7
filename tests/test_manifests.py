"""Unit tests for generator.load.manifests: positions, duplicate keys, malformed YAML."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import Diagnostics, Position
from generator.load.manifests import load_file, load_text


def _load(text: str) -> tuple[object, list[str]]:
    diags = Diagnostics()
    doc = load_text(text, "f.yaml", diags)
    return doc, [str(d) for d in diags.sorted()]


def test_positions_of_keys_and_values_are_one_based() -> None:
    doc, errors = _load("a: 1\nb:\n  - x\n  - {c: 2}\n")
    assert errors == []
    assert doc.data == {"a": 1, "b": ["x", {"c": 2}]}
    assert doc.pos(("a",)) == Position("f.yaml", 1, 4)
    assert doc.pos(("a",), key=True) == Position("f.yaml", 1, 1)
    assert doc.pos(("b", 1, "c")) == Position("f.yaml", 4, 9)
    # A path that does not exist falls back to its nearest parent.
    assert doc.pos(("b", 1, "missing")) == Position("f.yaml", 4, 5)


def test_every_duplicate_key_is_reported_at_its_own_position() -> None:
    doc, errors = _load("a: 1\nb: {c: 2, c: 3}\na: 4\n")
    assert errors == [
        "f.yaml:2:11: error[Y002]: duplicate key 'c' (first defined at line 2)"" (keep one of the two: gen never picks one for you)",
        "f.yaml:3:1: error[Y002]: duplicate key 'a' (first defined at line 1)"" (keep one of the two: gen never picks one for you)",
    ]
    assert doc.data == {"a": 1, "b": {"c": 2}}  # the first definition wins, nothing silently replaced


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: [1, 2\n", "f.yaml:1:4: error[Y026]: the '[' opened here is not closed: the list runs on into line 2; "
         "the YAML parser says \"did not find expected ',' or ']'\" (close it with ']' after its last item)"),
        ("a: b: c\n", "f.yaml:1:5: error[Y024]: a second ': ' on one line: a value that holds a colon and a space "
         "must be quoted; the YAML parser says \"mapping values are not allowed in this context\" "
         "(write 'a: \"b: c\"')"),
        ("", "f.yaml:1:1: error[Y006]: the file is empty"),
        ("a: &x 1\nb: *y\n", "f.yaml:2:4: error[Y025]: a value that starts with '*' must be quoted: YAML reads "
         "'*' as an alias (a reference to an '&anchor'); the YAML parser says \"found undefined alias\" "
         "(write 'b: \"*y\"')"),
        ("a: \"\\q\"\n", "f.yaml:1:5: error[Y001]: malformed YAML: found unknown escape character"),
        ("base: &b {x: 1}\nc:\n  <<: *b\n", "f.yaml:3:3: error[Y004]: YAML merge keys ('<<') are not supported"),
        ("a: \x07\n", "f.yaml:1:4: error[Y001]: malformed YAML: character U+0007 is not allowed (control characters are not allowed)"),
    ],
)
def test_malformed_yaml_is_one_positioned_diagnostic(text: str, expected: str) -> None:
    doc, errors = _load(text)
    assert errors == [expected]
    assert doc is None  # the data would be a guess: nothing else is checked


@pytest.mark.parametrize(("text", "where"), [("a: 1\nb: <<\n", "2:4"), ("- 1\n- <<\n", "2:3")])
def test_a_plain_merge_word_as_a_value_is_refused_at_the_value(text: str, where: str) -> None:
    """YAML 1.1's resolver reads a plain ``<<`` as the merge tag wherever it stands, a value too."""
    doc, errors = _load(text)
    assert (doc, errors) == (None, [f"f.yaml:{where}: error[Y004]: YAML merge keys ('<<') are not supported"])


def test_non_utf8_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_bytes(b"a: \xff\n")
    diags = Diagnostics()
    assert load_file(path, "hosts/x.yaml", diags) is None
    assert [str(d) for d in diags.items] == [
        "hosts/x.yaml:1:4: error[Y007]: not UTF-8 text: invalid start byte at byte 3"
    ]


def test_scalars_follow_yaml_1_2() -> None:
    doc, errors = _load("a: yes\nb: 0x10\nc: 1e3\nd: ~\ne: '0.5.9'\n")
    assert errors == []
    assert doc.data == {"a": "yes", "b": 16, "c": 1000.0, "d": None, "e": "0.5.9"}


@pytest.mark.parametrize(("data", "expected"), [
    ("a: 1\n".encode("utf-16"), "hosts/x.yaml:1:1: error[Y007]: the file is UTF-16 or UTF-32: save it as UTF-8"),
    ("a: 1\n".encode("utf-32"), "hosts/x.yaml:1:1: error[Y007]: the file is UTF-16 or UTF-32: save it as UTF-8"),
    (b"a: 1\nb: \xc3\n", "hosts/x.yaml:2:4: error[Y007]: not UTF-8 text: invalid continuation byte at byte 8"),
])
def test_other_encodings_are_positioned_errors(tmp_path: Path, data: bytes, expected: str) -> None:
    path = tmp_path / "x.yaml"
    path.write_bytes(data)
    diags = Diagnostics()
    assert load_file(path, "hosts/x.yaml", diags) is None
    assert [str(d) for d in diags.items] == [expected]


def test_a_utf8_byte_order_mark_is_allowed(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_bytes(b"\xef\xbb\xbfa: 1\n")
    diags = Diagnostics()
    doc = load_file(path, "hosts/x.yaml", diags)
    assert diags.items == [] and doc is not None and doc.data == {"a": 1}


SCALARS = ("a: 1\nb: '1'\nc: !!str 1\nd: true\ne: 'true'\nf: ~\ng: null\nh: 1.5\ni: .inf\nj: 0x1F\n"
           "k: 2026-01-01\nl: yes\nm: \"\"\nn:\no: [1, '1', x, 1]\np: {1: one, '1': uno}\n")


def test_data_is_ruamels_own_values() -> None:
    """The data is exactly what ruamel's safe loader makes of the text, each time it is loaded."""
    from ruamel.yaml import YAML

    expected = YAML(typ="safe").load(SCALARS)
    for _ in range(3):
        doc, errors = _load(SCALARS)
        assert errors == [] and doc.data == expected
        assert [type(v) for v in doc.data.values()] == [type(v) for v in expected.values()]


def test_remembered_resolution_is_bounded() -> None:
    """A stream of distinct values never grows the memo past its bound."""
    from generator.load import libyaml

    assert libyaml.FAST  # ruamel.yaml.clib is a dependency: its resolver memo is what is tested
    for start in range(0, libyaml.RESOLVED_MAX + 2000, 1000):  # files stay under MAX_NODES
        doc, errors = _load("".join(f"k{i}: v{i}\n" for i in range(start, start + 1000)))
        assert errors == [] and doc.data[f"k{start + 999}"] == f"v{start + 999}"
        assert 0 < len(libyaml.RESOLVED) <= libyaml.RESOLVED_MAX


