"""Multi-node deployments (generator/plan/cluster.py): one unit per host, checked as a whole.

The example repo's DeepSeek-V3 BF16 runs at TP=16 over hosts gpu-a (rank 0) and gpu-b.
Each broken variant below must give exactly the listed diagnostics, and the same ones
from both render paths: ``pipeline.run`` (every host loaded together) and
``pipeline.render_fleet`` (each host rendered on its own, peers read from hosts/).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

import pytest

from generator.plan.cluster import dist_init_addr
from generator.pipeline.fleet import render_fleet, run
from generator.emit.render import HostRender

MODEL = "models/deepseek-v3-bf16.yaml"
A, B = "hosts/gpu-a.yaml", "hosts/gpu-b.yaml"
SAME = "the nodes of model 'deepseek-v3-bf16' must pass the same flags except --node-rank"
SAME_ENV = "the nodes of model 'deepseek-v3-bf16' must run with the same environment"
SVC_TAIL = "    allow_cross_numa: true\n"

Edit = Callable[[str], str]


def _replace(old: str, new: str) -> Edit:
    def edit(text: str) -> str:
        assert old in text, f"{old!r} not in the example"
        return text.replace(old, new, 1)
    return edit


def _drop(pattern: str) -> Edit:
    def edit(text: str) -> str:
        out, n = re.subn(pattern, "", text, count=1)
        assert n == 1, f"{pattern!r} not in the example"
        return out
    return edit


def _apply(root: Path, edits: dict[str, Edit]) -> None:
    for rel, edit in edits.items():
        path = root / rel
        path.write_text(edit(path.read_text()))


def _renders(root: Path) -> dict[str, HostRender]:
    result = run(root, None)
    assert result.ok, [str(d) for d in result.diagnostics]
    return {r.host.name: r for r in result.renders}


def _argv(render: HostRender) -> tuple[str, ...]:
    [svc] = render.services
    return svc.argv.argv


def _flag(argv: tuple[str, ...], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_each_host_gets_its_rank_and_rank0s_address(repo_root: Path) -> None:
    renders = _renders(repo_root)
    a, b = _argv(renders["gpu-a"]), _argv(renders["gpu-b"])
    assert [_flag(a, f) for f in ("--nnodes", "--node-rank", "--dist-init-addr", "--tensor-parallel-size")] \
        == ["2", "0", "192.0.2.10:50000", "16"]
    assert [_flag(b, f) for f in ("--nnodes", "--node-rank", "--dist-init-addr", "--tensor-parallel-size")] \
        == ["2", "1", "192.0.2.10:50000", "16"]
    # Same flags everywhere but the rank.
    i = a.index("--node-rank")
    assert a[:i + 1] + a[i + 2:] == b[:i + 1] + b[i + 2:]
    for name in ("gpu-a", "gpu-b"):
        [svc] = renders[name].services
        env = dict(svc.environment)
        assert env["NCCL_SOCKET_IFNAME"] == env["GLOO_SOCKET_IFNAME"] == "enp26s0np0"
        assert env["CUDA_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"
        assert len(svc.placement.gpus) == 8  # tp 16 / 2 nodes


def test_rank1_unit_names_rank0_inventory_as_a_source(repo_root: Path) -> None:
    unit_b = (repo_root / "output/gpu-b/etc/systemd/system/sglang-deepseek.service").read_text()
    unit_a = (repo_root / "output/gpu-a/etc/systemd/system/sglang-deepseek.service").read_text()
    assert "# Sources: hosts/gpu-b.yaml, models/deepseek-v3-bf16.yaml, hosts/gpu-a.yaml\n" in unit_b
    assert "# Sources: hosts/gpu-a.yaml, models/deepseek-v3-bf16.yaml\n" in unit_a
    assert "  --node-rank 1 \\\n  --dist-init-addr 192.0.2.10:50000 \\\n" in unit_b


@pytest.mark.parametrize(("address", "expected"), [
    ("192.0.2.10", "192.0.2.10:50000"),
    ("2001:db8::10", "[2001:db8::10]:50000"),
    ("node0.example.net", "node0.example.net:50000"),
])
def test_dist_init_addr_form(address: str, expected: str) -> None:
    assert dist_init_addr(address, 50000) == expected


def test_ipv6_rank0_is_bracketed_in_every_unit(repo_copy: Path) -> None:
    _apply(repo_copy, {A: _replace("address: 192.0.2.10", "address: 2001:db8::10")})
    renders = _renders(repo_copy)
    assert {_flag(_argv(r), "--dist-init-addr") for r in renders.values() if r.host.name.startswith("gpu-")} \
        == {"[2001:db8::10]:50000"}


def test_rank0_address_change_reaches_rank1_through_the_fleet(repo_copy: Path) -> None:
    """gpu-b's unit depends on gpu-a's inventory: an edit there reaches gpu-b's render."""
    assert render_fleet(repo_copy, None).ok
    _apply(repo_copy, {A: _replace("address: 192.0.2.10", "address: 192.0.2.99")})
    result = render_fleet(repo_copy, ["gpu-b"])
    [tree] = result.trees
    [unit] = [f.text for f in tree.files if f.relpath.endswith(".service")]
    assert "--dist-init-addr 192.0.2.99:50000" in unit


