"""The probe's reading of argparse actions, on parsers built here (no SGLang needed),
and the committed catalogs' canonical form."""

from __future__ import annotations

import argparse
import functools
import json
from pathlib import Path
from typing import Any

import pytest

from generator.sglang import probe as probe

ROOT = Path(__file__).resolve().parent.parent
CATALOG_KEYS = {
    "const",
    "option_strings",
    "canonical",
    "dest",
    "kind",
    "type",
    "choices",
    "nargs",
    "default",
    "required",
    "help",
    "deprecated",
}


def entries(parser: argparse.ArgumentParser) -> dict[str, dict[str, Any]]:
    """The probe's entries for ``parser``, by canonical option string."""
    return {a["canonical"]: a for a in probe.read_parser(parser)["actions"]}


# Argparse action classes spelled like SGLang's (sglang/srt/arg_groups/argparse_actions.py,
# 0.5.15+); the probe recognises SGLang's deprecated actions by these class names.
class DeprecatedAction(argparse.Action):
    """Same shape as SGLang's: nargs=0, optional error_message that makes it fatal."""

    def __init__(
        self,
        option_strings: list[str],
        dest: str,
        error_message: str | None = None,
        nargs: int = 0,
        **kwargs: Any,
    ) -> None:
        self.error_message = error_message
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(
        self, parser: Any, namespace: Any, values: Any, option_string: Any = None
    ) -> None:
        if self.error_message is not None:
            parser.error(self.error_message)


class DeprecatedStoreTrueAction(argparse.Action):
    """Same shape as SGLang's: stores True, names its successor in ``new_flag``."""

    def __init__(
        self,
        option_strings: list[str],
        dest: str,
        new_flag: str | None = None,
        nargs: int = 0,
        const: bool = True,
        default: bool = False,
        **kwargs: Any,
    ) -> None:
        self.new_flag = new_flag
        super().__init__(
            option_strings, dest, nargs=nargs, const=const, default=default, **kwargs
        )

    def __call__(
        self, parser: Any, namespace: Any, values: Any, option_string: Any = None
    ) -> None:
        setattr(namespace, self.dest, True)


class PathListAction(argparse.Action):
    """Any non-argparse action class (SGLang has LoRAPathAction)."""

    def __call__(
        self, parser: Any, namespace: Any, values: Any, option_string: Any = None
    ) -> None:
        setattr(namespace, self.dest, values)


def test_every_argparse_action_class_gets_its_kind() -> None:
    parser = argparse.ArgumentParser(prog="t")
    parser.add_argument("--store", type=int)
    parser.add_argument("--on", action="store_true")
    parser.add_argument("--off", action="store_false")
    parser.add_argument("--const", action="store_const", const=7)
    parser.add_argument("--many", action="append")
    parser.add_argument("--tag", action="append_const", const="x")
    parser.add_argument("-v", "--verbose", action="count")
    parser.add_argument("--version", action="version", version="1")
    parser.add_argument("--fused", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--paths", action=PathListAction, nargs="*")
    got = {name: e["kind"] for name, e in entries(parser).items()}
    assert got == {
        "--help": "help",
        "--store": "store",
        "--on": "store_true",
        "--off": "store_false",
        "--const": "store_const",
        "--many": "append",
        "--tag": "append_const",
        "--verbose": "count",
        "--version": "version",
        "--fused": "boolean_optional",
        "--paths": "other:PathListAction",
    }


def test_entry_has_exactly_the_catalog_keys_and_values() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--tensor-parallel-size",
        "--tp-size",
        type=int,
        default=1,
        help="The tensor parallelism size.",
    )
    entry = entries(parser)["--tensor-parallel-size"]
    assert entry == {
        "option_strings": ["--tensor-parallel-size", "--tp-size"],
        "canonical": "--tensor-parallel-size",
        "dest": "tensor_parallel_size",
        "kind": "store",
        "type": "int",
        "choices": None,
        "nargs": None,
        "default": 1,
        "required": False,
        "help": "The tensor parallelism size.",
        "deprecated": None,
        "const": None,
    }


