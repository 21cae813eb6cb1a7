"""``--switch=VALUE``: refused (F006) as SGLang's argparse refuses it, whatever the value.

argparse raises "ignored explicit argument 'V'" (exit 2) for any action that takes no
value (store_true, store_false, store_const, count, BooleanOptional and its ``--no-``
form, SGLang's deprecated switches, help) written with ``=``, under its full name, an
alias or an abbreviation; an underscore spelling matches nothing ("unrecognized
arguments"). gen said nothing, and ``=False`` silently dropped the switch.

The fast tests check a parser with every kind of switch, and that same argparse parser is
the oracle; the ``sglang`` test does it for every switch of both real pins against their
real parsers, with valued flags written with ``=`` as the control that both accept.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from parser_oracle import parse_many
from test_catalog import catalog_from_parser
from test_flags import DeprecatedAction, DeprecatedStoreTrueAction

from generator.errors import Diagnostics, Position
from generator.importer.build import import_command
from generator.sglang.catalog import Action, Catalog, known_pins, load_catalog
from generator.sglang.flags import Arg, check_args

ROOT = Path(__file__).resolve().parent.parent
VALUES = ("True", "False", "true", "false", "1", "0", "", "yes", "x=y")


def switch_parser() -> argparse.ArgumentParser:
    """Every kind of action that takes no value, as SGLang's parsers could hold them."""
    p = argparse.ArgumentParser()
    p.add_argument("--model-path")
    p.add_argument("--enable-metrics", "--metrics-on", action="store_true")
    p.add_argument("--keep-going", action="store_false")
    p.add_argument("--mode-fast", dest="mode", action="store_const", const="fast")
    p.add_argument("--verbose", action="count", default=0)
    p.add_argument("--enable-overlap", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--enable-dp-attention", action=DeprecatedStoreTrueAction, new_flag="--attn-dp-size N")
    p.add_argument("--old-switch", action=DeprecatedAction)
    p.add_argument("--log-level", nargs="?", const="info")  # valued: '=' is its value
    p.add_argument("--cuda-graph-bs", type=int, nargs="+")
    return p


def written_forms(catalog: Catalog, action: Action) -> list[tuple[str, str]]:
    """(the option part as written, the refusal argparse prints) for every way of naming ``action``."""
    forms: list[tuple[str, str]] = []
    for opt in action.option_strings:
        if not opt.startswith("--"):
            continue
        forms.append((opt, "ignored explicit argument"))
        # the shortest prefix argparse resolves to this option alone
        for end in range(3, len(opt)):
            prefix = opt[:end]
            if catalog.by_option(prefix) is None and [t[1] for t in catalog.prefix_tuples(prefix)] == [opt]:
                forms.append((prefix, "ignored explicit argument"))
                break
        if "-" in opt[2:]:
            forms.append(("--" + opt[2:].replace("-", "_"), "unrecognized arguments"))
    return forms


def gen_codes(catalog: Catalog, written: str) -> list[str]:
    diags = Diagnostics()
    out = check_args(catalog, [Arg(written, True, Position("<command>", 1, 1))], diags)
    assert not out, f"{written} rendered {out}"
    return [d.code for d in diags.items if d.is_error]


@pytest.fixture(scope="module")
def switches() -> Catalog:
    return catalog_from_parser(switch_parser(), "0.5.9", {"--old-switch": {"replacement": None}})


def test_every_switch_kind_refuses_a_value_as_argparse_does(switches: Catalog,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    kinds = set()
    for action in switches.actions:
        if action.takes_value or action.kind == "help":
            continue
        kinds.add(action.kind)
        for form, refusal in written_forms(switches, action):
            for value in VALUES:
                written = f"{form}={value}"
                assert gen_codes(switches, written) == ["F006"], written
                with pytest.raises(SystemExit) as info:
                    switch_parser().parse_args(["--model-path", "/m", written])
                assert info.value.code == 2
                assert refusal in capsys.readouterr().err, written
    assert kinds == {"store_true", "store_false", "store_const", "count", "boolean_optional", "deprecated"}


def test_valued_flags_keep_their_value_after_the_equals_sign(switches: Catalog) -> None:
    diags = Diagnostics()
    out = check_args(switches, [Arg("--log-level=debug", True, Position("m", 1, 1)),
                                Arg("--cuda-graph-bs=8", True, Position("m", 2, 1))], diags)
    assert not diags.items
    assert [c.words for c in out] == [("--log-level", "debug"), ("--cuda-graph-bs", "8")]
    ns = switch_parser().parse_args([w for c in out for w in c.words])
    assert (ns.log_level, ns.cuda_graph_bs) == ("debug", [8])


def test_the_message_says_what_sglang_does(switches: Catalog) -> None:
    diags = Diagnostics()
    check_args(switches, [Arg("--no-enable-overlap=False", True, Position("m", 1, 1))], diags)
    [d] = diags.items
    assert d.code == "F006"
    assert d.message == (
        "'--no-enable-overlap=False' gives a value to a switch: SGLang's parser refuses a value after '=' "
        "on '--no-enable-overlap', whatever it is, and exits 2 (argument --no-enable-overlap: ignored "
        "explicit argument 'False'); write '--no-enable-overlap' alone to pass it, or leave it out")


@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
@pytest.mark.parametrize("written", ["--disable-radix-cache=True", "--disable-radix-cache=False",
                                     "--disable-radix=1", "--disable_radix_cache=true", "--enable-metrics="])
def test_gen_import_refuses_a_switch_with_a_value(pin: str, written: str) -> None:
    cat = load_catalog(ROOT, pin)
    others = [load_catalog(ROOT, p) for p in known_pins(ROOT) if p != pin]
    result = import_command(f"python -m sglang.launch_server --model-path /m {written}", "<command>", cat, others)
    assert result.manifest is None
    assert [d.code for d in result.diagnostics if d.is_error] == ["F006"]


@pytest.mark.sglang
@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_every_real_switch_with_a_value_is_refused_by_both(pin: str) -> None:
    """Every action of the pin that takes no value, in every spelling, with every value."""
    catalog = load_catalog(ROOT, pin)
    cases: list[tuple[str, str]] = []
    controls: list[str] = []
    for action in catalog.actions:
        if action.takes_value:
            if action.nargs in (None, "?", "+", "*") and action.choices is None and action.type is None:
                controls.append(f"{action.canonical}=x")
            continue
        for form, refusal in written_forms(catalog, action):
            for value in ("True", "False", "1", ""):
                cases.append((f"{form}={value}", refusal))
    assert len(cases) > 4 * 90
    results = parse_many(pin, [["--model-path", "/m", w] for w, _ in cases] +
                         [["--model-path", "/m", w] for w in controls])
    for (written, refusal), parsed in zip(cases, results):
        assert parsed.exit == 2 and refusal in parsed.said, (written, parsed)
        codes = gen_codes(catalog, written)
        assert "F006" in codes or "F009" in codes, (written, codes)  # --help=x: F009 refuses it too
    for written, parsed in zip(controls, results[len(cases):]):
        dest = catalog.by_option(written.split("=")[0])
        assert dest is not None
        assert parsed.exit is None, (written, parsed.said)
        diags = Diagnostics()
        check_args(catalog, [Arg(written, True, Position("m", 1, 1))], diags)
        assert not any(d.code == "F006" for d in diags.items), written