CASES: dict[str, tuple[dict[str, Edit], list[str]]] = {
    "service flag on one node": (
        {B: _replace(SVC_TAIL, SVC_TAIL + "    args: {--chunked-prefill-size: 4096}\n")},
        [f"{A}:32:12: error[P028]: service 'deepseek' does not pass --chunked-prefill-size, but host 'gpu-b' "
         f"(rank 1) passes --chunked-prefill-size 4096 ({B}:37:12); {SAME}",
         f"{B}:37:12: error[P028]: service 'deepseek' passes --chunked-prefill-size 4096, but host 'gpu-a' "
         f"(rank 0) does not pass it ({A}); {SAME}"]),
    "service flag with different values": (
        {A: _replace(SVC_TAIL, SVC_TAIL + "    args: {--chunked-prefill-size: 8192}\n"),
         B: _replace(SVC_TAIL, SVC_TAIL + "    args: {--chunked-prefill-size: 4096}\n")},
        [f"{A}:37:12: error[P028]: service 'deepseek' passes --chunked-prefill-size 8192, but host 'gpu-b' "
         f"(rank 1) passes --chunked-prefill-size 4096 ({B}:37:12); {SAME}",
         f"{B}:37:12: error[P028]: service 'deepseek' passes --chunked-prefill-size 4096, but host 'gpu-a' "
         f"(rank 0) passes --chunked-prefill-size 8192 ({A}:37:12); {SAME}"]),
    "environment on one node": (
        {B: _replace(SVC_TAIL, SVC_TAIL + "    env: {NCCL_DEBUG: INFO}\n")},
        [f"{A}:32:12: error[P029]: service 'deepseek' does not set NCCL_DEBUG, but host 'gpu-b' (rank 1) "
         f"sets NCCL_DEBUG=INFO ({B}:37:23); {SAME_ENV}",
         f"{B}:37:23: error[P029]: service 'deepseek' sets NCCL_DEBUG=INFO, but host 'gpu-a' (rank 0) "
         f"does not ({A}); {SAME_ENV}"]),
    "different SGLang pins": (
        {B: _replace('pin: "0.5.9"', 'pin: "0.5.23"')},
        [f"{A}:28:8: error[P027]: host 'gpu-a' runs SGLang 0.5.9 but host 'gpu-b' (rank 1) runs 0.5.23 "
         f"({B}:28:8); every node of model 'deepseek-v3-bf16' must run the same SGLang",
         f"{B}:28:8: error[P027]: host 'gpu-b' runs SGLang 0.5.23 but host 'gpu-a' (rank 0) runs 0.5.9 "
         f"({A}:28:8); every node of model 'deepseek-v3-bf16' must run the same SGLang"]),
    "listed host without inventory, serving host not listed": (
        {MODEL: _replace("[gpu-a, gpu-b]", "[gpu-a, gpu-c]")},
        [f"{A}:32:12: error[P023]: host 'gpu-c' (rank 1 of model 'deepseek-v3-bf16', {MODEL}:19:18): "
         "its inventory hosts/gpu-c.yaml does not exist",
         f"{B}:32:12: error[P020]: service 'deepseek' runs multi-node model 'deepseek-v3-bf16', but host "
         f"'gpu-b' is not in its multinode.hosts ({MODEL}:19:10: gpu-a, gpu-c) (add the host there, in rank order)"]),
    "listed host runs no service": (
        {B: _drop(r"services:\n(?:.*\n)*")},
        [f"{A}:32:12: error[P024]: host 'gpu-b' (rank 1 of model 'deepseek-v3-bf16') runs no service "
         f"with it ({B})",
         f"{B}:4:7: error[P024]: host 'gpu-b' is rank 1 of model 'deepseek-v3-bf16' ({MODEL}:19:18) but runs "
         "no service with it (add a service with model: deepseek-v3-bf16, or remove 'gpu-b' from multinode.hosts)"]),
    "rank 0 without network": (
        {A: _drop(r"network:\n(?:  .*\n)+")},
        [f"{A}:28:12: error[P022]: host 'gpu-a' runs multi-node model 'deepseek-v3-bf16' but its inventory "
         "has no network section (add network: {address: <IP other nodes reach>, interface: <NIC name>})",
         f"{B}:32:12: error[P022]: rank 0 host 'gpu-a' has no network section in {A}: --dist-init-addr "
         "takes its network.address"]),
    "host listed twice": (
        {MODEL: _replace("[gpu-a, gpu-b]", "[gpu-a, gpu-a]")},
        [f"{A}:32:12: error[P025]: host 'gpu-a' is listed twice in multinode.hosts of model 'deepseek-v3-bf16' "
         f"(ranks 0 and 1, {MODEL}:19:10)",
         f"{B}:32:12: error[P020]: service 'deepseek' runs multi-node model 'deepseek-v3-bf16', but host "
         f"'gpu-b' is not in its multinode.hosts ({MODEL}:19:10: gpu-a, gpu-a) (add the host there, in rank order)"]),
    "init port is a service port on rank 0": (
        {MODEL: _replace("port: 50000", "port: 30000")},
        [f"{A}:33:11: error[P026]: port 30000 of service 'deepseek' is the --dist-init-addr port of model "
         f"'deepseek-v3-bf16' ({MODEL}:20:9) on its rank 0 host 'gpu-a' (write `port: 30001`: no service of "
         "host 'gpu-a' uses it)"]),
    "a node gives too few GPUs": (
        {B: _replace(SVC_TAIL, SVC_TAIL + "    gpus: [0, 1, 2, 3]\n")},
        [f"{B}:37:11: error[P004]: service 'deepseek' lists 4 GPU(s), but model 'deepseek-v3-bf16' needs 8 "
         "(tp 16 x pp 1 over 2 nodes)"]),
    "tp larger than both nodes": (
        {MODEL: _replace("tp: 16", "tp: 24")},
        [f"{h}:32:12: error[P006]: service 'deepseek' needs 12 GPU(s), but host '{n}' has only 8 free "
         "(0 passed through to VMs, 0 used by other services)" for h, n in ((A, "gpu-a"), (B, "gpu-b"))]),
    "rank written by hand": (
        {MODEL: _replace("memory:", "args: {--node-rank: 1}\nmemory:")},
        # gpu-b is rank 1 itself: the same value twice is a warning there
        [f"{MODEL}:23:8: error[F008]: '--node-rank' sets '--node-rank' again: setting 'node_rank' already "
         f"set it at {A}:32:12, to another value (SGLang would take the last one); keep one",
         f"{MODEL}:23:8: warning[F106]: '--node-rank' sets '--node-rank' again: setting 'node_rank' already "
         f"set it at {B}:32:12, to the same value; this one is left out: keep one"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_cross_host_errors(case: str, repo_copy: Path) -> None:
    edits, expected = CASES[case]
    _apply(repo_copy, edits)
    together = [str(d) for d in run(repo_copy, None).diagnostics]
    alone = [str(d) for d in render_fleet(repo_copy, None, jobs=1).diagnostics]
    assert together == expected
    assert alone == expected


@pytest.mark.parametrize("case", ["service flag on one node", "different SGLang pins", "rank 0 without network"])
def test_one_host_alone_is_as_strict(case: str, repo_copy: Path) -> None:
    """``--host gpu-b`` reports gpu-b's side of a cross-host problem and renders nothing."""
    edits, expected = CASES[case]
    _apply(repo_copy, edits)
    result = render_fleet(repo_copy, ["gpu-b"], jobs=1)
    assert [str(d) for d in result.diagnostics] == [e for e in expected if e.startswith(B)]
    assert not result.trees


# Runs inside the SGLang venv: argv lists as JSON on stdin, the parsed multi-node settings out.
PARSE = r'''
import argparse, contextlib, json, sys
with contextlib.redirect_stdout(sys.stderr):  # SGLang may print while importing
    from sglang.srt.server_args import ServerArgs
out = []
for argv in json.load(sys.stdin):
    parser = argparse.ArgumentParser(allow_abbrev=False)
    ServerArgs.add_cli_args(parser)
    ns = parser.parse_args(argv)
    tp = getattr(ns, "tp_size", None) or getattr(ns, "tensor_parallel_size", None)
    out.append([ns.nnodes, ns.node_rank, ns.dist_init_addr, tp])
print("PARSED " + json.dumps(out))
'''


@pytest.mark.sglang
@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_real_sglang_parses_each_node_as_meant(pin: str, repo_copy: Path) -> None:
    import json
    import sglang_worker

    for rel in (A, B):
        _apply(repo_copy, {rel: _replace('pin: "0.5.9"', f'pin: "{pin}"')})
    renders = _renders(repo_copy)
    argvs = [list(_argv(renders[n])[3:]) for n in ("gpu-a", "gpu-b")]  # after python -m sglang.launch_server
    proc = sglang_worker.run(pin, PARSE, json.dumps(argvs), "test_multinode.PARSE")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("PARSED ")]
    assert json.loads(line.removeprefix("PARSED ")) == [[2, 0, "192.0.2.10:50000", 16],
                                                        [2, 1, "192.0.2.10:50000", 16]]
