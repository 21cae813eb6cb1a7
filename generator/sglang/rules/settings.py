"""What a predicate sees: every setting of a service as SGLang would parse its argv.

The rendered argv is read back the way argparse does (the catalog's types and
defaults), so a predicate asks for ``tp_size`` and gets SGLang's own value.
"""

from __future__ import annotations

import dataclasses
import functools
from types import MappingProxyType
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from generator.errors import Position
from generator.checkpoint.facts import CheckpointFacts
from generator.sglang.architectures import Architectures
from generator.sglang.argtypes import NOTHING, ArgTypeError, Unparsed, stored
from generator.sglang.catalog import Action, Catalog, load_flag_tables, version_key
from generator.sglang.gpu import GpuFacts


@dataclass(frozen=True)
class Settings:
    """Every setting of one service as SGLang would parse its argv, plus its environment.

    Names are dests; the pin's own dest is found through renames.yaml's dest groups, so a
    predicate writes ``tp_size`` and reads ``tensor_parallel_size`` on 0.5.9.
    """

    catalog: Catalog
    values: Mapping[str, Any]  # dest -> value, defaults filled in
    written: Mapping[str, Position | None]  # dests the manifest set (position when known)
    env: Mapping[str, str]
    env_pos: Mapping[str, Position] = field(default_factory=dict)
    # name -> the pin's dest, shared by every Settings of one catalog (see _CatalogState):
    # predicates ask for the same few names on every service.
    _dests: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    # True when every value not in ``written`` is the catalog's default (settings_from_words
    # guarantees it): then the rules' answer is fixed by the written values (rules/kept.py).
    plain: bool = field(default=False, compare=False, repr=False)
    # The service's GPUs as the inventory declares them (capability, memory, the host torch),
    # None when a capability is unknown: a GPU rule then stays silent (generator/sglang/gpu.py).
    gpu: GpuFacts | None = None
    # Facts beyond the argv, None when unknown (a rule that needs one stays silent): the model's
    # checkpoint and its draft's (catalogs/models/<model>.json, generator/checkpoint/), and the
    # model classes the pin registers (catalogs/sglang/<pin>.architectures.json).
    model: CheckpointFacts | None = None
    draft: CheckpointFacts | None = None
    architectures: Architectures | None = None

    @property
    def rope_scaling_applies(self) -> bool:
        """Whether the pin's Transformers hands SGLang ``rope_scaling`` (4.x; 5.x moved it to
        rope_parameters, so 0.5.23's derived context length never multiplies by its factor:
        tests/test_model_oracle.py). Unknown Transformers: assume it does."""
        version = self.architectures.transformers_version if self.architectures else None
        major = version.split(".")[0] if version else ""
        return not (major.isdigit() and int(major) >= 5)

    @property
    def version(self) -> tuple[int, ...] | None:
        """The pin's release number."""
        return _state(self.catalog).version

    def at_least(self, *release: int) -> bool:
        """True when the pin is this release or newer."""
        version = self.version
        return version is not None and version >= release

    def dest(self, name: str) -> str:
        """The pin's dest for a setting name (``tp_size`` -> ``tensor_parallel_size`` on 0.5.9)."""
        found = self._dests.get(name)
        if found is None:
            found = name
            for candidate in load_flag_tables(self.catalog.source_file).dest_names(name):
                if candidate in self.values or self.catalog.by_dest(candidate) is not None:
                    found = candidate
                    break
            self._dests[name] = found
        return found

    def get(self, name: str, default: Any = None) -> Any:
        """The setting's value (SGLang's default when the manifest left it out)."""
        value = self.values.get(self.dest(name))
        return default if value is None else value

    def has(self, name: str) -> bool:
        """True when the pin has this setting at all."""
        return self.catalog.by_dest(self.dest(name)) is not None

    def is_set(self, name: str) -> bool:
        """True when the manifest set this setting."""
        return self.dest(name) in self.written

    def flag(self, name: str) -> str:
        """The pin's option string for a setting, for messages."""
        action = self.catalog.by_dest(self.dest(name))
        return action.canonical if action is not None else "--" + name.replace("_", "-")

    def negated_flag(self, name: str) -> str:
        """The pin's ``--no-`` option string of a switch (BooleanOptionalAction), for messages."""
        action = self.catalog.by_dest(self.dest(name))
        negative = action.negative if action is not None else None
        return negative if negative is not None else "--no-" + self.flag(name)[2:]

    # ---- readers: a setting as a value of one type, None (or the default) otherwise ----

    def integer(self, name: str, default: int) -> int:
        """An integer setting, or ``default`` when it is unset or not an integer."""
        value = self.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else default

    def opt_int(self, name: str) -> int | None:
        """An integer setting, or None when it is unset or not an integer."""
        value = self.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def number(self, name: str) -> int | float | None:
        """An integer or float setting, or None when it is unset or not a number."""
        value = self.get(name)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def on(self, name: str) -> bool:
        """True when the setting exists on this pin and is truthy (a switch that is on, a non-empty value)."""
        value = self.get(name)
        return not isinstance(value, Unparsed) and bool(value)

    def text(self, name: str) -> str | None:
        """A text setting, or None when it is unset or not text."""
        value = self.get(name)
        return value if isinstance(value, str) else None

    def env_true(self, name: str) -> bool:
        """The variable reads as true by SGLang's EnvBool (true, 1, yes, y; any case)."""
        return self.env.get(name, "").lower() in ("true", "1", "yes", "y")

    def env_flag(self, name: str) -> bool:
        """The variable reads as true by SGLang's get_bool_env_var (true, 1; any case)."""
        return self.env.get(name, "").lower() in ("true", "1")

    def env_int(self, name: str) -> int | None:
        """The variable as SGLang's EnvInt reads it (Python int()), None when unset or not an integer."""
        try:
            return int(self.env[name])
        except (KeyError, ValueError):
            return None

    def with_written(self, changes: Mapping[str, tuple[Any, Position | None]]) -> "Settings":
        """These settings with more dests written (dest -> (value, where)); self when none.

        Every changed value is also marked written, so a plain Settings stays plain.
        """
        if not changes:
            return self
        return dataclasses.replace(
            self, values=MappingProxyType({**self.values, **{d: v for d, (v, _) in changes.items()}}),
            written=MappingProxyType({**self.written, **{d: p for d, (_, p) in changes.items()}}))

    def pos(self, names: Iterable[str]) -> Position | None:
        """Where the first of ``names`` (dests or environment variables) was written."""
        for name in names:
            where = self.written.get(self.dest(name)) or self.env_pos.get(name)
            if where is not None:
                return where
        return None


