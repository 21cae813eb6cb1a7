"""Approximate catalogs of releases only the flag history knows (generator/sglang/historycatalog.py)."""

from __future__ import annotations

from pathlib import Path

from generator.sglang.catalog import load_catalog
from generator.sglang.historycatalog import history_catalog

ROOT = Path(__file__).resolve().parent.parent


def test_release_resolves_to_its_newest_post_release() -> None:
    found = history_catalog(ROOT, "0.5.4")
    assert found is not None and found.catalog.version == "0.5.4.post3" and found.source == "ast"
    tp = found.catalog.by_option("--tp-size")
    assert tp is not None and tp.dest == "tensor_parallel_size" and tp.type == "int" and tp.default == 1
    assert found.note.startswith("approximate: from the AST of server_args.py of SGLang 0.5.4.post3")


def test_the_probe_release_matches_its_committed_catalog() -> None:
    """0.5.23 is in the history from the probe: the built catalog has the committed options."""
    found = history_catalog(ROOT, "0.5.23")
    assert found is not None and found.source == "probe"
    committed = load_catalog(ROOT, "0.5.23")
    built = set(found.catalog.option_strings)
    live = {o for a in committed.actions for o in a.option_strings if a.kind != "help"}
    assert len(live - built) <= len(live) // 20, sorted(live - built)[:20]
    for action in committed.actions[:50]:
        other = found.catalog.by_option(action.canonical)
        if other is not None and action.kind not in ("help", "deprecated"):
            # The history names a callable type by its last component only.
            short = (action.type or "").rsplit(".", 1)[-1].replace("callable:", "")
            assert (other.kind, other.nargs) == (action.kind, action.nargs), action.canonical
            assert (other.type or "").replace("callable:", "") == short or other.type == action.type, action.canonical


def test_an_unknown_release_has_none() -> None:
    assert history_catalog(ROOT, "0.3.9") is None
    assert history_catalog(ROOT, "9.9.9") is None
