"""generator.live.inventory_update: captured facts into an inventory's text, everything else as written."""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from pathlib import Path

import pytest

from generator.errors import Diagnostics
from generator.live.facts import LiveFacts, LiveGpu
from generator.live.host_snapshot import _loads_back
from generator.live.inventory_update import _yaml, model_names_gpu, update_inventory
from generator.load.manifests import load_text
from generator.load.resolve import Host, host_from_doc

ROOT = Path(__file__).resolve().parent.parent
# Every inventory of the repository, but the bad fixtures that YAML itself refuses (their
# expected finding is a Y code): gen host snapshot reports those and writes nothing.
_YAML_REFUSED = re.compile(r"^# expect: .*error\[Y\d+\]", re.MULTILINE)
INVENTORIES = sorted([*ROOT.glob("hosts/*.yaml"), *ROOT.glob("tests/live/fixtures/repo/hosts/*.yaml"),
                      *(p for p in ROOT.glob("tests/fixtures/bad/*/hosts/*.yaml")
                        if not _YAML_REFUSED.search(p.read_text(encoding="utf-8")))])
NAME = "NVIDIA RTX PRO 6000 Blackwell Server Edition"


def _host(text: str) -> Host:
    doc = load_text(text, "hosts/h.yaml", Diagnostics())
    assert doc is not None
    return host_from_doc(doc)


def _live(host: Host, **changes: object) -> LiveFacts:
    """What a host whose hardware is exactly its inventory answers (VM GPUs invisible)."""
    vm = {i for i, _ in host.vm_gpus}
    seen = [g for g in host.gpus if g.index not in vm]
    gpus = tuple(LiveGpu(i, g.model or NAME, g.pci_bus_id, g.memory_mib, g.compute_cap) for i, g in enumerate(seen))
    topo = host.facts.topology
    links = {a.pci_bus_id: {b.pci_bus_id: (topo.link(a.index, b.index) if topo else ("X" if a is b else "NODE"))
                            for b in seen} for a in seen}
    facts = host.facts
    live = LiveFacts(gpus, facts.driver_version, facts.cuda_version, links, dict(host.numa),
                     {g.pci_bus_id: g.numa_node for g in host.gpus}, facts.torch_cuda,
                     facts.torch_arch_list if facts.torch_known else None,
                     None if facts.torch_known else "not captured")
    return replace(live, **changes)  # type: ignore[arg-type]


LLM_TWO = (ROOT / "hosts" / "llm-two.yaml").read_text()


def _captured(text: str = LLM_TWO) -> str:
    """The inventory after a first capture of a host that matches it (facts added)."""
    host = _host(text)
    return update_inventory(text, host, _live(host, driver_version="580.95.05", cuda_version="13.0",
                                              torch_cuda="12.8", torch_arch_list=("sm_120",))).text


