"""ssh ProxyCommand relay: copy stdin/stdout to HOST:PORT (run inside a netns by nsenter)."""

from __future__ import annotations

import os
import socket
import sys
import threading


def main(host: str, port: int) -> None:
    """Relay until either side closes."""
    sock = socket.create_connection((host, port))

    def upstream() -> None:
        while data := os.read(0, 65536):
            sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)

    threading.Thread(target=upstream, daemon=True).start()
    while data := sock.recv(65536):
        os.write(1, data)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
