"""``gen import`` over a corpus of real-world and adversarial launch lines (tests/fixtures/launch-corpus.yaml).

For every line and every pin it names:

* the error codes gen reports are the ones the corpus expects (a regression table);
* a printed manifest loads back with gen's own loader as exactly the sections gen writes
  (no comment or value can add a key), and, its REQUIRED values filled in as the comments
  ask, passes ``gen check`` on a host of that pin: whatever gen import prints, gen check
  accepts, or a REQUIRED comment says what to write;
* (marker ``sglang``) gen agrees with the pin's real parser. What SGLang refuses, gen
  refuses (or repairs it, saying so: F103). What SGLang accepts, gen imports into a
  manifest whose rendered argv SGLang parses to the same values, except the settings the
  inventory owns (``--host``, ``--port``, the node flags), the values the test filled in
  for REQUIRED ones, and the paths gen normalized; or gen refuses it with exactly the
  codes the line's ``stricter`` names.
"""

from __future__ import annotations

import posixpath
import shlex
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from import_render import checked_render, manifest_data
from parser_oracle import parse_many
from ruamel.yaml import YAML

from generator.errors import Diagnostics
from generator.importer.build import ImportResult, import_command
from generator.importer.cmdline import split_command
from generator.importer.program import find_program
from generator.pipeline.fleet import run
from generator.sglang.catalog import known_pins, load_catalog

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "launch-corpus.yaml"
PINS = ("0.5.9", "0.5.23")
# Settings the inventory decides, never the model manifest: gen renders its own values.
OWNED_DESTS = {"host", "port", "nnodes", "node_rank", "dist_init_addr"}
REPAIRS = {"F103"}  # what SGLang refuses but gen renders correctly, with a warning


def corpus() -> list[dict[str, Any]]:
    cases = YAML(typ="safe", pure=True).load(CORPUS.read_text(encoding="utf-8"))
    assert isinstance(cases, list) and len(cases) >= 100
    return cases


def cases_by_pin() -> list[tuple[str, dict[str, Any]]]:
    return [(pin, case) for case in corpus() for pin in case.get("pins", PINS)]


def expected_codes(case: dict[str, Any], pin: str) -> list[str] | str:
    expect = case.get("expect", "ok")
    if isinstance(expect, dict):
        expect = expect[pin]
    return expect if expect == "ok" else sorted(set(expect))


def do_import(pin: str, command: str) -> ImportResult:
    catalog = load_catalog(ROOT, pin)
    others = [load_catalog(ROOT, p) for p in known_pins(ROOT) if p != pin]
    return import_command(command, "<command>", catalog, others)


def error_codes(result: ImportResult) -> list[str]:
    return sorted({d.code for d in result.diagnostics if d.is_error})


def command_argv(command: str) -> list[str]:
    """The words SGLang's parser gets from ``command``: after the program (and its env words)."""
    diags = Diagnostics()
    words = split_command(command, "<command>", diags).words
    found = find_program(words, Diagnostics(), [])
    if found is None:  # not a launcher gen knows: the words after sglang.launch_server / serve
        texts = [w.text for w in words]
        for marker in ("sglang.launch_server", "serve"):
            if marker in texts:
                return texts[texts.index(marker) + 1:]
        return [t for t in shlex.split(command) if t.startswith("-")]
    return [w.text for w in words[found[0]:]]


@pytest.mark.parametrize(("pin", "case"), cases_by_pin(), ids=[f"{p}: {c['why']}" for p, c in cases_by_pin()])
def test_import_reports_what_the_corpus_expects(pin: str, case: dict[str, Any], tmp_path: Path) -> None:
    result = do_import(pin, case["command"])
    expect = expected_codes(case, pin)
    if expect == "ok":
        assert result.manifest is not None, [str(d) for d in result.diagnostics]
    else:
        assert result.manifest is None
        assert error_codes(result) == expect, [str(d) for d in result.diagnostics]
    if result.manifest is not None:
        checked_render(pin, result.manifest, tmp_path)


def test_the_corpus_covers_its_classes() -> None:
    cases = corpus()
    text = " ".join(c["command"] for c in cases)
    for needle in ("=True", "=False", "--model-path /x/QwQ-32B/", "HTTP_PROXY=http://", "--tp8",
                   "minimax-m2", "quark", "SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK", "SGLANG_ENABLE_SPECV2",
                   "--tp 8 --tensor-parallel-size 8", "HOME=", "TRITON_CACHE_DIR=", "\n",
                   "$(", "`", "$'", "a(b)", "python -um", "-msglang.launch_server"):
        assert needle in text, needle
    assert all(set(c) <= {"why", "command", "expect", "stricter", "pins"} for c in cases)


