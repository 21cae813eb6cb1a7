#!/usr/bin/python3
"""STAND-IN for ``nvidia-smi`` in the live tests: prints the GPUs listed in a data file.

Installed in the test container as /usr/local/bin/nvidia-smi. It answers only the
query gen verify makes (``--query-gpu=index,pci.bus_id --format=csv,noheader``), from
``/etc/standin-nvidia-smi/gpus.csv`` (lines ``index, bus id``), which the tests
write from the inventory and edit to make a GPU disappear or a VM GPU appear.
"""

import sys
from pathlib import Path

GPUS = Path("/etc/standin-nvidia-smi/gpus.csv")
QUERY = ["--query-gpu=index,pci.bus_id", "--format=csv,noheader"]


def main(argv: list) -> int:
    """Print the stand-in GPU list for the one supported query."""
    if argv != QUERY:
        print(f"stand-in nvidia-smi: only {' '.join(QUERY)} is supported", file=sys.stderr)
        return 2
    if not GPUS.exists():
        print("No devices were found")
        return 6
    sys.stdout.write(GPUS.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
