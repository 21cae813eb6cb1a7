"""STAND-IN for ``sglang.srt.server_args`` in the live tests: what gen's preflight calls.

Installed as ``sglang/srt/server_args.py`` of the stand-in venv, so the on-host
``preflight`` mode runs unchanged against the stand-in: ``ServerArgs.add_cli_args``
adds the pinned catalog's flags (an unknown flag exits 2, as SGLang's parser does) and
``prepare_server_args`` parses argv. No ServerArgs validation rules are reproduced.
"""

from __future__ import annotations

import argparse
import json

from sglang.launch_server import CATALOG, add_catalog_args, build_parser  # the stand-in server


class ServerArgs:
    """Only the class method the preflight uses."""

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser) -> None:
        """The catalog's flags on PARSER."""
        add_catalog_args(parser, json.loads(CATALOG.read_text()))


def prepare_server_args(argv: list[str]) -> argparse.Namespace:
    """Parse ARGV with the catalog's parser (SystemExit 2 on a bad flag)."""
    return build_parser(json.loads(CATALOG.read_text())).parse_args(argv)
