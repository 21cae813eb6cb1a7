"""What both oracle runners do around each case (tests/rules_differential_runner.py,
tests/model_oracle_runner.py): a checkpoint folder of a config.json, and the case's environment
for its run only.

Runs inside an SGLang venv, imported by the runners from tests/; standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from typing import Any


def config_folder(root: str, name: str, config: Mapping[str, Any], files: Mapping[str, str] | None = None) -> str:
    """A checkpoint folder ROOT/NAME: ``config`` as its config.json, and ``files`` (a remote-code module)."""
    path = os.path.join(root, name)
    os.makedirs(path)
    with open(os.path.join(path, "config.json"), "w", encoding="utf-8") as fh:
        json.dump(config, fh)
    for file_name, text in (files or {}).items():
        with open(os.path.join(path, file_name), "w", encoding="utf-8") as fh:
            fh.write(text)
    return path


@contextlib.contextmanager
def case_environment(env: Mapping[str, str] | None) -> Iterator[None]:
    """``os.environ`` with the case's variables added for the block, then put back as it was."""
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
