"""Whatever the input, gen answers with diagnostics and an exit code, never a traceback.

Hypothesis throws random YAML documents (random structures, and random mutations of the
real examples) at the whole pipeline, in place of a model manifest and of a host
inventory; every run must end in a result (diagnostics or a render), and the CLI must
exit 0 or 1 with no traceback.
"""

from __future__ import annotations

import io
import os
import shutil
import time
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from ruamel.yaml import YAML

from generator.cli.main import main
from generator.pipeline.fleet import run

ROOT = Path(__file__).resolve().parent.parent

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=False),
                    st.text(max_size=20), st.sampled_from(["/shared/models/x", "/data/x", "--tp", "EAGLE3",
                                                           "0.5.9", "qwen3", "0-7", "00000000:01:00.0"]))
keys = st.one_of(st.text(max_size=12), st.sampled_from(
    ["name", "weights", "path", "size_gb", "parallel", "tp", "speculative", "algorithm", "num_steps", "args",
     "env", "gpus", "index", "services", "model", "port", "sglang", "pin", "python", "storage", "model_root",
     "numa", "cpus", "vm_passthrough", "--tp", "--speculative-algo"]))
documents = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                          st.dictionaries(keys, inner, max_size=5)),
                         max_leaves=25)


def _real_with(relpath: str, keys: tuple[str, ...], value: object) -> dict:
    """A real example document with one value replaced (for explicit @example cases)."""
    data = YAML(typ="safe").load((ROOT / relpath).read_text(encoding="utf-8"))
    node = data
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = value
    return data


def _dump(data: object) -> str:
    out = io.StringIO()
    YAML(typ="safe").dump(data, out)
    return out.getvalue()


def _mutate(text: str, data: st.DataObject) -> str:
    """Cut, duplicate or corrupt a piece of a real file."""
    i = data.draw(st.integers(0, len(text)))
    j = data.draw(st.integers(i, min(len(text), i + 40)))
    insert = data.draw(st.sampled_from(["", ":", "- ", "{", "]", "\t", "\x00", "&a", "*a", "<<: *a", "'",
                                        "\n  ", "#", "!!python/object:os.system ", "~", "\u2028", "\\"]))
    return text[:i] + insert + text[j:]


def _fresh_repo(tmp: Path) -> Path:
    repo = tmp / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    for part in ("models", "hosts", "templates", "catalogs"):
        shutil.copytree(ROOT / part, repo / part)
    return repo


def _never_crashes(repo: Path) -> None:
    result = run(repo, None)  # raises only on a bug
    assert result.ok or result.diagnostics
    cli = CliRunner().invoke(main, ["check", "--root", str(repo)])
    assert cli.exit_code in (0, 1), cli.stderr
    assert "Traceback" not in cli.stderr and "internal error" not in cli.stderr, cli.stderr


