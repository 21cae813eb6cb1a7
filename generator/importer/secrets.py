"""Secrets in an imported command: their values never appear in any message gen prints.

A secret flag (``--api-key``, by :func:`generator.emit.secrets.is_secret_action`) or
variable (``HF_TOKEN``) in an imported command is refused (K001/K002) and no manifest is
printed. The diagnostics about such a command (K001 itself, a stray word after the key,
an unknown flag's value) would still quote what was written: :func:`redact` replaces
every secret value by ``<secret>`` in all of them. A flag the pin does not know is
judged by its name (:func:`is_secret_dest`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from generator.errors import Diagnostic

# Dests of unknown flags that hold a secret by their name (api_key, ssl_keyfile_password).
SECRET_DEST = re.compile(r"(^|_)(api_key|password|passwd|secret|token)$")
REDACTED = "<secret>"


def is_secret_dest(dest: str) -> bool:
    """True when a flag's dest names a secret (``api_key``, ``ssl_keyfile_password``)."""
    return bool(SECRET_DEST.search(dest))


def redact(diagnostics: Iterable[Diagnostic], values: Sequence[str]) -> list[Diagnostic]:
    """The diagnostics with every secret value replaced by ``<secret>``."""
    secrets = sorted({v for v in values if v}, key=len, reverse=True)  # longest first: no partial leftovers
    out: list[Diagnostic] = []
    for d in diagnostics:
        message, hint = d.message, d.hint
        for value in secrets:
            message = message.replace(value, REDACTED)
            hint = hint.replace(value, REDACTED) if hint else hint
        out.append(d if (message, hint) == (d.message, d.hint) else dataclasses.replace(d, message=message, hint=hint))
    return out
