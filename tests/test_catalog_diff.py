"""generator/sglang/catalog_diff.py against the committed catalogs of the real SGLang 0.5.9 and 0.5.23."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.sglang.catalog import Catalog, load_catalog
from generator.sglang.catalog_diff import Renamed, diff_catalogs, format_diff

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def c9() -> Catalog:
    return load_catalog(ROOT, "0.5.9")


@pytest.fixture(scope="module")
def c23() -> Catalog:
    return load_catalog(ROOT, "0.5.23")


def test_same_pin_has_no_differences(c9: Catalog) -> None:
    diff = diff_catalogs(c9, c9)
    assert diff.empty
    assert format_diff(diff).endswith("No differences (help texts aside).\n")


def test_upgrade_names_removed_renamed_and_deprecated(c9: Catalog, c23: Catalog) -> None:
    diff = diff_catalogs(c9, c23)
    # sglang.md: removed between 0.5.9 and 0.5.23 without a successor.
    for flag in ("--speculative-ngram-branch-length", "--speculative-ngram-min-match-window-size",
                 "--speculative-ngram-max-match-window-size"):
        assert c9.by_option(flag) is not None and c23.by_option(flag) is None
        assert flag in diff.removed
    renamed = {r.old: r for r in diff.renamed}
    assert renamed["--mamba-scheduler-strategy"] == Renamed(
        "--mamba-scheduler-strategy", ("--mamba-radix-cache-strategy",), "renames.yaml")
    assert renamed["--cuda-graph-max-bs"].new == ("--cuda-graph-max-bs-decode",
                                                  "--cuda-graph-max-bs-prefill")
    assert renamed["--nsa-decode-backend"].new == ("--dsa-decode-backend",)
    # A deprecated alias in 0.5.23 pointing at a flag that is new there.
    assert renamed["--enable-dp-attention"] == Renamed(
        "--enable-dp-attention", ("--attn-dp-size",), "deprecated alias in the new pin")
    assert "--attn-dp-size" not in diff.added  # counted once, as the rename's target
    assert [d.flag for d in diff.deprecated] == ["--disable-cuda-graph"]
    # Every 0.5.23 flag is exactly one of: known to 0.5.9 by some spelling, a rename's
    # target, or added.
    targets = {n for r in diff.renamed for n in r.new}
    for action in c23.actions:
        if action.kind == "help":
            continue
        known = any(c9.by_option(o) for o in action.option_strings)
        assert [known, action.canonical in targets, action.canonical in diff.added].count(True) == 1, (
            action.canonical)

def test_changed_details(c9: Catalog, c23: Catalog) -> None:
    changed = {c.flag: c.changes for c in diff_catalogs(c9, c23).changed}
    assert changed["--tp-size"] == (
        "canonical name --tensor-parallel-size -> --tp-size (--tensor-parallel-size is still an alias)",)
    assert "type int -> callable:sglang.srt.utils.common.human_readable_int" in changed["--context-length"]
    assert any(line.startswith("choices removed: ") and "cutlass_mla" in line
               for line in changed["--attention-backend"])
    assert 'default "layer_first" -> "page_first"' in changed["--hicache-mem-layout"]
    assert "choices no longer checked by the parser (free text)" in changed["--speculative-algorithm"]


def test_downgrade_is_the_mirror(c9: Catalog, c23: Catalog) -> None:
    up, down = diff_catalogs(c9, c23), diff_catalogs(c23, c9)
    renamed_back = {r.old: r.new for r in down.renamed}
    assert renamed_back["--mamba-radix-cache-strategy"] == ("--mamba-scheduler-strategy",)
    assert set(up.removed) <= set(down.added)


def test_output_is_stable_and_sectioned(c9: Catalog, c23: Catalog) -> None:
    text = format_diff(diff_catalogs(c9, c23))
    assert text == format_diff(diff_catalogs(c9, c23))
    lines = text.splitlines()
    assert lines[0].startswith("SGLang 0.5.9 -> 0.5.23: 331 -> 531 flags; ")
    titles = [ln.split(" (")[0] for ln in lines if ln and not ln.startswith((" ", "SGLang"))]
    assert titles == ["Removed", "Renamed", "Deprecated", "Added", "Changed"]
    assert "  ~ --mamba-scheduler-strategy -> --mamba-radix-cache-strategy  (renames.yaml)" in lines
