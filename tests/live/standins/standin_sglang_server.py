"""STAND-IN for ``python -m sglang.launch_server`` in the live tests (no GPU, no model here).

Installed in the test container as ``sglang/launch_server.py`` of a stand-in venv, so
the rendered unit's ExecStart runs it unchanged. It does what the live checks can see
of a real SGLang server, and nothing more:

* builds an argparse parser from the pinned catalog (``catalog.json`` beside the
  package, copied from ``catalogs/sglang/<pin>.json``) and parses its argv with it: an
  unknown flag or a bad choice exits 2 with argparse's usage text, as SGLang does;
* refuses to start (exit 1, a traceback-like message) without ``config.json`` in
  ``--model-path``, or when the fault file ``/etc/standin-sglang/fault`` says ``crash``
  (how the tests make a restart loop), or ``crash-if WORDS`` and its argv holds WORDS (a
  new version that crashes while the previous one starts); ``hold PATH`` there makes it
  keep PATH open;
* serves ``/health`` (503 while "loading" for ``LOAD_SECONDS``, or the seconds written in
  ``/etc/standin-sglang/load-seconds``: how long a real model takes to load; then 200),
  ``/v1/models`` (naming ``--served-model-name``, else ``--model-path``, like SGLang) and
  ``/get_server_info`` on ``--host``/``--port``. The last has SGLang's shape (server args,
  ``max_total_num_tokens``, ``internal_states[0].memory_usage``) but figures no stand-in
  can measure: those of ``SERVER_INFO_FILE`` (JSON the tests write), else its parsed
  ``--mem-fraction-static`` and nothing more, and ``"standin"`` says whose they are;
* multi-node (``--nnodes`` > 1), like SGLang's distributed init: rank 0 listens on the
  ``--dist-init-addr`` port and its ``/health`` says 503 until every other rank has
  connected; a rank >= 1 connects to that address (retrying, as torch's store does) and
  only then serves its own small health server (``/health`` 200), as SGLang's
  ``launch_dummy_health_check_server`` does; before that nothing listens.

Standard library only: the container's Python has nothing else.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CATALOG = Path(__file__).resolve().parent.parent / "standin_catalog.json"
FAULT_FILE = Path("/etc/standin-sglang/fault")
LOAD_SECONDS_FILE = Path("/etc/standin-sglang/load-seconds")
SERVER_INFO_FILE = Path("/etc/standin-sglang/server_info.json")
STANDIN_MARK = "gen's live-test stand-in: these figures were given to it, not measured on a GPU"
LOAD_SECONDS = 1.0


def load_seconds() -> float:
    """How long /health says 503 after the start: the file's number when there is one."""
    try:
        return float(LOAD_SECONDS_FILE.read_text().strip())
    except (OSError, ValueError):
        return LOAD_SECONDS
TYPES = {"int": int, "float": float, "str": str, None: None}


def build_parser(catalog: dict) -> argparse.ArgumentParser:
    """An ArgumentParser with every action of the catalog, as SGLang's own would have."""
    parser = argparse.ArgumentParser(prog="sglang.launch_server",
                                     allow_abbrev=catalog["parser"]["allow_abbrev"])
    add_catalog_args(parser, catalog)
    return parser


def add_catalog_args(parser: argparse.ArgumentParser, catalog: dict) -> None:
    """Add every action of the catalog to PARSER (SGLang's ``ServerArgs.add_cli_args``)."""
    for action in catalog["actions"]:
        kind, opts = action["kind"], action["option_strings"]
        if kind == "help":
            continue  # argparse adds -h/--help itself
        kwargs: dict = {"dest": action["dest"], "default": action["default"]}
        if kind in ("store_true", "store_false"):
            kwargs["action"] = kind
        elif kind == "boolean_optional":
            kwargs["action"] = argparse.BooleanOptionalAction
            opts = [o for o in opts if not o.startswith("--no-")]
        elif action["nargs"] == 0:  # deprecated and other flags that take no value
            kwargs.update(action="store_const", const=True)
        else:
            kwargs["type"] = TYPES.get(action["type"], str)
            if action["nargs"] is not None:
                kwargs["nargs"] = action["nargs"]
            if action["choices"] is not None:
                kwargs["choices"] = action["choices"]
        if (action.get("deprecated") or {}).get("fatal"):
            kwargs["action"] = _refuse(action["deprecated"]["message"])
            kwargs.pop("type", None)
            kwargs.pop("choices", None)
        parser.add_argument(*opts, **kwargs)