def test_entry_records_what_an_action_stores_without_a_value() -> None:
    """const (probe 2): a bare nargs="?" flag, store_true/const, and SGLang's const_value actions."""

    class StoreConstValue(argparse.Action):  # SGLang's DeprecatedStoreConstAction keeps it as const_value
        def __init__(self, option_strings: list[str], dest: str, const_value: object = None, **kw: object) -> None:
            self.const_value = const_value
            super().__init__(option_strings, dest, nargs=0, **kw)  # type: ignore[arg-type]

        def __call__(self, *args: object, **kw: object) -> None:
            raise NotImplementedError

    parser = argparse.ArgumentParser()
    parser.add_argument("--checksum", nargs="?", const="")
    parser.add_argument("--on", action="store_true")
    parser.add_argument("--mode", action=StoreConstValue, const_value="amd")
    found = entries(parser)
    assert (found["--checksum"]["const"], found["--on"]["const"], found["--mode"]["const"]) == ("", True, "amd")


def test_boolean_optional_lists_its_negative_form_and_takes_no_value() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--enable-tf32-matmul", action=argparse.BooleanOptionalAction)
    entry = entries(parser)["--enable-tf32-matmul"]
    assert entry["option_strings"] == [
        "--enable-tf32-matmul",
        "--no-enable-tf32-matmul",
    ]
    assert entry["nargs"] == 0


@pytest.mark.parametrize(
    ("options", "canonical"),
    [
        (("-t", "--tp"), "--tp"),  # argparse names the dest after the first long option
        (("--tp-size", "--tensor-parallel-size"), "--tp-size"),
        (("-x",), "-x"),
        (("--ep", "-e", "--expert-parallel-size"), "--ep"),
    ],
)
def test_canonical_is_the_first_long_option(
    options: tuple[str, ...], canonical: str
) -> None:
    parser = argparse.ArgumentParser(add_help=False)
    action = parser.add_argument(*options)
    assert probe.canonical_option(action) == canonical


def test_positional_canonical_is_its_dest() -> None:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("model")
    assert list(entries(parser)) == ["model"]


def standin_type(text: str) -> list[str]:
    """A module-level type function, like SGLang's json_list_type."""
    return text.split(",")


@pytest.mark.parametrize(
    ("func", "name"),
    [
        (None, None),
        (int, "int"),
        (float, "float"),
        (str, "str"),
        (bool, "bool"),
        (json.loads, "callable:json.loads"),
        (standin_type, f"callable:{__name__}.standin_type"),
        (functools.partial(int, base=16), "callable:functools.partial(builtins.int)"),
    ],
)
def test_type_names(func: Any, name: str | None) -> None:
    assert probe.type_name(func) == name


def test_lambda_type_name_has_no_address() -> None:
    name = probe.type_name(lambda s: s)
    assert name is not None and name.startswith("callable:") and "0x" not in name
    assert name.endswith("<lambda>")


def test_choices_keep_order_and_type_and_sort_sets() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--algo", choices=["EAGLE", "EAGLE3", "NEXTN"])
    parser.add_argument("--level", type=int, choices=[0, 1, 2, 3])
    parser.add_argument("--backend", choices={"pytorch", "flashinfer", "ascend"})
    parser.add_argument("--sizes", type=int, choices=range(1, 4))
    parser.add_argument("--mode", choices=("b", "a"))
    got = entries(parser)
    assert got["--algo"]["choices"] == ["EAGLE", "EAGLE3", "NEXTN"]
    assert got["--level"]["choices"] == [0, 1, 2, 3]
    assert got["--backend"]["choices"] == ["ascend", "flashinfer", "pytorch"]
    assert got["--sizes"]["choices"] == [1, 2, 3]
    assert got["--mode"]["choices"] == ["b", "a"]


