"""``gen import``'s library: splitting pasted commands, grouping flags, the manifest it prints.

Uses the committed catalogs of the real SGLang 0.5.9 and 0.5.23; the real parser's view
of the same commands is in tests/test_sglang_oracle.py.
"""

from __future__ import annotations

import shutil

from pathlib import Path

import pytest
from import_render import manifest_data
from repo_builder import host_yaml, write_repo
from ruamel.yaml import YAML

from generator.sglang.catalog import Catalog, known_pins, load_catalog
from generator.importer.cmdline import split_command
from generator.errors import Diagnostics, Position
from generator.importer.build import ImportResult, import_command
from generator.load.manifests import load_file
from generator.pipeline.fleet import run
from generator.load.schema import MODEL_SCHEMA, validate

ROOT = Path(__file__).resolve().parent.parent
WRONG = ROOT / "tests" / "fixtures" / "wrong-commands.yaml"


def catalogs(pin: str) -> tuple[Catalog, list[Catalog]]:
    return load_catalog(ROOT, pin), [load_catalog(ROOT, p) for p in known_pins(ROOT) if p != pin]


def do_import(text: str, pin: str = "0.5.9", source: str = "<command>", **kw: object) -> ImportResult:
    cat, others = catalogs(pin)
    return import_command(text, source, cat, others, **kw)  # type: ignore[arg-type]


def words(text: str, path: str = "t") -> tuple[list[str], list[str]]:
    diags = Diagnostics()
    cmd = split_command(text, path, diags)
    return [w.text for w in cmd.words], [f"{d.code}@{d.pos.line}:{d.pos.col}" for d in diags.items]


# ----- splitting -----


def test_split_shell_forms() -> None:
    text = ("CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server \\\n"
            "  --model-path '/m/a b' \\\n"
            "  --served-model-name \"x \\\"y\\\"\" # a comment\n")
    assert words(text) == (["CUDA_VISIBLE_DEVICES=0,1", "python3", "-m", "sglang.launch_server",
                            "--model-path", "/m/a b", "--served-model-name", 'x "y"'], [])


def test_split_reports_what_it_cannot_read() -> None:
    assert words("python -m x --a $MODEL\n--b 1 | tee log")[1] == ["I002@1:17", "I003@2:1", "I004@2:7"]
    assert words("--a 'open")[1] == ["I001@1:5"]


def test_split_unit_takes_exec_start_and_environment() -> None:
    unit = ("[Service]\nEnvironment=A=1 \"B=two words\"\nExecStart=-/usr/bin/python -m sglang.launch_server \\\n"
            "  --model-path /m --served-model-name 100%%-$$x\nRestart=always\n")
    diags = Diagnostics()
    cmd = split_command(unit, "old.service", diags)
    assert [w.text for w in cmd.words] == ["/usr/bin/python", "-m", "sglang.launch_server",
                                           "--model-path", "/m", "--served-model-name", "100%-$x"]
    assert [w.text for w in cmd.unit_env] == ["A=1", "B=two words"]
    assert cmd.words[3].pos == Position("old.service", 4, 3) and not diags.items


# ----- importing -----


def test_model_card_line_becomes_structured_manifest() -> None:
    r = do_import("SGLANG_ENABLE_SPEC_V2=1 CUDA_VISIBLE_DEVICES=0,1,2,3 python -m sglang.launch_server "
                  "--model-path /shared/models/Qwen3.5-122B-A10B --tp 4 --speculative-algo NEXTN "
                  "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 "
                  "--reasoning-parser qwen3 --tool-call-parser qwen3_coder --mem-fraction-static 0.85 "
                  "--trust-remote-code --dtype bfloat16 --context-length 262144 --served-model-name q "
                  "--port 30000 --host 0.0.0.0 --chunked-prefill-size=8192 --enable-metrics",
                  size_gb=234)
    assert r.ok and r.manifest is not None
    data = YAML(typ="safe").load(r.manifest)
    assert data == {
        "name": "q",
        "weights": {"path": "/shared/models/Qwen3.5-122B-A10B", "size_gb": 234},
        "served_model_name": "q", "dtype": "bfloat16", "trust_remote_code": True,
        "context_length": 262144, "parallel": {"tp": 4},
        "speculative": {"algorithm": "NEXTN", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4},
        "parsers": {"reasoning": "qwen3", "tool_call": "qwen3_coder"},
        "memory": {"mem_fraction_static": 0.85},
        "args": {"--chunked-prefill-size": 8192, "--enable-metrics": True},
        "env": {"SGLANG_ENABLE_SPEC_V2": "1"},
    }
    # Every normalization is a comment in the manifest and a warning on stderr.
    assert "# F101: '--tp' is an abbreviation of '--tp-size'" in r.manifest
    assert "# F101: '--speculative-algo' is an abbreviation of '--speculative-algorithm'" in r.manifest
    assert "# written as '--chunked-prefill-size=8192'" in r.manifest
    assert "'--port 30000' dropped" in r.manifest and "'CUDA_VISIBLE_DEVICES=0,1,2,3' dropped" in r.manifest
    # X103 (catalogs/rules.yaml): SGLang rewrites NEXTN to EAGLE; a comment too.
    assert sorted(d.code for d in r.diagnostics) == ["F101", "F101", "I008", "I008", "I008", "X103"]
    assert "# X103: speculative algorithm NEXTN is rewritten by SGLang to EAGLE" in r.manifest


