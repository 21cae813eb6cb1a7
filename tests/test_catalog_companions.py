"""The files a capture writes beside a flag catalog, ``catalogs/sglang/<pin>.KIND.json``
(architectures, devices), read through sglang/catalog.load_companion: none is taken for a pin
of its own, a broken one is a catalog error that names it, and a re-capture from the real
SGLang is byte-identical to the committed file (marker sglang)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sglang_env import sglang_python

from generator.sglang.architectures import load_architectures, snapshot_architectures_python
from generator.sglang.catalog import CatalogFormatError, known_pins
from generator.sglang.devices import load_devices, snapshot_devices_python

ROOT = Path(__file__).resolve().parent.parent
PINS = ("0.5.9", "0.5.23")

# kind -> (its reader, its local capture, file texts that are not such a file)
COMPANIONS: dict[str, tuple[Callable[[Path], Any], Callable[[str], bytes], tuple[str, ...]]] = {
    # a list was an AttributeError (exit 4) before the architectures file had the shared reader
    "architectures": (load_architectures, snapshot_architectures_python, ('{"format": 1}', "[]")),
    "devices": (load_devices, snapshot_devices_python, ('{"format": 1, "probes": {}}', "[]")),
}


@pytest.mark.parametrize("kind", sorted(COMPANIONS))
def test_companion_file_is_no_pin(kind: str) -> None:
    assert not any(p.endswith(f".{kind}") for p in known_pins(ROOT))


@pytest.mark.parametrize(("kind", "text"), [(k, t) for k, (_, _, texts) in sorted(COMPANIONS.items()) for t in texts])
def test_a_broken_file_is_a_catalog_error(tmp_path: Path, kind: str, text: str) -> None:
    load = COMPANIONS[kind][0]
    (tmp_path / f"0.5.9.{kind}.json").write_text(text)
    with pytest.raises(CatalogFormatError, match=f"0.5.9.{kind}.json: not an? {kind[:-1]}.* file .*re-capture it"):
        load(tmp_path / "0.5.9.json")
    assert load(tmp_path / "0.5.23.json") is None  # none captured: no facts, no error


@pytest.mark.sglang
@pytest.mark.parametrize("kind", sorted(COMPANIONS))
@pytest.mark.parametrize("pin", PINS)
def test_recapture_is_byte_identical(pin: str, kind: str) -> None:
    text = COMPANIONS[kind][1](sglang_python(pin))  # stamped like the committed file
    assert text == (ROOT / "catalogs" / "sglang" / f"{pin}.{kind}.json").read_bytes()
