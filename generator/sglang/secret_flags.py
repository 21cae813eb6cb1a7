"""Which SGLang flags carry a secret, by their option names and help text (issue 10 item 3).

Below emit/ so the flag value checker can use it too: a secret flag's value must never be
quoted in a diagnostic, since diagnostics land in CI logs (generator/emit/secrets.py K001).
"""

from __future__ import annotations

import functools
import re

from generator.sglang.catalog import Action

# A flag carries a secret when its name says so ...
_SECRET_NAME_WORDS = ("api-key", "apikey", "password", "passwd", "secret", "credential")
# ... or its help text does. "token" alone means LLM tokens in SGLang ("per token"), so a
# *-token flag counts only when its help speaks of access (HF tokens, auth tokens).
_SECRET_HELP_RE = re.compile(r"\b(api[ -]?key|password|passphrase|secret|credentials?)\b", re.IGNORECASE)
_TOKEN_HELP_RE = re.compile(r"\b(auth\w*|access|bearer|hugging ?face|hf|hub|login|private)\b", re.IGNORECASE)


def is_secret_action(action: Action) -> bool:
    """True when a catalog flag carries a secret (by its option names and help text)."""
    return _is_secret(action.option_strings, action.help or "")


# Asked for every flag of every service; a pure function of two strings' worth of input.
@functools.lru_cache(maxsize=4096)
def _is_secret(option_strings: tuple[str, ...], help_text: str) -> bool:
    names = " ".join(option_strings).lower().replace("_", "-")
    if any(word in names for word in _SECRET_NAME_WORDS) or _SECRET_HELP_RE.search(help_text):
        return True
    return any(o.endswith("-token") for o in option_strings) and bool(_TOKEN_HELP_RE.search(help_text))
