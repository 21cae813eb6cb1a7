"""Tests for generator/sglang/catalog.py: loading catalogs and argparse-exact option lookups.

Small catalogs are built from real ``argparse`` parsers serialized to the catalog format
(``catalog_from_parser``), so every lookup can be compared with what argparse itself does.
Tests against the committed SGLang catalogs run when those files exist.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from generator.sglang.catalog import (
    Catalog,
    CatalogFormatError,
    catalog_from_data,
    catalogs_dir,
    known_pins,
    load_catalog,
)
from generator.errors import CatalogMissingError

REPO = Path(__file__).resolve().parent.parent

_KINDS = {
    argparse._StoreAction: "store",
    argparse._StoreTrueAction: "store_true",
    argparse._StoreFalseAction: "store_false",
    argparse._StoreConstAction: "store_const",
    argparse._AppendAction: "append",
    argparse._CountAction: "count",
    argparse.BooleanOptionalAction: "boolean_optional",
    argparse._HelpAction: "help",
}


def _type_name(func: Any) -> str | None:
    if func is None:
        return None
    if func in (int, float, str, bool):
        return func.__name__
    return f"callable:{func.__module__}.{func.__qualname__}"


def _json_default(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except TypeError:
        return {"repr": repr(value)}


def _json_choices(choices: Any) -> list[Any] | None:
    """Choices as the format stores them: JSON values after ``type``; a set sorted."""
    if choices is None:
        return None
    items = sorted(choices, key=str) if isinstance(choices, (set, frozenset)) else list(choices)
    return [c if isinstance(c, (str, int, float, bool)) else str(c) for c in items]


def parser_to_data(parser: argparse.ArgumentParser, version: str = "0.0.1",
                   deprecated: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Serialize ``parser`` to catalog format 1 (the test stand-in for ``gen sglang snapshot``).

    ``deprecated`` maps a canonical option string to its ``deprecated`` entry; classes whose
    name starts with ``Deprecated`` get kind ``deprecated``, as the README describes.
    """
    deprecated = deprecated or {}
    actions = []
    for act in parser._actions:
        longs = [o for o in act.option_strings if o.startswith("--")]
        canonical = (longs or act.option_strings)[0]
        cls = type(act)
        kind = _KINDS.get(cls) or ("deprecated" if cls.__name__.startswith("Deprecated")
                                   else f"other:{cls.__name__}")
        actions.append({
            "option_strings": list(act.option_strings),
            "canonical": canonical,
            "dest": act.dest,
            "kind": kind,
            "type": _type_name(act.type),
            "choices": _json_choices(act.choices),
            "nargs": act.nargs,
            "default": _json_default(act.default),
            "required": act.required,
            "help": act.help or "",
            "deprecated": deprecated.get(canonical),
        })
    actions.sort(key=lambda a: a["canonical"])
    return {
        "format": 1,
        "sglang": {"version": version, "commit": None, "source": "test"},
        "captured": {"tool": "tests", "probe": 1, "python": "3.11", "date": "2026-11-30"},
        "parser": {"allow_abbrev": parser.allow_abbrev, "prefix_chars": parser.prefix_chars},
        "actions": actions,
    }


def catalog_from_parser(parser: argparse.ArgumentParser, pin: str = "0.0.1",
                        deprecated: dict[str, dict[str, Any]] | None = None,
                        root: Path | None = None) -> Catalog:
    """A Catalog built from ``parser``; written under ``root`` when given, else in memory."""
    data = parser_to_data(parser, pin, deprecated)
    if root is None:
        return catalog_from_data(data, pin=pin, source_file=Path(f"/nonexistent/{pin}.json"))
    path = catalogs_dir(root) / f"{pin}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return load_catalog(root, pin)


