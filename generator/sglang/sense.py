"""Names that mean one setting with the opposite sense, and names of different models.

Two questions every suggestion of gen asks before it proposes a name (a flag's successor,
a choice, an environment variable):

* :func:`opposite_sense`: does the proposed name say the opposite of the written one?
  ``SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK`` became ``SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK``
  (SGLang copies the value over unchanged, so ``=1`` now turns the check on);
  ``--no-enable-fused-qk-norm-rope`` of 0.5.23 is, on 0.5.9, leaving
  ``--enable-fused-qk-norm-rope`` out. A successor that inverts must say so.
* :func:`typo_distance` within :func:`typo_bound`: is the proposed name a typing slip
  away from the written one, or another name altogether (``nvfp4`` and ``mxfp4`` are two
  schemes, however alike they look)?
* :func:`same_model`: could the proposed name be the written one misspelt, or does it
  name another model or version? Parsers and schemes carry their model's number
  (``minimax-m2``/``minimax-m3``, ``glm45``/``glm47``, ``deepseekv3``/``deepseekv31``,
  ``quark``/``quark_int4fp8_moe``): names whose digits differ are never suggested for each
  other, however close their spelling (``glm4.5`` and ``glm45`` carry the same).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# a word and its opposite ("" : the negating word stands alone and is dropped)
_OPPOSITES = {"disable": "enable", "enable": "disable", "disabled": "enabled", "enabled": "disabled",
              "no": "", "not": "", "skip": "", "off": "on", "on": "off", "without": "with", "with": "without",
              "deny": "allow", "allow": "deny"}
_PREFIXES = ("sglang", "sgl")


def _words(name: str) -> list[str]:
    words = [w for w in re.split(r"[-_=\s]+", name.lower()) if w]
    while words and words[0] in _PREFIXES:
        words = words[1:]
    return words


def opposite_sense(written: str, other: str) -> bool:
    """True when ``other`` names the setting ``written`` names, with the opposite sense: one
    word swapped for its opposite (DISABLE/ENABLE, OFF/ON) or a negating word (NO, SKIP) dropped."""
    a, b = _words(written), _words(other)
    if a == b or not a or not b:
        return False
    for x, y in ((a, b), (b, a)):
        for i, word in enumerate(x):
            if word not in _OPPOSITES:
                continue
            swapped = _OPPOSITES[word]
            flipped = x[:i] + ([swapped] if swapped else []) + x[i + 1:]
            if flipped == y:
                return True
    return False


def numbers(name: str) -> str:
    """The digits of a name, in order, whatever separates them: ``minimax-m2`` -> "2",
    ``quark_int4fp8_moe`` -> "48", ``deepseekv3.1`` and ``deepseekv31`` -> "31", ``glm4.5`` -> "45"."""
    return "".join(re.findall(r"\d", name))


def same_model(written: str, candidate: str) -> bool:
    """False when ``candidate`` carries other numbers than ``written``: another model or version."""
    return numbers(written) == numbers(candidate)


def inverted_bool(value: str) -> str | None:
    """The boolean word that means the opposite of ``value`` (``1`` -> ``0``), or None."""
    pairs = {"1": "0", "0": "1", "true": "false", "false": "true", "yes": "no", "no": "yes", "on": "off",
             "off": "on"}
    return pairs.get(value.strip().lower())


def typo_distance(a: str, b: str) -> int:
    """Edits between ``a`` and ``b`` (optimal string alignment: a letter inserted, dropped,
    changed, or two neighbours swapped), each an edit a typing hand makes."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[len(b)]


def typo_bound(word: str) -> int:
    """How many edits a misspelling of a name this long may carry: none for 1-2 letters, one
    up to 5, two up to 10, three beyond. Further than that, two names are two things."""
    n = len(word)
    return 0 if n <= 2 else 1 if n <= 5 else 2 if n <= 10 else 3


def slip(written: str, candidate: str, separators: str = "-_") -> int | None:
    """The edits between two names when ``candidate`` is ``written`` mistyped, else None.

    The bound is :func:`typo_bound` of the words that differ (the shared words do not make
    two different words alike): ``--contex-length`` is ``--context-length`` mistyped (one edit
    in "context"), ``--enable-store`` is not ``--enable-lora`` (three edits in a five-letter
    word), ``quark_int4`` not ``quark_mxfp4``, ``log-format`` not ``load-format``.
    """
    if abs(len(written) - len(candidate)) > 3:  # more than typo_bound ever allows
        return None
    lead = 0
    while lead < min(len(written), len(candidate)) and written[lead] == candidate[lead]:
        lead += 1
    tail = 0
    while (tail < min(len(written), len(candidate)) - lead
           and written[-1 - tail] == candidate[-1 - tail]):
        tail += 1

    def words_of_change(name: str) -> int:  # the length of the words the change touches
        lo, hi = lead, len(name) - tail
        while lo > 0 and name[lo - 1] not in separators:
            lo -= 1
        while hi < len(name) and name[hi] not in separators:
            hi += 1
        return hi - lo

    edits = typo_distance(written, candidate)
    longest = max(words_of_change(written), words_of_change(candidate))
    return edits if edits <= typo_bound("x" * longest) else None


def holds_in_order(name_words: Sequence[str], words: Sequence[str]) -> bool:
    """True when ``words`` all appear in ``name_words`` in the same order, others between them:
    the written name with a word left out (``enable gc`` in ``enable cudagraph gc``)."""
    rest = iter(name_words)
    return all(any(w == t for t in rest) for w in words)
