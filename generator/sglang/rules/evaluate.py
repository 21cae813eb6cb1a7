"""Evaluation: the rules of the pin's version run on one service's settings.

:func:`evaluate` is pure (settings in, findings out) so the differential test can run the
same rules on a generated corpus that the real SGLang validates too; :func:`check_rules`
builds the settings of a rendered service and records the findings as diagnostics.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

from generator.checkpoint.attach import snapshot_of
from generator.errors import Diagnostics, Position, Severity
from generator.sglang.architectures import load_architectures
from generator.sglang.catalog import Action, Catalog
from generator.sglang.flags import CheckedArg
from generator.sglang.gpu import gpu_facts
from generator.sglang.rules.kept import Fired, settings_key, store_for
from generator.sglang.rules.load import load_rules, rules_path
from generator.sglang.rules.message import render
from generator.sglang.rules.registry import PREDICATES, Hit
from generator.sglang.rules.settings import Settings, parse_value, settings_from_words
from generator.sglang.rules.spec import RuleSpec


@dataclass(frozen=True)
class Finding:
    """A rule that fired, with its rendered message and position (None: not positioned)."""

    rule: RuleSpec
    message: str
    fix: str
    pos: Position | None


def fire(settings: Settings, rule: RuleSpec) -> Hit | None:
    """The rule's Hit on ``settings``: its ``when:`` condition, or its predicate."""
    if rule.when is not None:
        return Hit(rule.when.blame) if rule.when.holds(settings) else None
    return PREDICATES[rule.id](settings, rule)


def evaluate(settings: Settings, rules: Sequence[RuleSpec]) -> list[Finding]:
    """Every rule of the pin's version that fires on ``settings``, in rules.yaml order.

    What fires on a plain Settings is kept by its written values and environment
    (generator/sglang/rules/kept.py, speed only); positions are looked up in ``settings``
    every time.
    """
    key = settings_key(settings)
    if key is None:
        fired = _fire(settings, rules)
    else:
        store = store_for(settings.catalog, rules)
        found = store.get(key)
        fired = store[key] = found if found is not None else _fire(settings, rules)
    return [Finding(rule, message, fix, settings.pos(blame)) for rule, message, fix, blame in fired]


def _fire(settings: Settings, rules: Sequence[RuleSpec]) -> list[Fired]:
    """The rules that fire on ``settings`` with their messages and blamed names (no positions)."""
    out: list[Fired] = []
    version = settings.version
    for rule in rules:
        if not rule.versions.contains(version):
            continue
        hit = fire(settings, rule)
        if hit is None:
            continue
        message, fix = render(settings, rule, hit)
        out.append((rule, message, fix, tuple(hit.blame)))
    return out


def check_rules(catalog: Catalog, placement: Any, argv: Any, environment: Sequence[tuple[str, str]],
                diags: Diagnostics, rules: Sequence[RuleSpec] | None = None, facts: Any = None) -> Settings:
    """Run every rule on one rendered service; record findings in ``diags``.

    ``placement`` is the service's Placement (for positions of its model and service
    manifests, and its GPUs), ``argv`` its checked ServiceArgv, ``environment`` the rendered
    variables; ``rules`` the catalog's rules when the caller loaded them once for a host
    (:func:`catalog_rules`); ``facts`` the host's HostFacts (its torch), None when the
    service is not on a host (a model checked alone: no GPU facts, the GPU rules stay silent).
    Returns the settings the rules saw (the memory sizing reads them).
    """
    model, service = placement.model, placement.service
    env_pos: dict[str, Position] = {}
    for owner in (model, service):  # the service's own value wins, as in the rendering
        for name, _ in owner.env:
            env_pos[name] = owner.pos("env", name)
    groups: list[tuple[Action, Sequence[str], Position | None]] = [
        (g.action, g.words, g.pos) for g in argv.groups if isinstance(g, CheckedArg)]
    settings = settings_from_words(catalog, groups, dict(environment), env_pos)
    settings = _with_dropped_tool_parser(settings, placement)
    settings = _with_secret_args(settings, placement)
    if facts is not None:
        settings = dataclasses.replace(settings, gpu=gpu_facts(placement.gpus, facts, catalog.source_file))
    settings = with_checkpoint(settings, model)
    fallback = service.pos("model")
    for finding in evaluate(settings, rules if rules is not None else catalog_rules(catalog)):
        record = diags.error if finding.rule.severity is Severity.ERROR else diags.warning
        record(finding.pos or fallback, finding.rule.code, finding.message, finding.fix)
    return settings


def with_checkpoint(settings: Settings, model: Any) -> Settings:
    """``settings`` with the model's checkpoint facts, its draft's and the pin's architectures."""
    snapshot = snapshot_of(model)
    return dataclasses.replace(settings, model=snapshot.checkpoint if snapshot else None,
                               draft=snapshot.draft if snapshot else None,
                               architectures=load_architectures(settings.catalog.source_file))


def catalog_rules(catalog: Catalog) -> tuple[RuleSpec, ...]:
    """The rules for ``catalog``: catalogs/rules.yaml beside its flag tables, loaded (cached on its mtime)."""
    return load_rules(rules_path(catalog))


def _with_dropped_tool_parser(settings: Settings, placement: Any) -> Settings:
    """Put back a tool-call parser the flag check refused (a bad choice never reaches argv).

    Only this setting: its trap ('qwen3' is the reasoning parser's name) deserves its own
    explanation next to argparse's "invalid choice".
    """
    if settings.is_set("tool_call_parser"):
        return settings
    model, service = placement.model, placement.service
    written: tuple[Any, Position] | None = None
    if model.tool_call_parser is not None:
        written = (model.tool_call_parser, model.pos("parsers", "tool_call"))
    for owner in (model, service):
        for flag, value in owner.args:
            if flag.split("=", 1)[0] == "--tool-call-parser":
                written = (value if "=" not in flag else flag.split("=", 1)[1], owner.pos("args", flag, key=True))
    if written is None:
        return settings
    return settings.with_written({settings.dest("tool_call_parser"): written})


# What a rule sees for a flag given through ``secret_args``: set, value unknown to gen.
SECRET_PLACEHOLDER = "<secret>"


def _with_secret_args(settings: Settings, placement: Any) -> Settings:
    """Mark the flags of ``secret_args`` as set: SGLang reads them from the credential file.

    gen never sees their values, but rules that ask whether one is set (``--api-key``
    with the native gRPC server, ``--ssl-keyfile-password`` without SSL files) must fire.
    """
    service = placement.service
    changes: dict[str, tuple[Any, Position | None]] = {}
    for i, flag in enumerate(getattr(service, "secret_args", ())):
        action = settings.catalog.by_option(flag)
        if action is None or not action.takes_value or action.dest in settings.written or action.dest in changes:
            continue  # the secrets check reports it (K003)
        changes[action.dest] = (SECRET_PLACEHOLDER, service.pos("secret_args", i))
    return settings.with_written(changes)


def sglang_numa_flag(argv: Any, service: Any) -> tuple[list[int] | None, Position]:
    """SGLang's own ``--numa-node`` of a checked argv (None when not written) and where it was set."""
    for g in argv.groups:
        if g.action.dest == "numa_node" and g.words:
            value = parse_value(g.action, g.words)
            return ([int(v) for v in value] if isinstance(value, list) else [int(value)]), g.pos
    return None, service.pos("name")