# tmp_path is shared by the examples of a test on purpose: each starts from a fresh copy.
SETTINGS = settings(max_examples=examples(30), suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@SETTINGS
@given(doc=documents, as_host=st.booleans())
# Found by this test: a host path that systemd cannot take in a unit setting crashed the
# render; it is refused up front now (S010). Kept so every run tries it again.
@example(doc=_real_with("hosts/llm-two.yaml", ("sglang", "source_dir"), "/root/sglang 'main"), as_host=True)
@example(doc=_real_with("hosts/llm-two.yaml", ("storage", "model_root"), "/shared//models"), as_host=True)
def test_random_documents_never_crash(tmp_path: Path, doc: object, as_host: bool) -> None:
    repo = _fresh_repo(tmp_path)
    target = repo / ("hosts/llm-two.yaml" if as_host else "models/qwen3.5-122b-a10b.yaml")
    target.write_text(_dump(doc))
    _never_crashes(repo)


@SETTINGS
@given(data=st.data(), which=st.sampled_from(["hosts/llm-two.yaml", "models/qwen3.5-122b-a10b.yaml",
                                              "hosts/llm-two-full.yaml", "models/kimi-k2.5-eagle3.yaml"]))
def test_mutated_examples_never_crash(tmp_path: Path, data: st.DataObject, which: str) -> None:
    repo = _fresh_repo(tmp_path)
    target = repo / which
    text = target.read_text()
    for _ in range(data.draw(st.integers(1, 3))):
        text = _mutate(text, data)
    target.write_text(text)
    _never_crashes(repo)


# ----- hostile generators (issue 10): aliases, depth, invisible characters, numeric extremes,
# special files. Small budgets: each example runs the whole CLI.

HOSTILE = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
MODEL = "models/qwen3.5-122b-a10b.yaml"


def _hostile_check(repo: Path) -> str:
    """Run ``gen check``: findings (exit 1) or success, never a crash; return stderr."""
    started = time.monotonic()
    cli = CliRunner().invoke(main, ["check", "--root", str(repo)])
    assert cli.exit_code in (0, 1), cli.stderr
    assert "Traceback" not in cli.stderr and "internal error" not in cli.stderr, cli.stderr
    assert time.monotonic() - started < 20  # generous: proves no hang (measured below 2 s)
    return cli.stderr


@HOSTILE
@given(fan=st.integers(2, 12), levels=st.integers(1, 9), cycle=st.booleans())
def test_alias_bombs_end_in_findings(tmp_path: Path, fan: int, levels: int, cycle: bool) -> None:
    repo = _fresh_repo(tmp_path)
    text = "a: &a [x]\n" + "".join(f"l{i}: &l{i} [{', '.join(['*' + ('a' if i == 0 else f'l{i - 1}')] * fan)}]\n"
                                 for i in range(levels))
    (repo / MODEL).write_text(text + ("z: &z [*z, *z]\n" if cycle else ""))
    assert "error[" in _hostile_check(repo)


@HOSTILE
@given(depth=st.integers(60, 5000), opener=st.sampled_from(["[", "{", "- ", "a:\n"]), where=st.sampled_from([MODEL, "hosts/llm-two.yaml"]))
def test_deep_nesting_ends_in_findings(tmp_path: Path, depth: int, opener: str, where: str) -> None:
    repo = _fresh_repo(tmp_path)
    if opener == "a:\n":
        text = "".join(" " * i + "a:\n" for i in range(min(depth, 400)))
    else:
        text = opener * depth + "x"
    (repo / where).write_text(text)
    _hostile_check(repo)


@HOSTILE
@given(char=st.characters(categories=["Cc", "Cf", "Zl", "Zp"]),
       field=st.sampled_from(["description", "served_model_name", "dtype", "weights.path"]))
def test_invisible_characters_are_positioned_errors_never_render_failures(tmp_path: Path, char: str, field: str) -> None:
    repo = _fresh_repo(tmp_path)
    text = (repo / MODEL).read_text()
    key = field.split(".")[-1]
    start = text.index(f"{key}: ") + len(key) + 2
    end = text.index("\n", start)
    value = text[start:end]
    escaped = value + f"\\U{ord(char):08X}"
    (repo / MODEL).write_text(text[:start] + '"' + escaped.replace('"', '\\"') + '"' + text[end:])
    stderr = _hostile_check(repo)
    assert f"error[S008]: '{field}' contains the control or invisible character U+{ord(char):04X}" in stderr, stderr


@HOSTILE
@given(value=st.one_of(st.sampled_from([".nan", ".inf", "-.inf", "1e999", "-1e999", "99999999999999999999",
                                        "-1", "0", "0x7fffffffffffffff", "1e-999"]),
                       st.integers(-10**30, 10**30).map(str)),
       field=st.sampled_from(["size_gb", "shards", "params_b", "tp", "num_steps", "eagle_topk",
                              "num_draft_tokens", "mem_fraction_static"]))
def test_numeric_extremes_never_crash(tmp_path: Path, value: str, field: str) -> None:
    repo = _fresh_repo(tmp_path)
    text = (repo / MODEL).read_text()
    start = text.index(f"{field}: ") + len(field) + 2
    end = min(i for i in (text.find("\n", start), text.find(" ", start)) if i != -1)
    (repo / MODEL).write_text(text[:start] + value + text[end:])
    _hostile_check(repo)


@HOSTILE
@given(kind=st.sampled_from(["fifo", "dev-zero", "dev-null", "etc-link", "self-link", "dangling", "folder", "socket-like"]),
       where=st.sampled_from(["models", "hosts"]), name=st.sampled_from(["x.yaml", "llm-two.yml", "qwen3.5-122b-a10b.yaml"]))
def test_special_files_end_in_findings(tmp_path: Path, kind: str, where: str, name: str) -> None:
    repo = _fresh_repo(tmp_path)
    target = repo / where / name
    if target.exists():
        target.unlink()
    make = {"fifo": lambda: os.mkfifo(target), "dev-zero": lambda: os.symlink("/dev/zero", target),
            "dev-null": lambda: os.symlink("/dev/null", target), "etc-link": lambda: os.symlink("/etc/passwd", target),
            "self-link": lambda: os.symlink(target.name, target), "dangling": lambda: os.symlink("/nonexistent", target),
            "folder": lambda: target.mkdir(), "socket-like": lambda: os.mkfifo(target)}
    make[kind]()
    stderr = _hostile_check(repo)
    assert f"{where}/{name}: error[" in stderr, stderr
    assert "root:x:0:0" not in stderr  # a linked secret never reaches the output


def test_one_hostile_repository_combining_the_attacks(tmp_path: Path) -> None:
    """Every class of issue 10 items 5, 7-10, 13 at once: all reported, in one run, quickly."""
    repo = _fresh_repo(tmp_path)
    laughs = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    (repo / "models/laughs.yaml").write_text(laughs)
    (repo / "models/deep.yaml").write_text("[" * 200_000)
    os.mkfifo(repo / "models/pipe.yaml")
    os.symlink("/dev/zero", repo / "models/zero.yaml")
    (repo / "hosts/dir.yaml").mkdir()
    (repo / "hosts/llm-two.yml").write_text((repo / "hosts/llm-two.yaml").read_text())
    (repo / "models/many.yaml").write_text("".join(f"junk{i}: 1\n" for i in range(20_000)))
    gpu_a = (repo / "hosts/gpu-a.yaml").read_text()
    (repo / "hosts/gpu-a.yaml").write_text(gpu_a.replace("listen: 127.0.0.1", "listen: 10.1.2.300")
                                           .replace("- name: deepseek", "- name: 'a:b'"))
    model = (repo / "models/kimi-k2.5-eagle3.yaml").read_text()
    (repo / "models/kimi-k2.5-eagle3.yaml").write_text(
        model.replace("size_gb:", "size_gb: .nan #").replace("description:", 'description: "\\x85" #'))
    started = time.monotonic()
    stderr = _hostile_check(repo)
    elapsed = time.monotonic() - started
    for expected in ("models/laughs.yaml:4:24: error[Y013]", "models/deep.yaml:1:65: error[Y003]",
                     "models/pipe.yaml: error[Y009]", "models/zero.yaml: error[Y009]", "hosts/dir.yaml: error[Y009]",
                     "hosts/llm-two.yml: error[R009]", "models/many.yaml:", "error[S012]: 'services[0].listen'",
                     "error[S007]: 'services[0].name'", "error[S011]: 'weights.size_gb'", "U+0085"):
        assert expected in stderr, (expected, stderr)
    assert elapsed < 10, elapsed  # measured about 1 s; several of these hung or crashed before
