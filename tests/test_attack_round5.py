"""Attacks of round 5 (issue 22, session 6), each with the class it stands for.

- gen import checks what it prints with gen check's own pipeline, but skipped that check when
  the repository had no templates/ (`gen import --root R` for a repository of catalogs/ only):
  ``--model-path $'/x\\n/y'`` and a 23-digit ``--tp`` printed a manifest gen check refuses, exit 0.
  Now the manifest is loaded, planned and checked without a render.
- Validators written ``re.compile(r"^...$").match(x)``: '$' also matches before a final newline,
  so ``gen model snapshot --model $'x\\n'`` wrote catalogs/models/"x\\n.json" (exit 0, the name
  printed raw); the class (a shard name, a repo id, a commit, a template name, a GPU fact, a
  foreign flag, a rule's field...) now uses fullmatch (argparse's own negative-number test keeps
  match, as argparse does).
- Entries of hosts/ and models/ gen does not read were skipped without a word:
  ``hosts/.gpu-c.yaml``, ``models/qwen.YAML``, ``hosts/gpu-a.yaml~``, ``hosts/old/``. Terraform
  skips such files silently; helm lint reports a template it would not render. An operator (and
  the reviewer of a pull request) expects to be told: Y018, a warning naming each one.
- Its YAML writer wrote keys raw: a unit's ``Environment="NCCL_DEBUG: \\"INFO\\" #=1"`` printed
  the line ``NCCL_DEBUG: "INFO" #: "1"``, a variable the command never set (exit 0); the valid
  names ``TRUE`` and ``null`` read back as a boolean and a null key (a good command refused).
  The class: every key and value it writes reads back as itself (a property test over any text).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from click.testing import CliRunner

from generator.cli.main import main
from generator.errors import Diagnostics
from generator.importer.build import import_command
from generator.importer.yaml_text import Entry, emit
from generator.load.manifests import load_bytes
from generator.sglang.catalog import load_catalog

ROOT = Path(__file__).resolve().parent.parent


def _catalogs_only(tmp_path: Path) -> Path:
    """A repository of catalogs/ alone: no templates/, hosts/ or models/."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "catalogs", repo / "catalogs")
    return repo


@pytest.mark.parametrize("words, code", [
    (["--model-path", "/x\n/y"], "S008"),
    (["--model-path", "/srv/x", "--tp", "9" * 23], "S011"),
    (["--model-path", "/srv/x", "--tp", "9" * 5000], "S011"),
])
def test_import_checks_what_it_prints_without_templates(tmp_path: Path, words: list[str], code: str) -> None:
    repo = _catalogs_only(tmp_path)
    catalog = load_catalog(repo, "0.5.9")
    command = " ".join(["python", "-m", "sglang.launch_server", *(f"$'{w}'" if "\n" in w else w for w in words)])
    command = command.replace("\n", "\\n")
    result = import_command(command, "<command>", catalog, root=repo)
    assert result.manifest is None
    assert code in {d.code for d in result.diagnostics if d.is_error}


def test_import_without_templates_still_prints_a_good_manifest(tmp_path: Path) -> None:
    repo = _catalogs_only(tmp_path)
    catalog = load_catalog(repo, "0.5.9")
    result = import_command("python -m sglang.launch_server --model-path /srv/x --tp 2", "<command>",
                            catalog, root=repo, size_gb=1)
    assert result.manifest is not None and "tp: 2" in result.manifest


@pytest.mark.parametrize("assignment, code", [
    ('"NCCL_DEBUG: \\"INFO\\" #=1"', "S009"),  # was: env NCCL_DEBUG=INFO, exit 0
    ('"A: b=1"', "S009"),
])
def test_a_unit_variable_that_is_no_name_is_refused_not_rewritten(assignment: str, code: str) -> None:
    catalog = load_catalog(ROOT, "0.5.9")
    unit = (f"[Service]\nEnvironment={assignment}\n"
            "ExecStart=/opt/py -m sglang.launch_server --model-path /srv/x\n")
    result = import_command(unit, "old.service", catalog, root=ROOT, size_gb=1)
    assert result.manifest is None
    assert [d.code for d in result.diagnostics if d.is_error] == [code]


def test_valid_names_that_yaml_reads_as_other_types_import() -> None:
    catalog = load_catalog(ROOT, "0.5.9")
    unit = ('[Service]\nEnvironment="TRUE=1" "null=2" "Y=3" "ON=4" "NO=5" "_1=6"\n'
            "ExecStart=/opt/py -m sglang.launch_server --model-path /srv/x\n")
    result = import_command(unit, "old.service", catalog, root=ROOT, size_gb=1)
    assert result.manifest is not None, [str(d) for d in result.diagnostics]
    diags = Diagnostics()
    doc = load_bytes(result.manifest.encode(), "models/x.yaml", diags)
    assert doc is not None
    assert dict(doc.data["env"]) == {"TRUE": "1", "null": "2", "Y": "3", "ON": "4", "NO": "5", "_1": "6"}


