"""The parsers of generator.live.facts on real nvidia-smi output, and the stand-in's formats read back."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from nvidia_smi_outputs import (SUMMARY_H200, TOPO_2X_NV12_MLX, TOPO_8X4090_PCIE, TOPO_8XH100_NV18, TOPO_LEGEND,
                                TOPO_8XH200_HEAD)

from generator.live import facts
from generator.live.facts import FactsError

STANDIN = Path(__file__).parent / "live" / "standins" / "standin_nvidia_smi.py"


def test_topology_of_a_pcie_box_tab_separated_with_nic_rows() -> None:
    matrix = facts.parse_topology(TOPO_8X4090_PCIE)
    assert sorted(matrix) == list(range(8))
    assert matrix[0] == {0: "X", 1: "SYS", 2: "SYS", 3: "SYS", 4: "SYS", 5: "SYS", 6: "SYS", 7: "SYS"}
    assert all(matrix[i][i] == "X" for i in range(8))


def test_topology_pasted_with_blanks_and_a_legend() -> None:
    matrix = facts.parse_topology(TOPO_8XH100_NV18)
    assert len(matrix) == 8 and matrix[3][7] == "NV18" and matrix[5][5] == "X"


def test_topology_skips_nic_columns() -> None:
    assert facts.parse_topology(TOPO_8XH200_HEAD)[1] == {0: "NV18", 1: "X", 2: "NV18", 3: "NV18", 4: "NV18",
                                                         5: "NV18", 6: "NV18", 7: "NV18"}
    assert facts.parse_topology(TOPO_2X_NV12_MLX) == {0: {0: "X", 1: "NV12"}, 1: {0: "NV12", 1: "X"}}


def test_topology_with_color_codes() -> None:
    colored = TOPO_2X_NV12_MLX.replace("NV12", "\x1b[32mNV12\x1b[0m")
    assert facts.parse_topology(colored)[0][1] == "NV12"


@pytest.mark.parametrize("text", ["", "no header\n", "\tGPU0\tGPU1\nGPU0\t X \tBOGUS\n", "\tGPU0\tGPU1\nGPU0\t X\n"])
def test_topology_that_cannot_be_read_is_an_environment_error(text: str) -> None:
    with pytest.raises(FactsError):
        facts.parse_topology(text)


def test_cuda_version_from_the_summary_header() -> None:
    assert facts.parse_cuda_version(SUMMARY_H200) == "12.4"
    assert facts.parse_cuda_version("| NVIDIA-SMI 580.105.06   Driver Version: 580.105.06   CUDA Version: Not Found |") is None


def test_query_lines() -> None:
    gpus, driver = facts.parse_query("1, NVIDIA H200, 00000000:2A:00.0, 143771, 9.0, 550.144.03\n"
                                     "0, NVIDIA H200, 00000000:18:00.0, 143771, 9.0, 550.144.03\n")
    assert driver == "550.144.03"
    assert [(g.index, g.name, g.pci_bus_id, g.memory_mib, g.compute_cap) for g in gpus] == [
        (0, "NVIDIA H200", "00000000:18:00.0", 143771, "9.0"), (1, "NVIDIA H200", "00000000:2A:00.0", 143771, "9.0")]


def test_query_fields_a_driver_cannot_answer() -> None:
    [gpu], driver = facts.parse_query("0, Tesla T4, 00000000:00:1E.0, 15360, [N/A], 470.57.02\n")
    assert (gpu.compute_cap, gpu.memory_mib, driver) == (None, 15360, "470.57.02")


@pytest.mark.parametrize("line", ["0, NVIDIA H200, 143771\n", "x, NVIDIA H200, 00000000:18:00.0, 143771, 9.0, 1\n",
                                  "0, NVIDIA H200, 00000000:18:00.0, lots, 9.0, 1\n",
                                  "0, NVIDIA H200, 00000000:18:00.0, 143771, sm90, 1\n",
                                  "0, NVIDIA H200, 18:00, 143771, 9.0, 1\n"])
def test_query_lines_that_cannot_be_read(line: str) -> None:
    with pytest.raises(FactsError):
        facts.parse_query(line)


def test_bus_ids_between_nvidia_smi_and_sysfs() -> None:
    assert facts.normalize_bus("00000000:a1:00.0") == "00000000:A1:00.0"
    assert facts.normalize_bus("0000:a1:00.0") == "00000000:A1:00.0"
    assert facts.sysfs_bus("00000000:A1:00.0") == "0000:a1:00.0"


def test_sysfs_nodes_and_gpu_nodes() -> None:
    text = ("/sys/devices/system/node/node0/cpulist:0-31,64-95\n/sys/devices/system/node/node1/cpulist:32-63,96-127\n"
            "/sys/bus/pci/devices/0000:01:00.0/numa_node:0\n/sys/bus/pci/devices/0000:81:00.0/numa_node:-1\n")
    assert facts.parse_sysfs(text) == ({0: "0-31,64-95", 1: "32-63,96-127"}, {"0000:01:00.0": 0, "0000:81:00.0": -1})


def test_a_firmware_without_numa_on_a_one_node_host_means_that_node() -> None:
    live = facts.LiveFacts((), None, None, {}, {0: "0-1"}, {"00000000:01:00.0": -1}, None, ())
    assert live.numa_node("00000000:01:00.0") == 0
    two = facts.LiveFacts((), None, None, {}, {0: "0", 1: "1"}, {"00000000:01:00.0": -1}, None, ())
    assert two.numa_node("00000000:01:00.0") is None


def test_torch_probe_answers() -> None:
    assert facts.parse_torch(0, '{"cuda": "12.8", "arch": ["sm_90", "sm_120"]}\n', "") == ("12.8", ("sm_90", "sm_120"), None)
    assert facts.parse_torch(0, '{"cuda": null, "arch": []}\n', "") == (None, (), None)
    assert facts.parse_torch(1, "", "ModuleNotFoundError: No module named 'torch'\n")[1:] == (
        None, "ModuleNotFoundError: No module named 'torch'")
    assert facts.parse_torch(0, "garbage", "")[1] is None


def _standin():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("standin_nvidia_smi", STANDIN)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MACHINE = {"driver_version": "580.95.05", "cuda_version": "13.0",
           "gpus": [{"pci_bus_id": f"00000000:{b}:00.0", "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
                     "memory_mib": 97887, "compute_cap": "12.0", "cpu_affinity": "0-31,64-95", "numa_affinity": "0"}
                    for b in ("01", "21")],
           "links": [["X", "NODE"], ["NODE", "X"]]}


def test_the_standin_prints_what_the_parsers_read(tmp_path: Path) -> None:
    """The stand-in's formats are the real ones: the same parsers read both."""
    smi = _standin()
    machine = json.loads(json.dumps(MACHINE))
    gpus, driver = facts.parse_query(smi.query(machine, list(facts.QUERY_FIELDS), ["noheader", "nounits"]))
    assert driver == "580.95.05" and [g.memory_mib for g in gpus] == [97887, 97887]
    assert facts.parse_topology(smi.topology(machine)) == {0: {0: "X", 1: "NODE"}, 1: {0: "NODE", 1: "X"}}
    assert facts.parse_cuda_version(smi.summary(machine)) == "13.0"
    header = smi.query(machine, ["index", "memory.total"], [])
    assert header.splitlines()[:2] == ["index, memory.total [MiB]", "0, 97887 MiB"]
    # Its legend is the real capture's, held once (tests/nvidia_smi_outputs.py), not a copy.
    assert smi.topology(machine).endswith("N/A\n" + TOPO_LEGEND) and "NVLinks" not in STANDIN.read_text()


