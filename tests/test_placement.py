"""Unit tests for generator.plan.placement: GPUs, NUMA, ports, paths and memory fit."""

from __future__ import annotations

from pathlib import Path

from repo_builder import host_yaml, model_yaml, write_repo

from generator.errors import Diagnostics
from generator.plan.placement import MAX_SEARCH_SERVICES, Placement, free_port, place_host
from generator.load.sources import load_sources


def _place(tmp_path: Path, services: str, models: dict[str, str], **host_kw: object
           ) -> tuple[tuple[Placement, ...], list[str]]:
    write_repo(tmp_path, {"h": host_yaml(services=services, **host_kw)}, models)
    diags = Diagnostics()
    sources = load_sources(tmp_path, diags)
    placements = place_host(sources.hosts["h"], sources.models, diags) if "h" in sources.hosts else ()
    return placements, [str(d) for d in diags.sorted()]


def test_automatic_placement_stays_in_one_numa_node(tmp_path: Path) -> None:
    svc = "  - {name: a, model: m2, port: 1}\n  - {name: b, model: m4, port: 2}\n"
    placed, errors = _place(tmp_path, svc, {"m2": model_yaml("m2", tp=2), "m4": model_yaml("m4", tp=4)})
    assert errors == []
    # a takes the fullest node that fits (node 0: GPUs 0,1); b cannot fit node 0 any more.
    assert [(p.service.name, p.cuda_visible_devices, p.numa_nodes, p.cpus) for p in placed] == [
        ("a", "0,1", (0,), "0-7"), ("b", "4,5,6,7", (1,), "8-15")]


def test_vm_gpus_and_other_services_gpus_are_never_used(tmp_path: Path) -> None:
    svc = ("  - {name: a, model: m, port: 1, gpus: [4]}\n"
           "  - {name: b, model: m, port: 2, gpus: [0]}\n"
           "  - {name: c, model: m, port: 3, gpus: [0]}\n"
           "  - {name: d, model: m, port: 4, gpus: [9]}\n")
    _, errors = _place(tmp_path, svc, {"m": model_yaml("m")}, vm=(4, 5, 6, 7))
    fix = " (write `gpus: [1]`: free on host 'h' (NUMA node 0))"  # 0 is b's, 4-7 the VM's
    assert errors == [
        "hosts/h.yaml:22:41: error[P002]: GPU 4 is passed through to VM 'vm1' and cannot serve 'a'" + fix,
        "hosts/h.yaml:24:41: error[P003]: GPU 0 is already used by service 'b'" + fix,
        "hosts/h.yaml:25:41: error[P001]: GPU 9 is not in the inventory of host 'h' (GPUs: 0, 1, 2, 3, 4, 5, 6, 7)"
        + fix,
    ]


def test_a_taken_gpu_suggests_a_whole_free_list_in_one_numa_node(tmp_path: Path) -> None:
    """TP 2 on GPU 0 (a's): node 0 keeps 1 free beside a's 0 and b's 2, 3, so node 1's 4, 5 (best fit)."""
    svc = ("  - {name: a, model: m1, port: 1, gpus: [0]}\n"
           "  - {name: b, model: m2, port: 2, gpus: [2, 3]}\n"
           "  - {name: c, model: m2, port: 3, gpus: [0, 1]}\n")
    _, errors = _place(tmp_path, svc, {"m1": model_yaml("m1"), "m2": model_yaml("m2", tp=2)})
    assert errors == ["hosts/h.yaml:22:42: error[P003]: GPU 0 is already used by service 'a' "
                      "(write `gpus: [4, 5]`: free on host 'h' (NUMA node 1))"]


def test_no_free_list_says_what_is_free(tmp_path: Path) -> None:
    svc = ("  - {name: a, model: m4, port: 1, gpus: [0, 1, 2, 3]}\n"
           "  - {name: b, model: m4, port: 2, gpus: [0, 1, 2, 4]}\n")
    _, errors = _place(tmp_path, svc, {"m4": model_yaml("m4", tp=4)}, vm=(5, 6, 7))
    hint = ("(host 'h' has 1 GPU(s) free (4) and model 'm4' needs 4: free GPUs from another service or a VM "
            "first)")
    assert errors == [f"hosts/h.yaml:23:{col}: error[P003]: GPU {i} is already used by service 'a' {hint}"
                      for col, i in ((42, 0), (45, 1), (48, 2))]


