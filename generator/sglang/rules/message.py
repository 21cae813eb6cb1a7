"""How a rule's texts become its message and fix: the one formatter of catalogs/rules.yaml.

Every text of rules.yaml is a ``str.format`` template of named placeholders. A placeholder
prints one of:

- a field of the rule's Hit: a value (a number, a switch, None, or text as the manifest
  wrote it), a setting's option string, a list of those, or an :class:`Item`;
- ``{version}``: the pin's SGLang version;
- a reader of the settings: ``{flag.NAME}`` (the pin's option string of a setting),
  ``{negated.NAME}`` (the ``--no-`` option string of a switch), ``{value.NAME}`` (its
  value, or a value SGLang resolves, see rules/when.py), ``{env.VAR}``;
- a list field joined in one of the :data:`LIST_STYLES`: ``{list.F}`` ``a, b``,
  ``{and.F}`` ``a and b``, ``{or.F}`` ``a or b``, ``{words.F}`` ``a b`` (argv words),
  ``{choices.F}`` ``a|b`` (alternatives), ``{clauses.F}`` ``a; b``. A list printed without
  a style prints as Python prints it (``['a', 'b']``);
- an item (``item(name, **fields)``, made by a predicate): the rule's ``items: {name: text}``
  entry, formatted with the item's own fields and the readers above. A list of items prints
  each one's text, joined by the style.

The texts of the check that broke (``checks: {name: {field: text}}``) are formatted first
and fill the fields of the same name, which the rule's ``message`` and ``fix`` then print. A
Hit of :func:`every_broken` (SGLang reports every broken check at once) gives each such
field the list of the broken checks' texts, in order, for a list style to join.

Only templates of named placeholders are formatted (``rules/texts.py``: no format spec, no
index, no attribute walk, the one conversion ``!r``; C032 at load reports the others).

Predicates pass values and names only; every word a reviewer reads is here or in rules.yaml
(tests/test_rules_prose.py keeps it so).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from generator.sglang.rules.registry import Hit, Item
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec
from generator.sglang.rules.texts import fill
from generator.sglang.rules.when import resolved

if TYPE_CHECKING:
    from collections.abc import Iterable

# reader name -> the separator a list field is joined with
LIST_STYLES: dict[str, str] = {"list": ", ", "and": " and ", "or": " or ", "words": " ", "choices": "|",
                               "clauses": "; "}


class _Fields(dict[str, Any]):
    """Format fields that print a missing key as itself, so a message never crashes (a text naming a
    field its predicate never passes is C019 when rules.yaml is loaded, rules/fields.py)."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class _Reader:
    """``{reader.NAME}`` in a template: ``read(NAME)``."""

    def __init__(self, read: Callable[[str], Any]) -> None:
        self._read = read

    def __getattr__(self, name: str) -> Any:
        return self._read(name)


class _Text:
    """Formats the templates of one rule on one service: the readers, the list styles, the items."""

    def __init__(self, settings: Settings, rule: RuleSpec) -> None:
        self._settings, self._rule = settings, rule

    def fields(self, own: Mapping[str, Any]) -> _Fields:
        """``own`` with ``{version}``, the readers and the list styles (own fields win)."""
        s = self._settings
        out = _Fields(own)
        out.setdefault("version", s.catalog.version)
        out.setdefault("flag", _Reader(s.flag))
        out.setdefault("negated", _Reader(s.negated_flag))
        out.setdefault("value", _Reader(lambda name: self.printable(resolved(s, name))))
        out.setdefault("env", _Reader(lambda name: s.env.get(name, "")))
        for style, sep in LIST_STYLES.items():
            out.setdefault(style, _Reader(functools.partial(self._joined, out, sep=sep)))
        return out

    def fill(self, template: str, own: Mapping[str, Any]) -> str:
        """``template`` formatted with ``own`` fields (items printed with the rule's items:)."""
        fields = self.fields({k: self.printable(v) for k, v in own.items()})
        # texts.fill formats only a template of named placeholders (C032 reports the others at
        # load): a width ({x:>900000000}) or an attribute walk is never run.
        return fill(template, fields)

    def printable(self, value: Any) -> Any:
        """An item as its text; a list keeps its items (a list style prints them); other values as they are."""
        if isinstance(value, Item):
            return self.fill(self._rule.items[value.name], value.fields)  # an unknown name is a predicate's bug
        if isinstance(value, (list, tuple)) and any(isinstance(v, Item) for v in value):
            return [self.printable(v) for v in value]
        return value

    def _joined(self, fields: Mapping[str, Any], name: str, *, sep: str) -> str:
        value = fields[name]  # a missing name prints as written (_Fields); C019 at load refuses it
        items: Iterable[Any] = value if isinstance(value, (list, tuple)) else (value,)
        return sep.join(str(v) for v in items)


def render(settings: Settings, rule: RuleSpec, hit: Hit) -> tuple[str, str]:
    """The rule's message and fix for ``hit``: the broken check's texts first, then the rule's own."""
    text = _Text(settings, rule)
    fields: dict[str, Any] = dict(hit.fields)
    if hit.check is not None:
        own = {**fields}
        # a name rules.yaml lacks is a bug of the predicate (exit 4)
        fields.update({name: text.fill(tpl, own) for name, tpl in rule.checks[hit.check].items()})
    if hit.every:
        texts: dict[str, list[str]] = {}
        for sub in hit.every:
            own = {**hit.fields, **sub.fields}
            for name, tpl in rule.checks[sub.check or ""].items():
                texts.setdefault(name, []).append(text.fill(tpl, own))
        fields.update(texts)
    return text.fill(rule.message, fields), text.fill(rule.fix, fields)