def test_cross_flag_rules_apply() -> None:
    """Every rule that needs no host runs on the imported command (generator/sglang/rules/)."""
    r = do_import("python -m sglang.launch_server --model-path /m --speculative-algorithm EAGLE3 "
                  "--speculative-eagle-topk 1 --speculative-num-draft-tokens 16", pin="0.5.9")
    assert r.manifest is None
    assert [(d.code, d.pos.col) for d in r.diagnostics if d.is_error] == [("X009", 48), ("X002", 79)]
    r = do_import("sglang serve --model-path /m --speculative-algorithm MTP --served-model-name a:b",
                  pin="0.5.23")
    assert [d.code for d in r.diagnostics if d.is_error] == ["X001", "X020"]


def test_unknown_size_and_repo_id_are_left_to_fill_in(tmp_path: Path) -> None:
    r = do_import("sglang serve --model-path moonshotai/Kimi-K2.5 --tp 8", pin="0.5.23")
    assert r.ok and r.manifest is not None
    data = YAML(typ="safe").load(r.manifest)
    assert data["weights"] == {"path": None, "size_gb": None} and data["name"] == "kimi-k2.5"
    assert ("# REQUIRED: 'moonshotai/Kimi-K2.5' is a Hugging Face repo id, not a local folder; download it "
            "under the host's model_root (`huggingface-cli download moonshotai/Kimi-K2.5 --local-dir "
            "<model_root>/Kimi-K2.5`)") in r.manifest
    assert "# REQUIRED: size of the weights on disk in GB" in r.manifest
    assert sorted(d.code for d in r.diagnostics) == ["F101", "I007", "I007"]  # --tp abbreviates
    # Until filled in, the manifest does not validate: it cannot be deployed by accident.
    diags = Diagnostics()
    path = tmp_path / "m.yaml"
    path.write_text(r.manifest)
    doc = load_file(path, "m.yaml", diags)
    assert doc is not None and not validate(doc, MODEL_SCHEMA, diags)
    assert {d.code for d in diags.items} == {"S002"}  # null where a path and a number belong


@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_imported_manifest_renders_the_same_flags(pin: str, tmp_path: Path) -> None:
    """Round trip: the printed manifest, rendered by gen, passes the same flags as the command."""
    command = ("python -m sglang.launch_server --model-path /shared/models/m --tp-size 2 "
               "--speculative-algorithm EAGLE3 --speculative-draft-model-path /shared/models/d "
               "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 "
               "--schedule-conservativeness 0.3 --chat-template=-odd.jinja --log-level warning "
               "--json-model-override-args '{\"a\": [1, 2]}' --served-model-name 'has space'")
    r = do_import(command, pin=pin, name="m", size_gb=10)
    assert r.ok and r.manifest is not None, [str(d) for d in r.diagnostics]
    root = write_repo(tmp_path, {"h": host_yaml("h", pin=pin, services=(
        "  - {name: s, model: m, port: 30000, gpus: [0, 1]}\n"))}, {"m": r.manifest})
    shutil.copytree(ROOT / "templates", root / "templates")  # templates/ is read as regular files only (Y009)
    (root / "catalogs").symlink_to(ROOT / "catalogs")
    result = run(root, None)
    assert result.ok, [str(d) for d in result.diagnostics]
    [svc] = result.renders[0].services
    rendered = dict((g.words[0].split("=")[0], g.words[1:] or g.words[0].split("=")[1:])
                    for g in svc.argv.groups)
    tp = "--tensor-parallel-size" if pin == "0.5.9" else "--tp-size"
    assert rendered == {
        "--model-path": ("/shared/models/m",), "--served-model-name": ("has space",),
        "--host": ("127.0.0.1",), "--port": ("30000",), tp: ("2",),
        "--speculative-algorithm": ("EAGLE3",), "--speculative-draft-model-path": ("/shared/models/d",),
        "--speculative-num-steps": ("3",), "--speculative-eagle-topk": ("1",),
        "--speculative-num-draft-tokens": ("4",), "--schedule-conservativeness": ("0.3",),
        "--chat-template": ["-odd.jinja"], "--log-level": ("warning",),
        "--json-model-override-args": ('{"a": [1, 2]}',),
    }


