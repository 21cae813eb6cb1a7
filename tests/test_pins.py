"""What a pin is (generator/load/pins.py): one test for inventories, catalog file names and probe output.

A pin names catalogs/sglang/<pin>.json and its companions <pin>.<kind>.json, so no pin may
hold a path separator, be a companion's stem, or have two spellings.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.main import main
from generator.load.pins import is_pin
from generator.sglang.catalog import known_pins

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23", "0.4.0.post2", "0.5.9rc1", "0.5.0.dev3", "0.5.9+cu124",
                                 "0.0.1+standin", "git-" + "0123456789abcdef" * 2 + "01234567"])
def test_releases_and_commits_are_pins(pin: str) -> None:
    assert is_pin(pin)


@pytest.mark.parametrize("text", [
    "../..", "/etc/passwd", "0.5.9/../x", "0.5.9\\x",            # separators
    "0.5.9.env", "0.5.9.checks", "0.5.9.devices", "0.5.9+cu.torch",  # another pin's companion file
    "git-" + "A" * 40, "0.5.9RC1",                                # a second spelling of one file
    "0.5.9.", "0.5.9+", "5", "", "0.5.9\n", "0.5.9 ", "0." + "9" * 80, None, 5,
])
def test_anything_else_is_not(text: object) -> None:
    assert not is_pin(text)


def test_a_companion_file_is_never_listed_as_a_pin() -> None:
    assert known_pins(ROOT) == ["0.5.9", "0.5.23"]  # not 0.5.9.env, 0.5.9.checks, history


def test_an_inventory_pinned_to_a_companion_file_is_a_finding_at_its_line(tmp_path: Path) -> None:
    """Before: `pin: "0.5.9.env"` read the env catalog as a flag catalog (no position, no code)."""
    for folder in ("catalogs", "hosts", "models", "templates"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    host = tmp_path / "hosts" / "llm-two.yaml"
    host.write_text(host.read_text().replace('pin: "0.5.9"', 'pin: "0.5.9.env"'))
    result = CliRunner().invoke(main, ["check", "--root", str(tmp_path)], env={"GEN_RENDER_CACHE": "off"})
    assert result.exit_code == 1
    assert "hosts/llm-two.yaml:28:8: error[S009]" in result.stderr, result.stderr