def test_crossing_numa_is_an_error_when_one_node_could_hold_the_group(tmp_path: Path) -> None:
    svc = "  - {name: a, model: m, port: 1, gpus: [2, 3, 4, 5]}\n"
    _, errors = _place(tmp_path, svc, {"m": model_yaml("m", tp=4)})
    assert errors == [
        "hosts/h.yaml:20:40: error[P005]: GPUs 2, 3, 4, 5 span NUMA nodes 0, 1, but one node has 4 free GPUs "
        "(pick GPUs of one node, or set allow_cross_numa: true)"]
    svc = "  - {name: a, model: m, port: 1, gpus: [2, 3, 4, 5], allow_cross_numa: true}\n"
    placed, errors = _place(tmp_path, svc, {"m": model_yaml("m", tp=4)})
    assert errors == [] and placed[0].cpus is None


def test_tp8_on_two_nodes_of_four_needs_the_manifest_to_allow_it(tmp_path: Path) -> None:
    placed, errors = _place(tmp_path, "  - {name: a, model: m, port: 1}\n", {"m": model_yaml("m", tp=8)})
    assert errors == ["hosts/h.yaml:20:22: error[P005]: service 'a' needs 8 GPUs; no NUMA node has that many "
                      "free, so they span nodes 0, 1 (set allow_cross_numa: true to accept that)"]
    placed, errors = _place(tmp_path, "  - {name: a, model: m, port: 1, allow_cross_numa: true}\n",
                            {"m": model_yaml("m", tp=8)})
    assert errors == [] and placed[0].cuda_visible_devices == "0,1,2,3,4,5,6,7"


def test_not_enough_gpus_and_wrong_count(tmp_path: Path) -> None:
    svc = "  - {name: a, model: m, port: 1}\n  - {name: b, model: m, port: 2, gpus: [0, 1]}\n"
    _, errors = _place(tmp_path, svc, {"m": model_yaml("m", tp=4)}, vm=(4, 5, 6, 7))
    assert errors == [
        "hosts/h.yaml:22:22: error[P006]: service 'a' needs 4 GPU(s), but host 'h' has only 2 free "
        "(4 passed through to VMs, 2 used by other services)",
        "hosts/h.yaml:23:40: error[P004]: service 'b' lists 2 GPU(s), but model 'm' needs 4 (tp 4 x pp 1)",
    ]


def test_same_port_twice_suggests_a_free_port(tmp_path: Path) -> None:
    """The fix names a port no service of the host uses: 30001 is c's, so 30002."""
    svc = ("  - {name: a, model: m, port: 30000}\n  - {name: b, model: m, port: 30000}\n"
           "  - {name: c, model: m, port: 30001}\n")
    _, errors = _place(tmp_path, svc, {"m": model_yaml("m", tp=2)})
    assert errors == ["hosts/h.yaml:21:31: error[P007]: port 30000 is already used by service 'a' on host 'h' "
                      "(write `port: 30002`: no service of host 'h' uses it)"]


def test_a_collision_on_the_last_port_suggests_one_below(tmp_path: Path) -> None:
    svc = "  - {name: a, model: m, port: 65535}\n  - {name: b, model: m, port: 65535}\n"
    _, errors = _place(tmp_path, svc, {"m": model_yaml("m")})
    assert errors == ["hosts/h.yaml:21:31: error[P007]: port 65535 is already used by service 'a' on host 'h' "
                      "(write `port: 65534`: no service of host 'h' uses it)"]


def test_retired_paths_and_model_root(tmp_path: Path) -> None:
    model = ("name: m\nweights: {path: /data/m, size_gb: 1}\n"
             "speculative: {algorithm: EAGLE3, draft_model_path: /srv/d}\n"
             "args: {--download-dir: /data/cache}\nenv: {HF_HOME: /data/hf}\n")
    _, errors = _place(tmp_path, "  - {name: a, model: m, port: 1}\n", {"m": model})
    assert errors == [
        "models/m.yaml:2:17: error[P008]: '/data/m' is on the retired volume /data of host 'h' (service 'a') "
        "(move it under /shared/models)",
        "models/m.yaml:3:52: error[P009]: '/srv/d' is not under the model root /shared/models of host 'h' "
        "(service 'a')",
        "models/m.yaml:4:24: error[P008]: '/data/cache' is on the retired volume /data of host 'h' (service 'a') "
        "(move it under /shared/models)",
        "models/m.yaml:5:16: error[P008]: '/data/hf' is on the retired volume /data of host 'h' (service 'a') "
        "(move it under /shared/models)",
    ]


def test_inventory_index_must_match_pci_order(tmp_path: Path) -> None:
    host = host_yaml().replace("index: 0,", "index: 99,").replace("index: 1,", "index: 0,").replace(
        "index: 99,", "index: 1,")
    write_repo(tmp_path, {"h": host}, {})
    diags = Diagnostics()
    sources = load_sources(tmp_path, diags)
    place_host(sources.hosts["h"], sources.models, diags)
    assert [str(d) for d in diags.items] == [
        "hosts/h.yaml:4:13: error[P012]: GPU with PCI bus id 00000000:01:00.0 is CUDA device 0 in PCI bus "
        "order, but the inventory calls it 1"]