def test_errors_print_no_manifest_and_all_findings() -> None:
    r = do_import("python -m sglang.launch_server --model-path /m --num-speculative-tokens 16 "
                  "--tool-call-parser qwen3 --tp-size x extra", pin="0.5.9")
    assert r.manifest is None
    assert [(d.code, d.pos.col) for d in r.diagnostics if d.is_error] == [
        ("F001", 48), ("F003", 76), ("F004", 101), ("I006", 113)]


def test_not_a_server_command() -> None:
    r = do_import("python train.py --lr 1")
    assert r.manifest is None and [d.code for d in r.diagnostics] == ["I005"]


@pytest.mark.parametrize(("prefix", "env", "said"), [
    ("env -i PATH=/bin", {"PATH": "/bin"}, ["'env -i' dropped"]),
    ("A=1 env -i B=2", {"B": "2"}, ["'A=1' dropped: 'env -i' after it forgets it", "'env -i' dropped"]),
    ("A=1 B=2 env -u A --unset=B -uC --", {}, ["'A=1' dropped: 'env -u A'", "'B=2' dropped: 'env --unset B'",
                                               "'env -u C' dropped"]),
    ("env -v --null -- C=3", {"C": "3"}, ["'env -v' dropped", "'env --null' dropped"]),
])
def test_env_options_are_env_s_not_sglang_s(prefix: str, env: dict[str, str], said: list[str]) -> None:
    """'env -i PATH=... python -m ...' read '-i' as SGLang's first flag and the program as more."""
    r = do_import(f"{prefix} python -m sglang.launch_server --model-path /shared/models/x")
    assert r.manifest is not None, [str(d) for d in r.diagnostics]
    assert manifest_data(r.manifest).get("env", {}) == env
    for text in said:
        assert text in r.manifest, text


@pytest.mark.parametrize("prefix", ["env -C /srv", "env --chdir=/srv", "env -S x", "env -P", "env --block-signal",
                                    "env -Z"])
def test_env_options_a_unit_cannot_carry_are_refused(prefix: str) -> None:
    r = do_import(f"{prefix} python -m sglang.launch_server --model-path /shared/models/x")
    assert r.manifest is None
    assert [(d.code, d.pos.col) for d in r.diagnostics if d.is_error] == [("I009", 5)]


@pytest.mark.parametrize(("prefix", "says"), [
    ("numactl --cpunodebind=0", "NUMAMask="), ("/usr/bin/taskset -c 0-7", "CPUAffinity="), ("sudo -u x", "User="),
    ("env A=1 runuser -u x --", "User="), ("docker run img", "not a container"), ("torchrun --nproc-per-node 8", "workers"),
])
def test_a_wrapper_program_is_refused_with_what_gen_does_instead(prefix: str, says: str) -> None:
    r = do_import(f"{prefix} python -m sglang.launch_server --model-path /shared/models/x")
    [d] = [d for d in r.diagnostics if d.is_error]
    assert r.manifest is None and d.code == "I005" and says in d.message and "remove" in (d.hint or "")


def test_prefix_programs_are_known_by_their_file_name() -> None:
    r = do_import("/usr/bin/env A=1 /usr/bin/nohup python -m sglang.launch_server --model-path /shared/models/x")
    assert r.manifest is not None, [str(d) for d in r.diagnostics]
    assert manifest_data(r.manifest)["env"] == {"A": "1"}


