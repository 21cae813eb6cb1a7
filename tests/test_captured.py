"""The capture header of catalogs/**/*.json (generator/load/captured.py): each file proves its content.

An edit after the capture (a flag added, a choice widened, a byte of whitespace) is C016 at
the file; a file without the header is C017; every writer of a captured file stamps it; the
committed catalogs prove theirs; and a rendered unit names the digest of each captured
file its checks read, so changed facts change output/.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.main import main
from generator.load import captured
from generator.load.captured import (MAX_CAPTURED_BYTES, captured_json, check_captured, digest_problem,
                                     recorded_digest, stamp, with_header)

ROOT = Path(__file__).resolve().parent.parent


def _doc() -> dict:
    return {"format": 1, "captured": {"tool": "gen sglang snapshot", "probe": 1},
            "actions": [{"canonical": "--tp-size", "choices": None, "help": "The TP size."}]}


def _repo(tmp_path: Path, files: dict[str, bytes | str]) -> Path:
    for rel, data in files.items():
        path = tmp_path / "catalogs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
    return tmp_path


def test_a_stamped_file_proves_its_content_and_names_its_tool() -> None:
    text = captured_json(_doc())
    assert digest_problem(text.encode()) is None
    header = json.loads(text)["captured"]
    assert header["tool"] == "gen sglang snapshot" and header["probe"] == 1
    assert len(header["sha256"]) == 64 and header["sha256"] != captured.PLACEHOLDER
    assert captured_json(_doc()) == text  # deterministic: one capture, one text


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("The TP size.", "The TP size!"),                 # help text
    lambda t: t.replace('"choices": null', '"choices": ["a", "b"]'),     # a choice list
    lambda t: t.replace('"actions": [', '"actions": [{"canonical": "--evil"},'),  # a flag added
    lambda t: t.replace("\n", "\n ", 1),                                 # whitespace only
    lambda t: t + " ",                                                   # a byte after the end
])
def test_any_edit_after_the_capture_is_c016(edit) -> None:
    text = captured_json(_doc())
    changed = edit(text)
    assert changed != text
    code, message, line = digest_problem(changed.encode())
    assert code == "C016" and "edited after `gen sglang snapshot` wrote it" in message
    assert line == text[:text.index('"sha256"')].count("\n") + 1  # at the digest's line


def test_a_recomputed_digest_passes_the_check_but_changes_what_a_render_names(tmp_path: Path) -> None:
    """Integrity, not origin: a PR can stamp its edit. The rendered header then names another digest."""
    honest = captured_json(_doc())
    forged = stamp(json.dumps(with_header(json.loads(honest.replace("The TP size.", "x"))), indent=1,
                              sort_keys=True) + "\n")
    assert digest_problem(forged.encode()) is None
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(honest)
    b.write_text(forged)
    assert recorded_digest(a) != recorded_digest(b)


@pytest.mark.parametrize("text, what", [
    ('{"format": 1}\n', "no capture header"),
    ('{"captured": {"tool": "t"}}\n', "no sha256"),
    ('{"captured": {"tool": "t", "sha256": "abc"}}\n', "no sha256"),
    ('{"captured": {"tool": "t", "sha256": "%s"}, "x": {"captured": {"sha256": "%s"}}}\n'
     % ("0" * 64, "0" * 64), "2 capture headers"),
])
def test_a_file_without_one_well_formed_header_is_c017(text: str, what: str) -> None:
    code, message, _ = digest_problem(text.encode())
    assert code == "C017" and what in message


def test_text_that_is_not_ascii_is_refused() -> None:
    text = captured_json(_doc())
    assert digest_problem(text.replace("The TP size.", "Ünïcode").encode())[0] == "C016"
    with pytest.raises(ValueError):
        stamp('{"captured": {"tool": "é", "sha256": "%s"}}' % ("0" * 64))


def test_a_header_needs_the_tool() -> None:
    with pytest.raises(ValueError):
        with_header({"format": 1})


def test_the_committed_catalogs_prove_their_content() -> None:
    files = sorted((ROOT / "catalogs").rglob("*.json"))
    assert len(files) >= 7
    assert check_captured(ROOT) == []


def test_every_json_below_catalogs_is_checked_a_link_and_an_oversize_file_refused(tmp_path: Path) -> None:
    good = captured_json(_doc())
    root = _repo(tmp_path, {"sglang/0.5.9.json": good, "models/m.json": good.replace("TP", "PT"),
                            "models/deep/x.json": '{"a": 1}\n', "notes.txt": "not json"})
    os.symlink("/proc/self/environ", root / "catalogs" / "sglang" / "linked.json")
    big = root / "catalogs" / "sglang" / "big.json"
    with open(big, "wb") as handle:
        handle.truncate(MAX_CAPTURED_BYTES + 1)
    found = {d.pos.path: d.code for d in check_captured(root)}
    assert found == {"catalogs/models/m.json": "C016", "catalogs/models/deep/x.json": "C017",
                     "catalogs/sglang/linked.json": "Y009", "catalogs/sglang/big.json": "Y010"}


def test_gen_check_reports_the_edited_catalog_at_its_digest_line(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for folder in ("catalogs", "hosts", "models", "templates", "output", "schemas", "docs"):
        shutil.copytree(ROOT / folder, root / folder, symlinks=True)
    path = root / "catalogs" / "sglang" / "0.5.9.json"
    text = path.read_text()
    path.write_text(text.replace('"The tensor parallelism size."', '"The tensor parallelism size!"', 1))
    result = CliRunner().invoke(main, ["check", "--root", str(root), "--format", "json"],
                                env={"GEN_RENDER_CACHE": "off"})
    assert result.exit_code == 1, result.output
    diags = json.loads(result.stdout)["diagnostics"]
    assert [(d["file"], d["code"]) for d in diags] == [("catalogs/sglang/0.5.9.json", "C016")]
    assert diags[0]["line"] == text[:text.index('"sha256"')].count("\n") + 1


def test_the_writers_stamp_what_they_write(tmp_path: Path) -> None:
    from generator.sglang import envsnapshot, snapshot

    catalog = json.loads((ROOT / "catalogs" / "sglang" / "0.5.9.json").read_text())
    out = snapshot.write_catalog(catalog, tmp_path / "c.json")
    assert digest_problem(out.read_bytes()) is None
    env = (ROOT / "catalogs" / "sglang" / "0.5.9.env.json").read_bytes()
    probe_output = json.dumps(json.loads(env) | {"captured": {"tool": "gen sglang envprobe", "probe": 1,
                                                               "python": "3.11.7"}},
                              indent=1, sort_keys=True).encode() + b"\n"
    assert envsnapshot._checked(probe_output, "test") == env  # the committed file, byte for byte
    sys.path.insert(0, str(ROOT / "scripts" / "sglang-history"))
    try:
        import history  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    committed = (ROOT / "catalogs" / "sglang" / "history.json").read_text()
    doc = json.loads(committed)
    doc["captured"]["sha256"] = captured.PLACEHOLDER
    assert history.dumps(doc) == committed


def test_a_rendered_unit_names_the_digests_of_the_facts_it_was_checked_against() -> None:
    unit = (ROOT / "output" / "llm-two" / "etc" / "systemd" / "system" / "sglang-qwen.service").read_text()
    flags = recorded_digest(ROOT / "catalogs" / "sglang" / "0.5.9.json")
    env = recorded_digest(ROOT / "catalogs" / "sglang" / "0.5.9.env.json")
    devices = recorded_digest(ROOT / "catalogs" / "sglang" / "0.5.9.devices.json")
    model = recorded_digest(ROOT / "catalogs" / "models" / "qwen3.5-122b-a10b.json")  # its checkpoint's facts
    assert flags and env and devices and model
    assert (f"# Facts: catalogs/sglang/0.5.9.json sha256:{flags[:16]}, "
            f"catalogs/sglang/0.5.9.env.json sha256:{env[:16]}, "
            f"catalogs/sglang/0.5.9.devices.json sha256:{devices[:16]}, "
            f"catalogs/models/qwen3.5-122b-a10b.json sha256:{model[:16]}\n") in unit


@pytest.mark.parametrize("link", ["catalogs", "catalogs/sglang"])
def test_a_linked_catalogs_folder_cannot_take_its_files_out_of_the_check(repo_copy: Path, link: str) -> None:
    """A link to a folder of unstamped copies made gen read them and check nothing."""
    real = repo_copy / link
    elsewhere = repo_copy / "elsewhere"
    real.rename(elsewhere)
    os.symlink(elsewhere.relative_to(real.parent) if link == "catalogs" else Path("..") / "elsewhere", real)
    found = [(d.pos.path, d.code) for d in check_captured(repo_copy)]
    assert (f"{link}/" if link == "catalogs" else link, "Y009") in found, found


def test_an_edited_and_restamped_devices_file_changes_every_unit_checked_against_it(repo_copy: Path) -> None:
    """The GPU rules read <pin>.devices.json: lowering a quantization's minimum capability and
    stamping the file again passes C016, so the rendered units name its digest too."""
    from click.testing import CliRunner

    from generator.cli.main import main
    from generator.load.captured import captured_json

    path = repo_copy / "catalogs" / "sglang" / "0.5.9.devices.json"
    doc = json.loads(path.read_text())
    tool = doc.pop("captured")["tool"]
    doc["quantization"] = {name: 0 for name in doc["quantization"]}
    path.write_text(captured_json(doc, tool))
    unit = repo_copy / "output" / "llm-two" / "etc" / "systemd" / "system" / "sglang-qwen.service"
    before = unit.read_text()
    runner = CliRunner()
    result = runner.invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code == 1 and "output/llm-two" in result.stderr and "C016" not in result.stderr, result.stderr
    assert runner.invoke(main, ["render", "--all", "--root", str(repo_copy)]).exit_code == 0
    after = unit.read_text()
    digest = recorded_digest(path)
    assert digest and f"catalogs/sglang/0.5.9.devices.json sha256:{digest[:16]}" in after and after != before