@pytest.mark.sglang
@pytest.mark.parametrize("pin", PINS)
def test_gen_agrees_with_the_real_parser(pin: str, tmp_path: Path) -> None:
    cases = [c for c in corpus() if pin in c.get("pins", PINS)]
    imports = [do_import(pin, c["command"]) for c in cases]
    written = [command_argv(c["command"]) for c in cases]
    renders: list[tuple[list[str], set[tuple[str, ...]]] | None] = []
    for k, result in enumerate(imports):
        renders.append(checked_render(pin, result.manifest, tmp_path / str(k)) if result.manifest else None)
    argvs = written + [r[0] for r in renders if r is not None]
    parsed = parse_many(pin, argvs)
    by_sglang, of_renders = parsed[:len(cases)], iter(parsed[len(cases):])
    for case, result, real, render in zip(cases, imports, by_sglang, renders):
        what = f"{pin}: {case['why']}: {case['command']!r}"
        codes = error_codes(result)
        mine = next(of_renders) if render is not None else None  # in step with the renders parsed
        if real.exit is not None:  # SGLang refuses: gen refuses too, or repairs it aloud
            assert real.exit == 2 or (real.exit == 0 and "--help" in command_argv(case["command"])), what
            repaired = {d.code for d in result.diagnostics} & REPAIRS
            assert codes or repaired, f"{what}: SGLang refuses ({real.said}), gen accepts"
            if mine is not None:  # what gen renders for a repaired command, SGLang takes
                assert mine.exit is None, f"{what}: SGLang refuses gen's repair: {mine.said}"
            continue
        stricter = case.get("stricter", ())
        if isinstance(stricter, dict):
            stricter = stricter.get(pin, ())
        if render is None:  # SGLang accepts, gen refuses: only on purpose
            assert codes == sorted(set(stricter)), f"{what}: gen refuses {codes}, SGLang accepts"
            continue
        assert not stricter, f"{what}: marked stricter, but gen accepts"
        assert mine is not None and mine.exit is None, f"{what}: SGLang refuses gen's render: {mine.said}"
        assert real.values is not None and mine.values is not None
        argv, filled = render
        skip = set(OWNED_DESTS)
        skip |= {"model_path" if p[0] == "weights" else "speculative_draft_model_path" for p in filled
                 if p[-1] in ("path", "draft_model_path")}
        for dest in sorted(set(real.values) | set(mine.values)):
            if dest in skip:
                continue
            a, b = real.values.get(dest), mine.values.get(dest)
            if dest in ("model_path", "speculative_draft_model_path") and isinstance(a, str) and isinstance(b, str):
                a = posixpath.normpath(a) if not a.startswith("//") else "/" + a.lstrip("/")
            assert a == b, f"{what}: {dest} is {a!r} as written, {b!r} as gen renders it ({argv})"


OWNED_FLAGS = ("--host", "--port", "--nnodes", "--node-rank", "--dist-init-addr", "--config")


def _without_owned(argv: list[str]) -> list[str]:
    """``argv`` without the flags (and their values) gen renders from the inventory."""
    out: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        if word in OWNED_FLAGS:
            skip = True
            continue
        out.append(word)
    return out


def test_a_rendered_unit_imports_back_to_what_gen_renders(tmp_path: Path) -> None:
    """gen import of a unit gen rendered drops gen's own lines (host, port, node flags, the
    cache variables, --config of secret_args) and says so; what is left renders again to the
    same flags."""
    import shutil

    repo = tmp_path / "repo"
    for part in ("models", "hosts", "templates", "catalogs"):
        shutil.copytree(ROOT / part, repo / part)
    host = repo / "hosts" / "llm-two.yaml"  # one unit with LoadCredential= and --config too
    host.write_text(host.read_text().replace("    port: 30000\n", "    port: 30000\n    secret_args: [--api-key]\n", 1))
    result = run(repo, None)
    assert result.ok
    units = [(r.host.sglang.pin, f.relpath, f.text) for r in result.renders for f in r.tree.files
             if f.relpath.endswith(".service")]
    assert len(units) == 4 and any("LoadCredential=" in u[2] for u in units)
    for k, (pin, path, text) in enumerate(units):
        catalog = load_catalog(ROOT, pin)
        imported = import_command(text, path, catalog, [load_catalog(ROOT, p) for p in known_pins(ROOT) if p != pin])
        assert imported.manifest is not None, [str(d) for d in imported.diagnostics]
        manifest = imported.manifest
        data = manifest_data(manifest)
        assert not set(data.get("env", {})) & {"HOME", "XDG_CACHE_HOME", "TRITON_CACHE_DIR", "CUDA_CACHE_PATH",
                                               "TORCHINDUCTOR_CACHE_DIR", "CUDA_VISIBLE_DEVICES"}, manifest
        assert "# 'HOME=%S/sglang-" in manifest and "dropped: gen sets HOME itself" in manifest
        argv, _ = checked_render(pin, manifest, tmp_path / f"u{k}")
        written = command_argv(text)
        assert _without_owned(argv) == _without_owned(written), path


@settings(max_examples=examples(150), deadline=None)
@given(st.sampled_from(["--served-model-name", "--model-path", "--chat-template", "--tokenizer-path",
                        "--json-model-override-args", "--download-dir", "--speculative-draft-model-path"]),
       st.text(max_size=30), st.sampled_from(["", "HOME=/x ", "X_Y= ", "SGLANG_A=b ", "HTTP_PROXY=h://a:b@c "]))
def test_any_value_is_a_finding_or_a_manifest_never_a_crash(flag: str, value: str, env: str) -> None:
    """The self-check renders what gen import would print: no value may make that raise."""
    result = do_import("0.5.9", f"{env}python -m sglang.launch_server --model-path /shared/models/x "
                                f"{flag} {shlex.quote(value)}")
    assert result.manifest is not None or any(d.is_error for d in result.diagnostics)
    if result.manifest is not None:
        manifest_data(result.manifest)
