"""Group a command's flag words into arguments the way argparse would (I006, F006).

Each flag takes as many words as its catalog action says (nargs); an unknown flag takes
everything up to the next flag, so its value still reaches the flag checks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from generator.errors import Diagnostics
from generator.importer.cmdline import Word
from generator.sglang.catalog import Action, Catalog
from generator.sglang.flags import Arg, ArgValue

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")  # argparse reads these as values


def looks_like_option(word: str, catalog: Catalog | None = None) -> bool:
    """True for a word argparse reads as an option, as its ``_parse_optional`` decides.

    A word starting with '-' is an option unless it is a negative number, or, with the
    ``catalog`` at hand, unless it holds a space and names no option of the pin exactly,
    before an '=', or as a prefix: argparse then takes it as a value
    (``--served-model-name '--- x'`` is a name, not an unknown flag).
    """
    if not (word.startswith("-") and len(word) > 1) or _NEGATIVE_NUMBER.match(word):
        return False
    if catalog is None or " " not in word:
        return True
    return (catalog.by_option(word) is not None or catalog.by_option(word.partition("=")[0]) is not None
            or bool(catalog.prefix_tuples(word)))

def lookup(catalog: Catalog, name: str) -> Action | None:
    """The action argparse would pick for ``name`` (exact, unique prefix, dashed), else None."""
    action = catalog.by_option(name)
    if action is not None:
        return action
    for probe in dict.fromkeys((name, "--" + name[2:].replace("_", "-"))):
        action = catalog.by_option(probe)
        if action is not None:
            return action
        tuples = catalog.prefix_tuples(probe)
        if len(tuples) == 1:
            return tuples[0][0]
    return None


def group_args(catalog: Catalog, words: Sequence[Word], diags: Diagnostics) -> list[Arg]:
    """Group flag words into Args as argparse would: each flag takes as many words as it needs."""
    args: list[Arg] = []
    i, n = 0, len(words)
    while i < n:
        w = words[i]
        if not looks_like_option(w.text, catalog) or w.text == "--":
            diags.error(w.pos, "I006", f"unexpected word '{w.text}': SGLang's parser takes no "
                        "positional arguments (it would exit with 'unrecognized arguments')")
            i += 1
            continue
        j = i + 1
        while j < n and not looks_like_option(words[j].text, catalog):
            j += 1
        values = [x.text for x in words[i + 1:j]]
        extra: Sequence[Word] = ()
        if w.text.startswith("--") and "=" in w.text:
            args.append(Arg(w.text, True, w.pos))
            extra = words[i + 1:j]
        else:
            action = lookup(catalog, w.text)
            nargs = action.nargs if action is not None else "*"
            value: ArgValue
            if nargs == 0:
                value, extra = True, words[i + 1:j]
                for stray in extra:
                    diags.error(stray.pos, "F006",
                                f"'{w.text}' is a switch and takes no value, got '{stray.text}': "
                                f"SGLang's parser would exit with 'unrecognized arguments'")
                extra = ()
            elif nargs in (None, "?"):
                value = values[0] if values else True
                extra = words[i + 2:j] if values else ()
            elif isinstance(nargs, int):
                value, extra = tuple(values[:nargs]), words[i + 1 + nargs:j]
            else:  # "*", "+", or an unknown flag: everything up to the next flag
                value = tuple(values) if values or nargs == "+" else True
                if action is None and len(values) == 1:
                    value = values[0]
            args.append(Arg(w.text, value, w.pos))
        for stray in extra:
            diags.error(stray.pos, "I006", f"unexpected word '{stray.text}' after '{w.text}': "
                        "SGLang's parser would exit with 'unrecognized arguments'")
        i = j
    return args
