"""JSON from outside gen, decoded so that no text can crash it: the one ``loads`` for such text.

A flag value (``--cuda-graph-config``, ``--json-model-override-args``, a LoRA path), an
environment value SGLang decodes, a catalog JSON of the repository, a host's reply: each is
text someone else wrote. Python's decoder raises RecursionError, not a JSONDecodeError, on
an array or object nested deeper than its recursion limit (about 1,000 levels): 3,000 ``[``
in a manifest's ``--cuda-graph-config`` stopped ``gen check`` with an internal error. Here
that is a :class:`json.JSONDecodeError` like any other malformed text (a ValueError, so every
caller's ``except ValueError`` and ``except json.JSONDecodeError`` takes it).
"""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes, **options: Any) -> Any:
    """:func:`json.loads` of ``text``; nesting too deep is a JSONDecodeError at the start."""
    try:
        return json.loads(text, **options)
    except RecursionError:
        shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise json.JSONDecodeError("nested deeper than a JSON reader follows (about 1,000 levels)",
                                   shown, 0) from None
