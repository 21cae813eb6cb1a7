"""The registry of diagnostic codes is complete, used, and what the README shows.

Every code literal in gen's source must be registered (so a typo cannot ship), every
registered code must be reported somewhere (so the registry holds no dead entries), the
rule codes of ``catalogs/rules.yaml`` must fit the ``X`` family, and the README's table
must be exactly the one the registry generates.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator import codes
from generator.errors import Diagnostic, Diagnostics, Position, Severity

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "generator"
LITERAL = re.compile(r"""["']([A-Z]\d{3})["']""")
SHOWN = re.compile(r"\b(error|warning)\[([A-Z]\d{3})\]")


def _literals() -> dict[str, list[str]]:
    """Code literal -> the source files (outside the registry) that write it."""
    found: dict[str, list[str]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        if path.name == "codes.py" and path.parent == SOURCE:
            continue
        for code in LITERAL.findall(path.read_text(encoding="utf-8")):
            found.setdefault(code, []).append(str(path.relative_to(ROOT)))
    return found


def test_every_code_literal_in_the_source_is_registered() -> None:
    found = _literals()
    assert len(found) > 50, "the scan found almost no code literals: the pattern is broken"
    unknown = {code: where for code, where in found.items() if code not in codes.REGISTRY}
    assert not unknown, f"code literals not in generator/codes.py: {unknown}"


def test_every_registered_code_is_reported_somewhere() -> None:
    unused = sorted(set(codes.REGISTRY) - set(_literals()))
    assert not unused, f"registered codes no source file reports: {unused}"


def test_rule_codes_fit_the_x_family_and_their_severity() -> None:
    data = YAML(typ="safe").load((ROOT / "catalogs" / "rules.yaml").read_text(encoding="utf-8"))
    rules = data["rules"]
    assert rules
    for rule in rules:
        assert codes.rule_code_severity(rule["code"]) is Severity(rule["severity"]), rule["id"]
        assert rule["code"] not in codes.REGISTRY, f"{rule['code']} is defined twice"
    assert len({r["code"] for r in rules}) == len(rules), "a rule code is used twice"


def test_codes_shown_in_fixtures_and_readme_are_registered_as_shown() -> None:
    texts = [p.read_text(encoding="utf-8", errors="replace")
             for p in sorted((ROOT / "tests" / "fixtures").rglob("*")) if p.is_file()]
    texts.append((ROOT / "README.md").read_text(encoding="utf-8"))
    shown = {(sev, code) for text in texts for sev, code in SHOWN.findall(text)}
    assert len(shown) > 20
    for severity, code in sorted(shown):
        found = codes.lookup(code)
        assert found is not None, code
        assert found.severity is Severity(severity), code


def test_readme_table_is_the_generated_one() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- codes: begin[^\n]*-->\n(.*?)<!-- codes: end -->", text, re.S)
    assert match, "README.md lost its generated codes table markers"
    assert match.group(1) == codes.readme_table(), (
        "README.md's codes table is stale: paste the output of `python -m generator.codes`")


@pytest.mark.parametrize("code", ["F999", "f001", "X300", "XX01", "", "S1"])
def test_an_unregistered_code_is_refused(code: str) -> None:
    diags = Diagnostics()
    with pytest.raises(ValueError, match="not registered"):
        diags.error(Position("a.yaml", 1, 1), code, "text")
    with pytest.raises(ValueError, match="not registered"):
        Diagnostic(Position("a.yaml"), code, "text")
    assert diags.items == []


def test_a_code_recorded_with_another_severity_is_refused() -> None:
    diags = Diagnostics()
    with pytest.raises(ValueError, match="registered as warning"):
        diags.error(Position("a.yaml"), "F101", "an abbreviation")
    with pytest.raises(ValueError, match="registered as error"):
        diags.warning(Position("a.yaml"), "X001", "a rule error")
    diags.warning(Position("a.yaml"), "X101", "a rule warning")
    diags.error(Position("a.yaml"), "P030", "does not fit")
    assert [d.code for d in diags.items] == ["X101", "P030"]


def test_each_code_has_a_family_and_a_one_line_meaning() -> None:
    for code in codes.REGISTRY.values():
        assert code.family.letter == code.code[0]
        assert code.meaning and "\n" not in code.meaning and "|" not in code.meaning


def test_each_call_site_records_its_code_with_the_registered_severity() -> None:
    # diags.error(pos, "F101", ...) would raise only when that path runs; read them all here.
    call = re.compile(r"\.(error|warning)\(\s*(?:[^\"'()]|\([^()]*\))*?,\s*[\"']([A-Z]\d{3})[\"']", re.S)
    calls = [(path, kind, code) for path in sorted(SOURCE.rglob("*.py"))
             for kind, code in call.findall(path.read_text(encoding="utf-8"))]
    assert len(calls) > 80, "the scan found almost no call sites: the pattern is broken"
    wrong = [f"{p.relative_to(ROOT)}: {kind}({code})" for p, kind, code in calls
             if codes.REGISTRY[code].severity.value != kind]
    assert not wrong, f"recorded with another severity than registered: {wrong}"


@pytest.mark.parametrize(("code", "severity"), [("X001", "error"), ("X250", "error"), ("X107", "warning"),
                                                 ("X300", None), ("X01", None)])
def test_rule_code_families(code: str, severity: str | None) -> None:
    from generator.codes import rule_code_severity

    found = rule_code_severity(code)
    assert (found.value if found else None) == severity