def small_parser() -> argparse.ArgumentParser:
    """A parser shaped like SGLang's: aliases, shared prefixes, BooleanOptional, choices."""
    p = argparse.ArgumentParser()
    p.add_argument("--tensor-parallel-size", "--tp-size", type=int, default=1)
    p.add_argument("--speculative-algorithm", choices=["EAGLE", "EAGLE3", "NEXTN"])
    p.add_argument("--speculative-draft-model-path", "--speculative-draft-model")
    p.add_argument("--speculative-draft-model-revision")
    p.add_argument("--mem-fraction-static", type=float)
    p.add_argument("--enable-metrics", action="store_true")
    p.add_argument("--enable-x", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--json-model-override-args", type=json.loads, default="{}")
    return p


# ----- loading -----


def test_load_catalog_roundtrip_and_lookups(tmp_path: Path) -> None:
    cat = catalog_from_parser(small_parser(), "0.5.9", root=tmp_path)
    assert cat.pin == "0.5.9" and cat.version == "0.5.9" and cat.commit is None
    assert cat.source_file == (tmp_path / "catalogs/sglang/0.5.9.json").resolve()
    tp = cat.by_option("--tp-size")
    assert tp is not None and tp.canonical == "--tensor-parallel-size" and tp.type == "int"
    assert cat.by_option("--tensor-parallel-size") is tp
    assert cat.by_dest("tensor_parallel_size") is tp
    assert cat.by_option("--tp") is None
    neg = cat.by_option("--no-enable-x")
    assert neg is not None and neg.kind == "boolean_optional" and neg.negative == "--no-enable-x"
    algo = cat.by_dest("speculative_algorithm")
    assert algo is not None and algo.choices == ("EAGLE", "EAGLE3", "NEXTN")
    assert cat.by_option("--help") is not None and cat.by_option("--help").kind == "help"
    assert known_pins(tmp_path) == ["0.5.9"]
    # cached: the same object comes back while the file is unchanged
    assert load_catalog(tmp_path, "0.5.9") is cat


def test_known_pins_order(tmp_path: Path) -> None:
    for pin in ("0.5.23", "0.5.9", "git-" + "a" * 40, "0.5.15"):
        catalog_from_parser(small_parser(), pin, root=tmp_path)
    (catalogs_dir(tmp_path) / "notes.json").write_text("{}")  # not a pin: ignored
    assert known_pins(tmp_path) == ["0.5.9", "0.5.15", "0.5.23", "git-" + "a" * 40]


def test_known_pins_lists_what_glob_lists(tmp_path: Path) -> None:
    """One scandir gives what ``glob("*.json")`` gave: any entry type, companions left out."""
    import re

    folder = catalogs_dir(tmp_path)
    folder.mkdir(parents=True)
    for name in ("0.5.9.json", "0.5.9.env.json", "0.5.9.checks.json", ".json", ".0.5.1.json",
                 "0.6.JSON", "0.5.10.json.bak", "git-" + "b" * 40 + ".json", "x y.json"):
        (folder / name).write_text("{}")
    (folder / "0.7.json").mkdir()  # a folder named like a catalog: glob listed it too
    (folder / "0.8.json").symlink_to(folder / "0.5.9.json")
    pin_re = re.compile(r"^(?:\d+(?:\.\d+)*(?:[.+-][0-9A-Za-z.+-]+)?|git-[0-9a-f]{40})$")
    by_glob = {p.stem for p in folder.glob("*.json")
               if pin_re.match(p.stem) and not p.stem.endswith((".env", ".checks"))}
    assert set(known_pins(tmp_path)) == by_glob == {"0.5.9", "0.7", "0.8", "git-" + "b" * 40}


def test_missing_catalog_says_how_to_capture(tmp_path: Path) -> None:
    catalog_from_parser(small_parser(), "0.5.9", root=tmp_path)
    with pytest.raises(CatalogMissingError) as info:
        load_catalog(tmp_path, "0.5.23")
    msg = str(info.value)
    assert msg == (
        "no SGLang flag catalog for pin '0.5.23' (expected catalogs/sglang/0.5.23.json; "
        "committed pins: 0.5.9). Capture it from the SGLang that host runs: "
        "`gen sglang snapshot --python PATH --out catalogs/sglang/0.5.23.json` "
        "or `gen sglang snapshot --host NAME`"
    )
    assert isinstance(info.value, LookupError)


def test_bad_pin_is_not_a_path(tmp_path: Path) -> None:
    with pytest.raises(CatalogMissingError, match="is not an SGLang pin"):
        load_catalog(tmp_path, "../../etc/passwd")


def test_wrong_format_is_rejected(tmp_path: Path) -> None:
    folder = catalogs_dir(tmp_path)
    folder.mkdir(parents=True)
    (folder / "0.5.9.json").write_text(json.dumps({"format": 2, "actions": []}))
    with pytest.raises(CatalogFormatError, match="format 2 is not 1"):
        load_catalog(tmp_path, "0.5.9")
    (folder / "0.5.10.json").write_text("{not json")
    with pytest.raises(CatalogFormatError, match="cannot read SGLang catalog"):
        load_catalog(tmp_path, "0.5.10")


# ----- prefix matching, checked against argparse itself -----


def _argparse_interpretations(parser: argparse.ArgumentParser, opt: str) -> list[str] | None:
    """What argparse makes of ``opt``: matched option strings, or None when exact/positional."""
    if opt in parser._option_string_actions:
        return None
    if "=" in opt and opt.split("=", 1)[0] in parser._option_string_actions:
        return None
    if len(opt) < 2 or opt[0] not in parser.prefix_chars:
        return None
    return [t[1] for t in parser._get_option_tuples(opt)]


PREFIX_CASES = [
    ("--tp", ["--tp-size"]),
    ("--tp=4", ["--tp-size"]),
    ("--spec", ["--speculative-algorithm", "--speculative-draft-model-path",
                "--speculative-draft-model", "--speculative-draft-model-revision"]),
    ("--speculative-algo", ["--speculative-algorithm"]),
    # the alias "--speculative-draft-model" is exact, so it is not a prefix of anything
    ("--speculative-draft-model", []),
    ("--speculative-draft-model-", ["--speculative-draft-model-path",
                                    "--speculative-draft-model-revision"]),
    ("--no-enable", ["--no-enable-x"]),
    ("--enable", ["--enable-metrics", "--enable-x"]),
    ("--nothing", []),
    ("-h", []),
    ("-hx", ["-h"]),
]


@pytest.mark.parametrize(("opt", "expected"), PREFIX_CASES)
def test_prefix_tuples_table(opt: str, expected: list[str]) -> None:
    parser = small_parser()
    cat = catalog_from_parser(parser)
    got = [o for _, o, _ in cat.prefix_tuples(opt)]
    assert sorted(got) == sorted(expected)
    assert len(cat.prefix_matches(opt)) == len(expected)
    argparse_view = _argparse_interpretations(parser, opt)
    assert sorted(argparse_view or []) == sorted(expected)


_WORD = st.text(alphabet="abcd-", min_size=1, max_size=5)


@settings(max_examples=examples(300))
@given(options=st.lists(_WORD, min_size=1, max_size=8, unique=True), probe=_WORD,
       explicit=st.sampled_from(["", "=1"]))
def test_prefix_tuples_match_argparse(options: list[str], probe: str, explicit: str) -> None:
    """For any option set, our prefix lookup equals argparse's _get_option_tuples."""
    parser = argparse.ArgumentParser(add_help=False)
    for opt in options:
        parser.add_argument("--" + opt, dest="d_" + opt.replace("-", "_") + str(len(opt)))
    cat = catalog_from_parser(parser)
    written = "--" + probe + explicit
    ours = [(o, e) for _, o, e in cat.prefix_tuples(written)]
    theirs = _argparse_interpretations(parser, written)
    if theirs is None:
        assert ours == []
    else:
        assert sorted(ours) == sorted((t[1], t[2]) for t in parser._get_option_tuples(written))


# ----- the committed catalogs, captured from the real SGLang 0.5.9 and 0.5.23 -----


def real_catalog(pin: str) -> Catalog:
    """A committed catalog; these tests fail (not skip) when one is missing."""
    return load_catalog(REPO, pin)


def test_committed_pins() -> None:
    assert {"0.5.9", "0.5.23"} <= set(known_pins(REPO))
    assert known_pins(REPO).index("0.5.9") < known_pins(REPO).index("0.5.23")


@pytest.mark.parametrize(("pin", "count", "canonical_tp"), [
    ("0.5.9", 332, "--tensor-parallel-size"),
    ("0.5.23", 532, "--tp-size"),
])
def test_real_catalog_facts(pin: str, count: int, canonical_tp: str) -> None:
    cat = real_catalog(pin)
    assert cat.version == pin and cat.allow_abbrev and len(cat.actions) == count
    tp = cat.by_option("--tp-size")
    assert tp is not None and tp.canonical == canonical_tp and tp.type == "int"
    assert cat.by_option("--tensor-parallel-size") is tp  # valid in both: never a foreign spelling
    # argparse's view of the prefixes the field notes name
    assert [o for _, o, _ in cat.prefix_tuples("--tp")] == ["--tp-size"]
    assert [o for _, o, _ in cat.prefix_tuples("--speculative-algo")] == ["--speculative-algorithm"]
    assert [o for _, o, _ in cat.prefix_tuples("--mem-frac")] == ["--mem-fraction-static"]
    assert len(cat.prefix_matches("--speculative-draft")) > 1
    assert cat.prefix_matches("--num-speculative-tokens") == []


def test_real_catalog_differences() -> None:
    old, new = real_catalog("0.5.9"), real_catalog("0.5.23")
    algo_old, algo_new = old.by_dest("speculative_algorithm"), new.by_dest("speculative_algorithm")
    assert algo_old is not None and algo_old.choices == ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM")
    assert algo_new is not None and algo_new.choices is None  # free text from 0.5.15 on
    assert old.by_option("--cuda-graph-max-bs") is not None and old.prefix_matches("--cuda-graph-max-bs") == []
    assert new.by_option("--cuda-graph-max-bs") is None and len(new.prefix_matches("--cuda-graph-max-bs")) == 2
    assert old.by_dest("tp_size") is None and old.by_dest("tensor_parallel_size") is not None
    assert new.by_dest("tp_size") is not None
    dp_attention = new.by_option("--enable-dp-attention")
    assert dp_attention is not None and dp_attention.kind == "deprecated"
    assert dp_attention.deprecated is not None and dp_attention.deprecated.replacement == "--attn-dp-size"
    tf32 = new.by_option("--no-enable-tf32-matmul")
    assert tf32 is not None and tf32.kind == "boolean_optional" and tf32.negative == "--no-enable-tf32-matmul"


def _parser_from_catalog(cat: Catalog) -> argparse.ArgumentParser:
    """An argparse parser with the catalog's option strings, in catalog order."""
    parser = argparse.ArgumentParser(add_help=False)
    for action in cat.actions:
        parser.add_argument(*action.option_strings, dest=action.dest, action="store_true")
    return parser


@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_real_prefixes_match_argparse(pin: str) -> None:
    """Every prefix of every real option string: our lookup equals argparse's _get_option_tuples."""
    cat = real_catalog(pin)
    parser = _parser_from_catalog(cat)
    probes = {opt[:n] for opt in cat.option_strings if opt.startswith("--")
              for n in range(3, len(opt) + 1)}
    assert len(probes) > 5000
    for probe in sorted(probes):
        theirs = _argparse_interpretations(parser, probe)
        ours = [o for _, o, _ in cat.prefix_tuples(probe)]
        assert ours == ([] if theirs is None else theirs), probe