def parse_value(action: Action, words: Sequence[str]) -> Any:
    """The value argparse stores for one rendered flag group (``words[0]`` is the option).

    The pin's own conversion (generator/sglang/argtypes.py); words SGLang's parser refuses
    give an :class:`Unparsed`, which no reader takes for a value of the flag's type.
    """
    try:
        return stored(action, words)
    except ArgTypeError as exc:
        return Unparsed(tuple(words[1:]) or tuple(words), str(exc))


def _default(action: Action) -> Any:
    default = action.default
    return None if isinstance(default, dict) and "repr" in default else default


@dataclass(frozen=True)
class _CatalogState:
    """What every Settings of one catalog shares: its defaults, name -> dest, release number.

    Computing the defaults of ~330 actions per service was a fifth of a cold check, and
    resolving names per service a third of evaluating the rules.
    """

    defaults: dict[str, Any]
    dests: dict[str, str]
    version: tuple[int, ...] | None


@functools.lru_cache(maxsize=64)  # a loaded catalog is one immutable object (load_catalog caches it)
def _state(catalog: Catalog) -> _CatalogState:
    values: dict[str, Any] = {}
    for action in catalog.actions:
        if action.kind not in ("help", "version") and action.dest not in values:
            live = catalog.by_dest(action.dest)
            values[action.dest] = _default(live if live is not None else action)
    return _CatalogState(values, {}, version_key(catalog.version))


def settings_from_words(catalog: Catalog, groups: Sequence[tuple[Action, Sequence[str], Position | None]],
                        env: Mapping[str, str], env_pos: Mapping[str, Position] | None = None) -> Settings:
    """Settings from rendered flag groups (action, words, where written) and an environment."""
    state = _state(catalog)
    values = dict(state.defaults)
    written: dict[str, Position | None] = {}
    for action, words, pos in groups:
        if not words:
            continue  # a switch turned off: SGLang keeps its default
        value = parse_value(action, words)
        if value is NOTHING:
            continue  # 0.5.9's DeprecatedAction warns and stores nothing
        if action.kind == "append" and action.dest in written:
            value = [*values[action.dest], *value]
        values[action.dest] = value
        written[action.dest] = pos
    # Read-only views: a predicate is a pure function of what it reads, never a writer.
    return Settings(catalog, MappingProxyType(values), MappingProxyType(written), MappingProxyType(dict(env)),
                    MappingProxyType(dict(env_pos or {})), state.dests, plain=True)


def defaults_of(catalog: Catalog) -> Mapping[str, Any]:
    """SGLang's default of every setting of ``catalog`` (shared; do not modify)."""
    return _state(catalog).defaults


def settings_from_argv(catalog: Catalog, argv: Sequence[str], env: Mapping[str, str]) -> Settings:
    """Settings from a flat argv of canonical option strings (what gen renders; tests use it)."""
    groups: list[tuple[Action, list[str], Position | None]] = []
    for word in argv:
        action = catalog.by_option(word.split("=", 1)[0]) if word.startswith("--") else None
        if action is not None:
            groups.append((action, [word], None))
        elif groups:
            groups[-1][1].append(word)
        else:
            raise ValueError(f"argv must start with an option, got {word!r}")
    return settings_from_words(catalog, groups, env)
