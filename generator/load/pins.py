"""What an SGLang pin is: the one spelling of a release or a source commit that names files.

A pin names ``catalogs/sglang/<pin>.json`` and the files that belong to it,
``<pin>.<kind>.json`` (``.env``, ``.checks``, ``.devices``, ...). So a pin is a release
version (digits and dots, then an optional PEP 440 tail such as ``.post2``, ``rc1`` or
``+cu124``, lowercase, not ending in ``.`` + letters) or ``git-<40 lowercase hex>``, at most
:data:`MAX_PIN_CHARS` characters: never a path separator, never ``..``, never a name
ending in ``.<letters>`` that is another pin's companion file (a host pinned to
``0.5.9.env`` read the env catalog as a flag catalog), never two spellings of one commit
(upper and lower case name one file on a case-insensitive checkout).

The same test holds for every pin gen meets: an inventory's ``sglang.pin`` (the schema),
a catalog file's name, and the version or commit a probed interpreter prints before it
becomes a file name (``gen sglang snapshot``).
"""

from __future__ import annotations

import re

MAX_PIN_CHARS = 64
# The tail ends in a digit, or in letters right after a digit or "+" (``rc1``, ``+standin``),
# never in "." + letters (``.env``: a companion file) nor in a separator.
PIN_RE = r"^(?:[0-9]+(?:\.[0-9]+)+(?:[.+a-z0-9]*(?:[0-9]|[0-9+][a-z]+))?|git-[0-9a-f]{40})$"
_PIN = re.compile(PIN_RE)


def is_pin(text: object) -> bool:
    """True when ``text`` is a pin (see the module docstring)."""
    return isinstance(text, str) and len(text) <= MAX_PIN_CHARS and _PIN.fullmatch(text) is not None