@pytest.mark.parametrize("path", INVENTORIES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_round_trip_reproduces_every_inventory_byte_for_byte(path: Path) -> None:
    """ruamel.yaml, with the indentation found for the file, writes it back unchanged."""
    import io

    text = path.read_text()
    yaml = _yaml(text)
    out = io.StringIO()
    yaml.dump(yaml.load(text), out)
    assert out.getvalue() == text


def test_an_unchanged_host_leaves_the_file_as_it_was() -> None:
    host = _host(LLM_TWO)
    first = update_inventory(LLM_TWO, host, _live(host, driver_version="580.95.05", cuda_version="13.0",
                                                  torch_cuda="12.8", torch_arch_list=("sm_100", "sm_120")))
    assert first.changed
    again = update_inventory(first.text, _host(first.text),
                             _live(_host(first.text)))  # the same host, captured again
    assert not again.changed and again.text == first.text


def _diff(a: str, b: str) -> list[str]:
    return [ln for ln in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0)
            if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


def test_the_first_capture_adds_the_facts_after_numa_and_nothing_else_moves() -> None:
    host = _host(LLM_TWO)
    new = update_inventory(LLM_TWO, host, _live(host, driver_version="580.95.05", cuda_version="13.0",
                                                torch_cuda="12.8", torch_arch_list=("sm_120", "compute_120")))
    added = _diff(LLM_TWO, new.text)
    assert all(ln.startswith("+") for ln in added)
    assert added[:3] == ["+# Captured by `gen host snapshot llm-two`; `gen verify --host llm-two` fails when the host",
                         "+# no longer matches. Capture again rather than edit.", "+facts:"]
    assert '+  driver_version: "580.95.05"' in added and "+  torch_arch_list: [sm_120, compute_120]" in added
    assert "+    gpus: [0, 1, 2, 3]" in added and "+      - [X, NODE, NODE, NODE]" in added
    lines = new.text.splitlines()
    assert lines.index("facts:") == lines.index('  - {node: 1, cpus: "32-63,96-127"}') + 3


def test_a_changed_gpu_changes_its_own_line_only() -> None:
    text = _captured()
    host = _host(text)
    live = _live(host)
    swapped = LiveGpu(1, "NVIDIA H100 80GB HBM3", "00000000:21:00.0", 81559, "9.0")
    new = update_inventory(text, host, replace(live, gpus=(live.gpus[0], swapped, *live.gpus[2:])))
    assert _diff(text, new.text) == [
        '-  - {index: 1, pci_bus_id: "00000000:21:00.0", memory_gb: 96, memory_mib: 97887, compute_cap: "12.0", '
        "numa_node: 0, model: RTX PRO 6000 Blackwell}",
        '+  - {index: 1, pci_bus_id: "00000000:21:00.0", memory_mib: 81559, compute_cap: "9.0", numa_node: 0, '
        "model: NVIDIA H100 80GB HBM3}"]
    assert any("memory_gb 96 dropped" in n for n in new.notes)
    assert any("model 'RTX PRO 6000 Blackwell' replaced" in n for n in new.notes)


def test_a_hand_typed_inventory_gets_the_measured_figures_beside_its_own() -> None:
    typed = _captured().replace(', memory_mib: 97887, compute_cap: "12.0"', "")
    host = _host(typed)
    live = _live(host)
    live = replace(live, gpus=tuple(replace(g, memory_mib=97887, compute_cap="12.0") for g in live.gpus))
    new = update_inventory(typed, host, live)
    changed = _diff(typed, new.text)
    assert len(changed) == 8  # GPUs 0-3, each one line out and one in; the VM's GPUs are not seen
    assert '+  - {index: 0, pci_bus_id: "00000000:01:00.0", memory_gb: 96, memory_mib: 97887, compute_cap: "12.0", ' \
           "numa_node: 0, model: RTX PRO 6000 Blackwell}" in changed
    assert any("GPU 4" in ln for ln in changed) is False


def test_numa_from_sysfs_and_a_vm_gpu_node() -> None:
    text = _captured()
    host = _host(text)
    live = _live(host, numa_cpus={0: "0-31,64-95", 1: "32-63,96-127,128-129"},
                 gpu_numa={g.pci_bus_id: g.numa_node for g in host.gpus} | {"00000000:E1:00.0": 0})
    changed = _diff(text, update_inventory(text, host, live).text)
    assert len(changed) == 4
    assert '+  - {node: 1, cpus: "32-63,96-127,128-129"}' in changed
    assert any(ln.startswith("+  - {index: 7,") and "numa_node: 0," in ln for ln in changed)


def test_a_gpu_the_host_does_not_show_is_kept_with_a_note() -> None:
    host = _host(LLM_TWO)
    live = _live(host)
    new = update_inventory(LLM_TWO, host, replace(live, gpus=live.gpus[:3],
                                                  links={b: {c: v for c, v in row.items() if c != "00000000:61:00.0"}
                                                         for b, row in live.links.items() if b != "00000000:61:00.0"}))
    assert "index: 3," in new.text
    assert any(n.startswith("GPU 3 (00000000:61:00.0) is not visible") for n in new.notes)


def test_a_new_gpu_is_appended() -> None:
    host = _host(LLM_TWO)
    live = _live(host)
    extra = LiveGpu(8, NAME, "00000000:F1:00.0", 97887, "12.0")
    links = {b: {**row, "00000000:F1:00.0": "SYS"} for b, row in live.links.items()}
    links["00000000:F1:00.0"] = {b: "SYS" for b in links} | {"00000000:F1:00.0": "X"}
    new = update_inventory(LLM_TWO, host, replace(live, gpus=(*live.gpus, extra), links=links,
                                                  gpu_numa={**live.gpu_numa, "00000000:F1:00.0": 1}))
    assert f'  - {{index: 8, pci_bus_id: "00000000:F1:00.0", memory_mib: 97887, compute_cap: "12.0", numa_node: 1, ' \
           f"model: {NAME}}}" in new.text
    assert "    gpus: [0, 1, 2, 3, 8]" in new.text


@pytest.mark.parametrize(("written", "live", "names"), [
    ("H200", "NVIDIA H200", True), ("RTX PRO 6000 Blackwell", NAME, True), ("NVIDIA H200", "NVIDIA H200", True),
    ("H200", "NVIDIA H100 80GB HBM3", False), ("", "NVIDIA H200", False), (None, "NVIDIA H200", False)])
def test_which_written_models_name_the_gpu(written: str | None, live: str, names: bool) -> None:
    assert model_names_gpu(written, live) is names


def test_a_torch_that_could_not_be_read_leaves_the_torch_facts() -> None:
    host = _host(LLM_TWO)
    new = update_inventory(LLM_TWO, host, _live(host, driver_version="580.95.05", torch_arch_list=None,
                                                torch_error="No such file or directory"))
    assert "torch_cuda" not in new.text and any("could not be read (No such file" in n for n in new.notes)


# ---- the operator's text survives a capture: CRLF, flow style, comments, no facts section ----

def _first(text: str, **changes: object) -> str:
    """The inventory after a first capture (facts added), with ``changes`` to what the host answers."""
    host = _host(text.replace("\r\n", "\n"))
    live = _live(host, driver_version="580.95.05", cuda_version="13.0", torch_cuda="12.8",
                 torch_arch_list=("sm_120",))
    return update_inventory(text, host, replace(live, **changes)).text  # type: ignore[arg-type]


def _is_subsequence(lines: list[str], of: list[str]) -> bool:
    found = iter(of)
    return all(line in found for line in lines)


def test_a_crlf_inventory_is_written_back_with_crlf() -> None:
    crlf = LLM_TWO.replace("\n", "\r\n")
    new = _first(crlf)
    assert new.count("\n") == new.count("\r\n") > crlf.count("\r\n")
    assert new == _first(LLM_TWO).replace("\n", "\r\n")  # the same change as the LF file's, line for line
    _loads_back(new, "hosts/llm-two.yaml")
    host = _host(new.replace("\r\n", "\n"))
    again = update_inventory(new, host, _live(host))
    assert not again.changed and again.text == new  # byte for byte


def _flow_style(text: str) -> str:
    """``text`` with its gpus and numa lists in flow style, one line each."""
    lines = text.split("\n")
    start = lines.index("gpus:")
    end = lines.index("numa:")
    gpus = "gpus: [" + ", ".join(ln.strip()[2:] for ln in lines[start + 1:end]) + "]"
    numa_end = lines.index("vm_passthrough:")
    numa = "numa: [" + ", ".join(ln.strip()[2:] for ln in lines[end + 1:numa_end]) + "]"
    return "\n".join([*lines[:start], gpus, numa, *lines[numa_end:]])


def test_flow_style_lists_stay_flow_and_only_the_changed_value_changes() -> None:
    flow = _flow_style(LLM_TWO)
    first = _first(flow)
    assert all(ln.startswith("+") for ln in _diff(flow, first))  # only the facts section is added
    host = _host(first)
    live = _live(host)
    new = update_inventory(first, host, replace(live, gpus=(replace(live.gpus[0], memory_mib=97000), *live.gpus[1:])))
    changed = _diff(first, new.text)
    assert len(changed) == 2 and changed[0].startswith("-gpus: [{") and changed[1].startswith("+gpus: [{")
    assert changed[1] == "+" + changed[0][1:].replace("memory_mib: 97887", "memory_mib: 97000", 1)


@pytest.mark.parametrize("numa", [
    '  - {node: 0, cpus: "0-31,64-95"}\n  - {node: 1, cpus: "32-63,96-127"}  # sysfs, 2026-11\n',
    '  - node: 0\n    cpus: "0-31,64-95"\n  - node: 1\n    cpus: "32-63,96-127"\n',
], ids=["flow items, an end-of-line comment", "block items"])
def test_comments_stay_where_the_operator_wrote_them(numa: str) -> None:
    """An end-of-line comment on a changed GPU stays on its line; the comment lines (and the blank
    line) above the key after numa stay above that key when the facts section goes in between."""
    text = LLM_TWO.replace('  - {node: 0, cpus: "0-31,64-95"}\n  - {node: 1, cpus: "32-63,96-127"}\n', numa)
    text = text.replace("RTX PRO 6000 Blackwell}\n  - {index: 1", "RTX PRO 6000 Blackwell}  # riser A\n  - {index: 1", 1)
    text = text.replace("vm_passthrough:", "\n# GPUs 4-7 belong to the VM\n#no space after the hash\nvm_passthrough:")
    new = _first(text, gpus=tuple(replace(g, memory_mib=97000) if g.index == 0 else g for g in _live(_host(text)).gpus))
    lines = new.split("\n")
    kept = [ln for ln in text.split("\n") if "memory_mib: 97887" not in ln or "riser A" not in ln]
    assert _is_subsequence(kept, lines)  # every other line as written, in order
    assert [ln for ln in lines if "riser A" in ln] == [
        '  - {index: 0, pci_bus_id: "00000000:01:00.0", memory_gb: 96, memory_mib: 97000, compute_cap: "12.0", '
        "numa_node: 0, model: RTX PRO 6000 Blackwell}  # riser A"]
    at = lines.index("vm_passthrough:")
    assert lines[at - 3:at] == ["", "# GPUs 4-7 belong to the VM", "#no space after the hash"]
    assert lines.index("facts:") < at - 3
    if "# sysfs" in numa:
        assert '  - {node: 1, cpus: "32-63,96-127"}  # sysfs, 2026-11' in lines


def test_a_comment_in_the_facts_section_survives_a_recapture() -> None:
    """The operator's note inside facts: stays when another fact of the section changes."""
    text = _first(LLM_TWO).replace("  torch_cuda:", "  # upgrade planned for 2027-01\n  torch_cuda:")
    host = _host(text)
    new = update_inventory(text, host, _live(host, driver_version="590.10.01"))
    assert _diff(text, new.text) == ['-  driver_version: "580.95.05"', '+  driver_version: "590.10.01"']


def test_an_inventory_whose_last_section_is_numa() -> None:
    """Without a facts section and with numa last: the facts go at the end, after the closing comment
    (it follows numa's last line); a second capture changes nothing."""
    numa = 'numa:\n  - {node: 0, cpus: "0-31,64-95"}\n  - {node: 1, cpus: "32-63,96-127"}\n'
    text = LLM_TWO.replace(numa, "") + numa + "# end of the hardware part\n"
    first = _first(text)
    assert first.startswith(text)
    assert first[len(text):].startswith("# Captured by `gen host snapshot llm-two`")
    host = _host(first)
    again = update_inventory(first, host, _live(host))
    assert not again.changed and again.text == first