def _runner(answers: dict[str, tuple[int, str, str]]):  # type: ignore[no-untyped-def]
    calls: list[str] = []

    def run(command: str) -> tuple[int, str, str]:
        calls.append(command)
        key = next(k for k in answers if command.startswith(k))
        return answers[key]

    return run, calls


def test_capture_maps_nvidia_smi_indexes_to_bus_ids() -> None:
    smi = _standin()
    run, calls = _runner({
        facts.QUERY: (0, smi.query(MACHINE, list(facts.QUERY_FIELDS), ["noheader", "nounits"]), ""),
        facts.TOPOLOGY: (0, smi.topology(MACHINE), ""),
        "grep": (2, "/sys/devices/system/node/node0/cpulist:0-1\n/sys/bus/pci/devices/0000:01:00.0/numa_node:0\n", ""),
        "nvidia-smi": (0, smi.summary(MACHINE), ""),
        "/opt/sglang/bin/python": (0, '{"cuda": "12.8", "arch": ["sm_120"]}\n', ""),
    })
    live = facts.capture(run, "/opt/sglang/bin/python", ["00000000:C1:00.0"])
    assert live.links == {"00000000:01:00.0": {"00000000:01:00.0": "X", "00000000:21:00.0": "NODE"},
                          "00000000:21:00.0": {"00000000:01:00.0": "NODE", "00000000:21:00.0": "X"}}
    assert (live.driver_version, live.cuda_version, live.torch_cuda, live.torch_arch_list) == (
        "580.95.05", "13.0", "12.8", ("sm_120",))
    assert live.gpu_numa == {"00000000:01:00.0": 0}
    assert "/sys/bus/pci/devices/0000:c1:00.0/numa_node" in next(c for c in calls if c.startswith("grep"))


def test_capture_without_a_driver_is_an_environment_error() -> None:
    run, _ = _runner({facts.QUERY: (9, "", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver")})
    with pytest.raises(FactsError, match="couldn't communicate"):
        facts.capture(run, "/usr/bin/python3")