class Opaque:
    """A default JSON cannot hold; its repr carries an address."""


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        (True, True),
        (3, 3),
        (0.85, 0.85),
        ("auto", "auto"),
        ((1, 2), [1, 2]),
        ({"b": 1, "a": [2]}, {"a": [2], "b": 1}),
        (float("inf"), {"repr": "inf"}),
        ({1: "x"}, {"repr": "{1: 'x'}"}),
    ],
)
def test_json_value(value: Any, expected: Any) -> None:
    assert probe.json_value(value) == expected


def test_opaque_default_is_a_stable_repr() -> None:
    got = probe.json_value(Opaque())
    assert set(got) == {"repr"}
    assert got["repr"] == f"<{__name__}.Opaque object>"


def test_deprecated_classes_by_name_with_replacement_and_fatality() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--attn-dp-size", type=int, default=1)
    parser.add_argument("--swa-full-tokens-ratio", type=float)
    parser.add_argument(
        "--enable-dp-attention",
        action=DeprecatedStoreTrueAction,
        new_flag="--attn-dp-size <dp-size>",
        help="Deprecated. Use --attn-dp-size <dp-size> instead of --dp-size <dp-size> --enable-dp-attention.",
    )
    parser.add_argument(
        "--disable-cuda-graph",
        action=DeprecatedStoreTrueAction,
        new_flag="--cuda-graph-backend-{decode,prefill}=disabled",
        help="Deprecated. Use --cuda-graph-backend-{decode,prefill}=disabled instead.",
    )
    parser.add_argument(
        "--hybrid-kvcache-ratio",
        action=DeprecatedAction,
        help="Note: --hybrid-kvcache-ratio is deprecated now. Please use --swa-full-tokens-ratio instead.",
    )
    parser.add_argument(
        "--old-ratio",
        action=DeprecatedAction,
        error_message="--old-ratio was removed; use --swa-full-tokens-ratio.",
    )
    got = entries(parser)
    assert got["--enable-dp-attention"]["kind"] == "deprecated"
    assert got["--enable-dp-attention"]["deprecated"] == {
        "replacement": "--attn-dp-size",
        "message": "Deprecated. Use --attn-dp-size <dp-size> instead of --dp-size <dp-size> "
        "--enable-dp-attention.",
        "fatal": False,
    }
    # The named successor is no single flag of this parser, so there is no replacement.
    assert got["--disable-cuda-graph"]["deprecated"]["replacement"] is None
    # The flag's own name in its help is skipped; the next flag named is the replacement.
    assert (
        got["--hybrid-kvcache-ratio"]["deprecated"]["replacement"]
        == "--swa-full-tokens-ratio"
    )
    assert got["--old-ratio"]["deprecated"] == {
        "replacement": "--swa-full-tokens-ratio",
        "message": "--old-ratio was removed; use --swa-full-tokens-ratio.",
        "fatal": True,
    }
    assert got["--attn-dp-size"]["deprecated"] is None


def test_replacement_alias_maps_to_its_canonical_name() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--smg-grpc-mode", "--grpc-server", action="store_true")
    parser.add_argument(
        "--old", action="store_true", help="(Deprecated, use --grpc-server) Old switch."
    )
    assert entries(parser)["--old"]["deprecated"]["replacement"] == "--smg-grpc-mode"


