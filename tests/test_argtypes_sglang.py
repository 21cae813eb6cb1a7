"""Settings hold what the pin's real parser stores: every action of both catalogs, parsed by SGLang too.

For each action of each committed catalog, argvs with typical and edge words for its type
(human_readable_int suffixes, JSON and orjson, nullable words, nargs lists, a bare
``nargs="?"``, the ``--no-x`` form, SGLang's deprecated and LoRA actions) go through the
real ``ServerArgs`` parser in the pin's venv (tests/argparse_runner.py) and through gen's
conversion (generator/sglang/argtypes.py, what ``Settings`` holds). Where SGLang stores a
value, gen's must be equal; where SGLang's parser refuses the words, gen's conversion (or
the choices check the flag check makes) must refuse them too. The defaults of every dest
are compared on an empty argv.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from sglang_env import sglang_python

from generator.sglang.argtypes import KNOWN_ACTIONS, KNOWN_TYPES, NOTHING, ArgTypeError, convert, split_option, stored
from generator.sglang.catalog import Action, load_catalog
from generator.sglang.rules.settings import defaults_of, settings_from_argv

ROOT = Path(__file__).resolve().parent.parent
RUNNER = Path(__file__).resolve().parent / "argparse_runner.py"
PINS = ("0.5.9", "0.5.23")

pytestmark = pytest.mark.sglang

# Words per type: accepted ones and ones SGLang's type function refuses.
WORDS: dict[str | None, list[str]] = {
    None: ["abc", "", "None"],
    "str": ["abc", " padded ", "None"],
    "int": ["7", " 12 ", "-3", "1_000", "+4", "1.5", "x"],
    "float": ["0.5", "1e3", "-2", "inf", "1_0.5", "x"],
    "bool": ["true", "on"],
    "callable:json.loads": ['{"a": 1}', "[1, 2]", '"s"', "NaN", "1e400", "{bad"],
    "callable:sglang.srt.utils.common.json_list_type": ["[1, 2]", '["a", "b"]', "{}", "NaN", "[18446744073709551616]",
                                                         "[bad"],
    "callable:sglang.srt.utils.common.nullable_str": ["None", "", "x"],
    "callable:sglang.srt.utils.common.human_readable_int": ["4k", "1Ki", "25.6k", " 12 ", "0", "-5", "1.5Ki", "4x",
                                                             "2M", "1_000"],
    "callable:sglang.srt.model_executor.cuda_graph_config.parse_cuda_graph_backend_arg": ["full", "tc_piecewise",
                                                                                          "bogus"],
    "callable:sglang.srt.model_executor.cuda_graph_config.parse_cuda_graph_config_arg": [
        '{"decode": {"bs": [1, 2], "backend": "full"}}', '{"prefill": {"max_context_size": 0}}', "{}",
        '{"x": {}}', '{"decode": {"nope": 1}}', '{"decode": 1}', "[1]", '{"decode": {"backend": "tc_piecewise"}}'],
}
LORA_WORDS = ["a=b", " c ", '{"lora_name": "x", "lora_path": "y"}', '{"lora_name": "x"}', "{bad}"]


def _samples(action: Action) -> list[list[str]]:
    """Argvs (after --model-path) that exercise ``action``."""
    opt = action.canonical
    if not action.takes_value:
        out = [[opt]]
        if action.negative:
            out.append([action.negative])
        return out
    words = LORA_WORDS if action.kind in KNOWN_ACTIONS else WORDS[action.type]
    if action.choices is not None:
        words = list(action.choices[:4]) + [w for w in words if w not in action.choices][:2]
    out = []
    if action.nargs in ("?", "*"):
        out.append([opt])
    for word in words:
        out.append([f"{opt}={word}"] if word.startswith("-") or not word else [opt, word])
    if action.nargs in ("+", "*") or isinstance(action.nargs, int) and action.nargs > 1:
        count = action.nargs if isinstance(action.nargs, int) else 2
        out.append([opt, *words[:count]])
    return out


def _gen(action: Action, argv: list[str]) -> tuple[bool, Any]:
    """gen's verdict: (accepted, the stored value) for one group of words."""
    try:
        value = stored(action, argv)
        words = split_option(action, argv) if action.takes_value else []
        if action.choices is not None and any(str(convert(action, w)) not in action.choices for w in words):
            return False, None  # argparse's choices check of each converted word (the flag check's F003)
    except ArgTypeError:
        return False, None
    return True, value


def _real(pin: str, argvs: list[list[str]]) -> list[dict[str, Any]]:
    proc = subprocess.run([sglang_python(pin), str(RUNNER)], input=json.dumps(argvs), capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@pytest.mark.parametrize("pin", PINS)
def test_every_action_converts_as_sglang_parses(pin: str) -> None:
    catalog = load_catalog(ROOT, pin)
    actions = [a for a in catalog.actions if a.kind not in ("help", "version")]
    unknown = sorted({a.type for a in actions} - KNOWN_TYPES) + sorted(
        {a.kind for a in actions if a.kind.startswith("other:")} - KNOWN_ACTIONS)
    assert not unknown, f"types or actions argtypes.py does not convert: {unknown}"
    cases = [(a, argv) for a in actions for argv in _samples(a)]
    results = _real(pin, [[]] + [argv for _, argv in cases])
    base, results = results[0]["values"], results[1:]
    wrong = []
    accepted = refused = 0
    for (action, argv), real in zip(cases, results, strict=True):
        ok, value = _gen(action, argv)
        if real["ok"]:
            accepted += 1
            expected = real["values"][action.dest]
            if value is NOTHING:
                value = base[action.dest]  # SGLang's DeprecatedAction leaves the default
            if not ok or not _same(value, expected):
                wrong.append(f"{argv}: SGLang stores {expected!r}, gen {'refuses' if not ok else repr(value)}")
        else:
            refused += 1
            if ok:
                wrong.append(f"{argv}: SGLang refuses ({real['error']}), gen stores {value!r}")
    assert not wrong, f"{len(wrong)} of {len(cases)} disagree:\n" + "\n".join(wrong[:60])
    assert accepted > len(actions) and refused > 20, (accepted, refused)
    defaults = defaults_of(catalog)
    bad_defaults = [f"{d}: SGLang {v!r}, gen {defaults.get(d)!r}" for d, v in base.items()
                    if d in defaults and d != "model_path" and not _same(defaults[d], v) and not (isinstance(v, dict) and "repr" in v)]
    assert not bad_defaults, "\n".join(bad_defaults)


@pytest.mark.parametrize("pin", PINS)
def test_settings_read_the_typed_values(pin: str) -> None:
    """The recipe's trap: --max-prefill-tokens is a human_readable_int on 0.5.23, an int on 0.5.9."""
    s = settings_from_argv(load_catalog(ROOT, pin), ["--max-prefill-tokens", "0"], {})
    assert s.get("max_prefill_tokens") == 0 and s.integer("max_prefill_tokens", 1) == 0