_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), _TEXT,
                    st.floats(allow_nan=False, allow_infinity=False),
                    st.lists(st.one_of(st.integers(), _TEXT), max_size=3))


def _plain(node: Any) -> Any:
    """Loaded YAML as built-in types, keys as loaded (a bool or None key stays one)."""
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


@settings(max_examples=examples(300), deadline=None)
@given(st.dictionaries(_TEXT.filter(bool), st.one_of(
    _SCALAR, st.dictionaries(_TEXT.filter(bool), _SCALAR, min_size=1, max_size=3)), min_size=1, max_size=4),
    st.lists(_TEXT, max_size=2))
def test_every_key_and_value_the_import_writer_writes_reads_back_as_itself(doc: dict[str, Any],
                                                                          notes: list[str]) -> None:
    lines: list[str] = []
    for name, node in doc.items():
        entries = ({k: Entry(v, list(notes)) for k, v in node.items()} if isinstance(node, dict)
                   else Entry(node, list(notes)))
        emit(lines, name, entries, 0)
    diags = Diagnostics()
    loaded = load_bytes(("\n".join(lines) + "\n").encode(), "models/x.yaml", diags)
    if loaded is None:  # the loader's own bounds (a control character is S008 later, not here)
        pytest.fail(f"{lines!r}: {[str(d) for d in diags.items]}")
    assert _plain(loaded.data) == doc


def test_a_character_beyond_the_basic_plane_imports() -> None:
    """json.dumps wrote 'qwen😀' as a surrogate pair, which YAML refuses (Y001: a good command refused)."""
    catalog = load_catalog(ROOT, "0.5.9")
    result = import_command("python -m sglang.launch_server --model-path /srv/x --served-model-name 'qwen😀'",
                            "<command>", catalog, root=ROOT, size_gb=1)
    assert result.manifest is not None, [str(d) for d in result.diagnostics]
    assert 'served_model_name: "qwen😀"' in result.manifest


def test_a_value_ending_in_a_line_break_is_not_written_plain() -> None:
    """re.match's '$' matched before a final newline: 'abc\\n' was written plain and read back as
    'abc', so gen check's pipeline never saw the line break (exit 0, a manifest that says otherwise)."""
    catalog = load_catalog(ROOT, "0.5.9")
    result = import_command("python -m sglang.launch_server --model-path /srv/x --served-model-name $'abc\\n'",
                            "<command>", catalog, root=ROOT, size_gb=1)
    assert result.manifest is None
    assert [d.code for d in result.diagnostics if d.is_error] == ["S008"]


@pytest.mark.parametrize("name", ["x\n", "qwen\n"])
def test_a_model_name_ending_in_a_line_break_names_no_snapshot(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text('{"architectures": ["LlamaForCausalLM"], "model_type": "llama"}')
    result = CliRunner().invoke(main, ["model", "snapshot", "--root", str(tmp_path), "--model", name, str(folder),
                                       "--out", str(tmp_path / "out.json")])
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("check, text", [
    ("generator.checkpoint.snapshot:valid_model_name", "x\n"),
    ("generator.checkpoint.capture:looks_like_repo_id", "Qwen/Qwen3\n"),
])
def test_validators_refuse_a_trailing_line_break(check: str, text: str) -> None:
    import importlib

    module, func = check.split(":")
    assert not getattr(importlib.import_module(module), func)(text)
    assert getattr(importlib.import_module(module), func)(text.rstrip("\n"))


UNREAD = {
    "hosts/.gpu-c.yaml": "a hidden entry",
    "hosts/gpu-a.yaml~": "an editor's backup or swap file",
    "hosts/.gpu-a.yaml.swp": "a hidden entry",
    "hosts/gpu-a.yaml.bak": "not named *.yaml or *.yml",
    "models/qwen.YAML": "not named *.yaml or *.yml",
    "models/#qwen.yaml#": "an editor's backup or swap file",
    "models/qwen.json": "not named *.yaml or *.yml",
}


def test_every_entry_gen_does_not_read_is_named(repo_copy: Path) -> None:
    for relpath in UNREAD:
        (repo_copy / relpath).write_text("name: x\n")
    (repo_copy / "hosts" / "old").mkdir()
    (repo_copy / "hosts" / ".gitkeep").write_text("")  # git's own: nothing to say
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code == 0, result.stderr
    printed = [ln for ln in result.stderr.splitlines() if "[Y018]" in ln]
    expected = {**UNREAD, "hosts/old/": "a folder (gen reads no subfolders here)"}
    assert len(printed) == len(expected), result.stderr
    for relpath, reason in expected.items():
        folder = relpath.split("/")[0]
        assert (f"{relpath}: warning[Y018]: not read: {reason}; gen reads the files {folder}/*.yaml and "
                f"{folder}/*.yml that are not hidden") in result.stderr, result.stderr
    assert ".gitkeep" not in result.stderr


def test_an_unread_name_is_printed_escaped(repo_copy: Path) -> None:
    (repo_copy / "hosts" / ".x\n::error file=a::forged.yaml").write_text("")
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert "\n::error" not in result.stderr and "[Y018]" in result.stderr