def _render_qwen(repo: Path, numa_args: str) -> tuple[str, list[str]]:
    from generator.pipeline.fleet import run

    host = repo / "hosts" / "llm-two.yaml"
    host.write_text(host.read_text().replace("    gpus: [0, 1, 2, 3]\n", f"    gpus: [0, 1, 2, 3]\n{numa_args}"))
    result = run(repo, ["llm-two"])
    unit = next((f.text for t in result.trees for f in t.files if f.relpath.endswith("sglang-qwen.service")), "")
    return unit, [str(d) for d in result.diagnostics]


def test_gen_binds_the_unit_to_the_gpus_numa_node(repo_copy: Path) -> None:
    unit, diags = _render_qwen(repo_copy, "")
    assert diags == []
    assert "CPUAffinity=0-31,64-95\nNUMAPolicy=bind\nNUMAMask=0\n" in unit


def test_sglang_numa_flag_replaces_the_units_binding(repo_copy: Path) -> None:
    """SGLang binds each GPU's process itself: the unit must not narrow it further."""
    unit, diags = _render_qwen(repo_copy, "    args: {--numa-node: [0, 0, 0, 0]}\n")
    assert diags == []
    assert "--numa-node 0 0 0 0" in unit.replace(" \\\n", " ")
    assert "CPUAffinity=" not in unit and "NUMAPolicy=" not in unit


def test_sglang_numa_flag_must_name_each_gpus_node(repo_copy: Path) -> None:
    _, diags = _render_qwen(repo_copy, "    args: {--numa-node: [0, 1]}\n")
    assert diags == ["hosts/llm-two.yaml:40:12: error[P013]: --numa-node lists 2 node(s) for 4 GPU(s) of "
                     "service 'qwen'; SGLang indexes it by GPU (write 0 0 0 0)"]


def test_sglang_numa_flag_with_other_nodes_is_an_error_at_the_flag(repo_copy: Path) -> None:
    _, diags = _render_qwen(repo_copy, "    args: {--numa-node: [0, 0, 1, 1]}\n")
    assert diags == ["hosts/llm-two.yaml:40:12: error[P013]: --numa-node 0 0 1 1 does not match the NUMA nodes of "
                     "GPUs 0,1,2,3 (0 0 0 0) (write 0 0 0 0, or drop the flag and let gen bind the unit)"]


def test_too_many_gpus_listed_is_an_error_too(tmp_path: Path) -> None:
    """P004 in both directions: more GPUs than the model uses would sit idle, reserved."""
    svc = "  - {name: a, model: m, port: 1, gpus: [0, 1, 2, 3]}\n"
    _, errors = _place(tmp_path, svc, {"m": model_yaml("m", tp=2)})
    assert errors == [
        "hosts/h.yaml:20:40: error[P004]: service 'a' lists 4 GPU(s), but model 'm' needs 2 (tp 2 x pp 1)"]
    _, errors = _place(tmp_path, "  - {name: a, model: m, port: 1, gpus: [0, 1]}\n", {"m": model_yaml("m", tp=2)})
    assert errors == []


def test_best_fit_beyond_the_exhaustive_search(tmp_path: Path) -> None:
    """Past MAX_SEARCH_SERVICES automatic services each takes the fullest node that still fits.

    Nodes of 4 and 12 GPUs, twelve 1-GPU services, then one of 4: best fit fills node 0 first
    and leaves 4 GPUs of node 1 for the last; worst fit (or first fit on the bigger node)
    would scatter them and make the 4-GPU service cross nodes (P005).
    """
    assert MAX_SEARCH_SERVICES < 13
    svc = "".join(f"  - {{name: s{i:02d}, model: m1, port: {i + 1}}}\n" for i in range(12))
    svc += "  - {name: s12, model: m4, port: 13}\n"
    placed, errors = _place(tmp_path, svc, {"m1": model_yaml("m1"), "m4": model_yaml("m4", tp=4)},
                            gpus_per_node=(4, 12))
    assert errors == []
    assert [p.cuda_visible_devices for p in placed] == [str(i) for i in range(12)] + ["12,13,14,15"]
    assert [p.numa_nodes for p in placed] == [(0,)] * 4 + [(1,)] * 9


def test_the_suggested_port_skips_taken_ones(tmp_path: Path) -> None:
    """A multi-node init port (P026's) is taken too: free_port never offers it."""
    write_repo(tmp_path, {"h": host_yaml(services="  - {name: a, model: m, port: 30000}\n")}, {"m": model_yaml("m")})
    host = load_sources(tmp_path, Diagnostics()).hosts["h"]
    assert free_port(host, 30000) == 30001
    assert free_port(host, 29999, taken=[30001]) == 30002  # 30000 is a's, 30001 taken