@pytest.mark.parametrize(("tail", "found"), [
    ("--chat-template ~/t.jinja", [("I002", "~")]), ("--chat-template=~/t.jinja", [("I002", "~")]),
    ("--served-model-name x*", [("I010", "*")]), ("--served-model-name 'x*' --chat-template \\~x", []),
    ("--served-model-name a{b,c}", [("I010", "{")]), ("--served-model-name a{b}", []),
    ("--served-model-name a~b", []),
])
def test_what_a_shell_would_expand_is_said(tail: str, found: list[tuple[str, str]]) -> None:
    """gen expands nothing: a '~' the shell makes a home folder is I002 (like $HOME); a glob or
    a brace list is I010, imported as written. A unit's ExecStart= expands none of them."""
    line = f"python -m sglang.launch_server --model-path /shared/models/x {tail}"
    r = do_import(line)
    assert [(d.code, d.pos.col) for d in r.diagnostics if d.code in ("I002", "I010")] == [
        (code, line.index(char) + 1) for code, char in found]
    unit = do_import(f"[Service]\nExecStart=/p -m sglang.launch_server --model-path /shared/models/x {tail}")
    assert not [d for d in unit.diagnostics if d.code in ("I002", "I010")]


def test_wrong_commands_corpus_is_refused() -> None:
    cases = YAML(typ="safe", pure=True).load(WRONG.read_text())
    assert len(cases) >= 20
    for case in cases:
        r = do_import(case["command"], pin=case["pin"])
        errors = [d.code for d in r.diagnostics if d.is_error]
        assert r.manifest is None and case["code"] in errors, (case["why"], [str(d) for d in r.diagnostics])


def test_a_repo_id_draft_model_becomes_a_required_path_under_the_model_root(tmp_path: Path) -> None:
    r = do_import("python -m sglang.launch_server --model-path /shared/models/Kimi --speculative-algorithm "
                  "EAGLE3 --speculative-draft-model-path lightseekorg/kimi-k2.5-eagle3 --speculative-num-steps 3 "
                  "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4", model_root="/shared/models")
    assert r.ok and r.manifest is not None, [str(d) for d in r.diagnostics]
    data = YAML(typ="safe").load(r.manifest)
    assert data["speculative"]["draft_model_path"] is None
    assert "--speculative-draft-model-path" not in (data.get("args") or {})
    assert ("--local-dir /shared/models/kimi-k2.5-eagle3`) and write that absolute path here, "
            "e.g. /shared/models/kimi-k2.5-eagle3") in r.manifest
    [i007] = [d for d in r.diagnostics if d.code == "I007" and "repo id" in d.message]
    assert i007.message.startswith(
        "--speculative-draft-model-path 'lightseekorg/kimi-k2.5-eagle3' is a Hugging Face repo id")


def test_secret_flags_and_variables_are_refused_and_never_printed() -> None:
    secret, token = "sk-live-0123456789", "hf_abcdefSECRET"
    r = do_import(f"HF_TOKEN={token} python -m sglang.launch_server --model-path /m/x --api-key {secret} "
                  f"--admin-api-key={secret}2")
    assert not r.ok and r.manifest is None
    text = "\n".join(str(d) for d in r.diagnostics)
    assert secret not in text and token not in text
    assert sorted(d.code for d in r.diagnostics if d.code in ("K001", "K002")) == ["K001", "K001", "K002"]


def test_a_secret_is_redacted_from_error_messages_too() -> None:
    secret = "sk-live-0123456789"
    r = do_import(f"python -m sglang.launch_server --model-path /m/x --api-key {secret} {secret}")
    assert not r.ok and r.manifest is None
    text = "\n".join(str(d) for d in r.diagnostics)
    assert "I006" in text and secret not in text and "<secret>" in text


def test_an_unclosed_quote_says_so() -> None:
    r = do_import("python -m sglang.launch_server --model-path /m/x --served-model-name 'qwen --tp 2")
    assert not r.ok
    [d] = [d for d in r.diagnostics if d.code == "I001"]
    assert (d.pos.line, d.pos.col) == (1, 70)  # the quote itself
    assert d.message.startswith("unterminated single quote: the quote opened here is never closed")