@pytest.mark.parametrize(
    ("help_text", "deprecated", "replacement"),
    [
        (
            "(Deprecated, use --smg-grpc-mode) Legacy SMG gRPC server selector.",
            True,
            "--smg-grpc-mode",
        ),
        (
            "(Deprecated: use --new-backend=auto) Enable the fusion.",
            True,
            "--new-backend",
        ),
        ("Deprecated. Use --new-backend=pil instead.", True, "--new-backend"),
        ("Note: --grpc-mode is deprecated now.", True, None),
        ("Use the legacy server. Replaces the deprecated --grpc-mode.", False, None),
        (
            "NOTE: This replaces the deprecated environment variable SGLANG_X.",
            False,
            None,
        ),
        ("Enable the thing.", False, None),
        (None, False, None),
    ],
)
def test_help_text_deprecation(
    help_text: str | None, deprecated: bool, replacement: str | None
) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--smg-grpc-mode", action="store_true")
    parser.add_argument("--new-backend")
    parser.add_argument("--grpc-mode", action="store_true", help=help_text)
    entry = entries(parser)["--grpc-mode"]
    assert entry["kind"] == "store_true"  # help text never changes the kind
    if deprecated:
        assert entry["deprecated"] == {
            "replacement": replacement,
            "message": help_text,
            "fatal": False,
        }
    else:
        assert entry["deprecated"] is None


def test_catalog_is_sorted_and_its_text_canonical() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--zeta", type=float, default=0.5)
    parser.add_argument("--alpha", choices={"b", "a"})
    parser.add_argument("--mid", "-m", action="store_true")
    info = {"version": "9.9.9", "commit": None, "source": "pypi"}
    catalog = probe.build_catalog(parser, info, "2026-01-02")
    assert [a["canonical"] for a in catalog["actions"]] == [
        "--alpha",
        "--help",
        "--mid",
        "--zeta",
    ]
    assert all(set(a) == CATALOG_KEYS for a in catalog["actions"])
    assert catalog["format"] == 1 and catalog["sglang"] == info
    assert catalog["captured"]["date"] == "2026-01-02"
    assert catalog["parser"] == {"allow_abbrev": True, "prefix_chars": "-"}
    text = probe.dumps(catalog)
    assert text.endswith("}\n") and text.startswith(
        '{\n "actions": [\n  {\n   "canonical": "--alpha"'
    )
    rebuilt = probe.dumps(probe.build_catalog(parser, info, "2026-01-02"))
    assert rebuilt == text
    assert json.loads(text) == catalog


def test_dumps_is_ascii_only() -> None:
    text = probe.dumps({"help": "ratio \u2264 1"})
    assert text == '{\n "help": "ratio \\u2264 1"\n}\n'


def test_parser_without_abbreviations_is_recorded() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False)
    assert probe.read_parser(parser)["parser"]["allow_abbrev"] is False


def test_main_rejects_a_short_commit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        probe.main(["--commit", "abc123"])
    assert exc.value.code == 2
    assert "40 lowercase hex digits" in capsys.readouterr().err


@pytest.mark.parametrize("version", ["0.5.9", "0.5.23"])
def test_committed_catalog_is_in_canonical_form(version: str) -> None:
    path = ROOT / "catalogs" / "sglang" / f"{version}.json"
    text = path.read_text(encoding="utf-8")
    catalog = json.loads(text)
    assert probe.dumps(catalog) == text
    canonicals = [a["canonical"] for a in catalog["actions"]]
    assert canonicals == sorted(canonicals) and len(set(canonicals)) == len(canonicals)
    assert catalog["sglang"] == {"version": version, "commit": None, "source": "pypi"}
    for action in catalog["actions"]:
        assert set(action) == CATALOG_KEYS
        assert action["canonical"] in action["option_strings"]
        replacement = (action["deprecated"] or {}).get("replacement")
        if replacement is not None:
            assert any(replacement == a["canonical"] for a in catalog["actions"])


def test_argparse_deprecated_attribute_counts() -> None:
    parser = argparse.ArgumentParser()
    action = parser.add_argument(
        "--old-switch", action="store_true", help="Old switch."
    )
    # add_argument(deprecated=True) (Python 3.13+) sets this attribute; 3.11 has no keyword.
    action.deprecated = True  # type: ignore[attr-defined]
    assert entries(parser)["--old-switch"]["deprecated"] == {
        "replacement": None,
        "message": "Old switch.",
        "fatal": False,
    }