def _refuse(message: str) -> type[argparse.Action]:
    """An action that rejects its flag the way SGLang's fatal DeprecatedAction does (exit 2)."""

    class Refuse(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
            parser.error(message)

    return Refuse


def served_name(args: argparse.Namespace) -> str:
    """What /v1/models names: --served-model-name, else the model path (SGLang's rule)."""
    return getattr(args, "served_model_name", None) or args.model_path


class Peers:
    """Rank 0's view of the distributed init: how many other ranks have connected."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.joined = 0

    @property
    def complete(self) -> bool:
        """True once every other rank connected."""
        return self.joined >= self.expected


def listen_for_ranks(addr: str, peers: Peers) -> None:
    """Rank 0: accept the other ranks on the dist-init port (in a thread, forever)."""
    port = int(addr.rsplit(":", 1)[1])
    server = socket.create_server(("0.0.0.0", port), reuse_port=False)

    def accept() -> None:
        conns = []
        while True:
            conn, peer = server.accept()
            conns.append(conn)  # held open: the group lives as long as its connections
            peers.joined += 1
            print(f"stand-in sglang rank 0: rank joined from {peer[0]} ({peers.joined}/{peers.expected})",
                  flush=True)

    threading.Thread(target=accept, daemon=True).start()


def join_rank0(addr: str, rank: int) -> socket.socket:
    """Rank >= 1: connect to rank 0's dist-init address, retrying until it answers."""
    host, port = addr.rsplit(":", 1)
    while True:
        try:
            conn = socket.create_connection((host.strip("[]"), int(port)), timeout=5)
            print(f"stand-in sglang rank {rank}: joined rank 0 at {addr}", flush=True)
            return conn
        except OSError as exc:
            print(f"stand-in sglang rank {rank}: waiting for rank 0 at {addr}: {exc}", flush=True)
            time.sleep(1)


def server_info(args: argparse.Namespace) -> dict:
    """The /get_server_info document: the parsed args, then the test's figures (SERVER_INFO_FILE)."""
    info: dict = {key: value for key, value in vars(args).items() if isinstance(value, (int, float, str, bool))}
    info["standin"] = STANDIN_MARK
    if SERVER_INFO_FILE.exists():
        info.update(json.loads(SERVER_INFO_FILE.read_text()))
    return info


def make_handler(name: str, started: float, peers: Peers | None = None, loading: float = LOAD_SECONDS,
                 args: argparse.Namespace | None = None) -> type[BaseHTTPRequestHandler]:
    """A request handler answering /health, /v1/models and /get_server_info for model NAME
    (rank 0: once PEERS joined), healthy LOADING seconds after STARTED."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/health":
                ready = time.monotonic() - started >= loading and (peers is None or peers.complete)
                self._send(200 if ready else 503, b"" if ready else b"loading")
            elif self.path == "/v1/models":
                body = {"object": "list", "data": [
                    {"id": name, "object": "model", "owned_by": "sglang", "root": name}]}
                self._send(200, json.dumps(body).encode())
            elif self.path == "/get_server_info" and args is not None:
                self._send(200, json.dumps(server_info(args)).encode())
            else:
                self._send(404, b"not found")

        def _send(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass  # the journal would fill with health polls

    return Handler


def main(argv: list[str]) -> int:
    """Parse like SGLang, then serve until stopped."""
    catalog = json.loads(CATALOG.read_text())
    args = build_parser(catalog).parse_args(argv)  # exits 2 on a flag the catalog lacks
    print(f"stand-in sglang {catalog['sglang']['version']}: argv accepted, pid {os.getpid()}", flush=True)
    if getattr(args, "config", None):
        # SGLang's --config reads a YAML map of flag names; the stand-in reads it too (one
        # "key: value" per line) and logs the key names it got, never the values.
        with open(args.config, encoding="utf-8") as fh:
            keys = sorted(ln.split(":", 1)[0].strip() for ln in fh if ":" in ln and not ln.startswith("#"))
        print(f"stand-in sglang: --config {args.config} read, keys: {', '.join(keys)}", flush=True)
    fault = FAULT_FILE.read_text().strip() if FAULT_FILE.exists() else ""
    if fault.startswith("hold "):
        # Keep a file open the way a server reading old weights would (retired-path test).
        held = open(fault.split(" ", 1)[1], "rb")  # noqa: SIM115 (held for the process's life)
        print(f"stand-in sglang: holding {held.name} open", flush=True)
    if fault == "crash" or (fault.startswith("crash-if ") and fault.split(" ", 1)[1] in " ".join(argv)):
        print("Traceback (most recent call last):\n  stand-in fault injected by the live tests\n"
              "RuntimeError: stand-in crash (restart-loop test)", file=sys.stderr, flush=True)
        return 1
    if not (Path(args.model_path) / "config.json").is_file():
        print(f"OSError: {args.model_path} does not appear to have a file named config.json",
              file=sys.stderr, flush=True)
        return 1
    nnodes, rank = int(getattr(args, "nnodes", 1) or 1), int(getattr(args, "node_rank", 0) or 0)
    peers = None
    if nnodes > 1 and rank == 0:
        peers = Peers(nnodes - 1)
        listen_for_ranks(args.dist_init_addr, peers)
    elif nnodes > 1:
        held = join_rank0(args.dist_init_addr, rank)  # noqa: F841 (kept open while serving)
    server = ThreadingHTTPServer((args.host, args.port),
                                 make_handler(served_name(args), time.monotonic(), peers, load_seconds(), args))
    print(f"stand-in sglang: serving {served_name(args)} on {args.host}:{args.port}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
