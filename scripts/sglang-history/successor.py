"""The successor of a deprecated SGLang flag, parsed from SGLang's own deprecation text.

SGLang writes its deprecations in a few shapes; each names the flag to use, sometimes with a
value, and often names other flags too:

- "Please set `--ep-size` to the same value as `--tp-size` instead." -> ``--ep-size``
- "Please set `--moe-a2a-backend` to 'deepep' instead." -> ``--moe-a2a-backend deepep``
- "Please use '--attention-backend flashmla' instead." -> ``--attention-backend flashmla``
- "Use --image-processor-backend=pil instead." -> ``--image-processor-backend pil``
- "Use --attn-dp-size <dp-size> instead of --dp-size ..." -> ``--attn-dp-size`` (a
  ``<placeholder>`` is not a value)

The successor is the first flag after a cue word (use, set, replace, prefer, switch to,
instead) that is not the deprecated flag itself and that some release knows; no successor
(None) when the text names none, e.g. "--prefill-round-robin-balance is deprecated now."
"""

from __future__ import annotations

import re
from typing import Any

_FLAG = re.compile(r"--[A-Za-z0-9][A-Za-z0-9_-]*")
_CUE = re.compile(r"\b(use|set|replace[sd]?|prefer|switch(?:ed)? to|instead|in favou?r of)\b", re.IGNORECASE)
_VALUE_AFTER = [
    re.compile(r"^=([A-Za-z0-9_.:+-]+)"),                       # --x=value
    re.compile(r"^ ([A-Za-z0-9_.:+-]+)['\"`]"),                  # '--x value'
    re.compile(r"^['\"`]?\s+to\s+['\"`]([A-Za-z0-9_.:+-]+)['\"`]"),  # `--x` to 'value'
]


def _value(rest: str) -> str | None:
    for pattern in _VALUE_AFTER:
        m = pattern.match(rest)
        if m:
            return m.group(1).rstrip(".,;:")
    return None


def successor(message: str | None, own: set[str], known: set[str]) -> dict[str, Any] | None:
    """``{"flag": F, "value": V|None}`` named by ``message``, or None.

    ``own``: the deprecated flag's option strings (never its own successor); ``known``:
    every option string any release has, so a token like ``--cuda-graph-backend-`` from
    ``--cuda-graph-backend-{decode,prefill}`` is not taken for a flag.
    """
    if not message:
        return None
    cue = _CUE.search(message)
    tokens = [(m.start(), m.group(0)) for m in _FLAG.finditer(message)]
    # Tokens after the first cue first, then the rest: "Use X instead of Y" names X.
    after = [t for t in tokens if cue and t[0] >= cue.start()]
    for start, token in after + [t for t in tokens if t not in after]:
        if token in own or (token not in known and not token.endswith("-")):
            continue
        if token.endswith("-") or message[start + len(token): start + len(token) + 1] == "{":
            continue  # a prefix of a brace-expanded name: --cuda-graph-backend-{decode,prefill}
        return {"flag": token, "value": _value(message[start + len(token):])}
    return None


def render(found: dict[str, Any] | None) -> str | None:
    """``--flag value`` text of a successor, as a suggestion would show it."""
    if not found:
        return None
    return found["flag"] + (f" {found['value']}" if found["value"] else "")
