"""CLI tests: ``gen sglang snapshot|diff``, ``gen import``, ``gen check --sglang`` (click CliRunner).

The snapshot test runs the real probe against the real SGLang 0.5.9 venv (marker ``sglang``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sglang_env import sglang_python

from generator.cli.main import main
from generator.live.target import BadAddressError, target_for_host
from generator.errors import Diagnostics
from generator.load.sources import load_sources

ROOT = Path(__file__).resolve().parent.parent


def gen(*args: str, stdin: str | None = None) -> Result:
    result = CliRunner().invoke(main, list(args), input=stdin)
    print("stdout:", result.stdout, "\nstderr:", result.stderr)  # shown when a test fails
    return result


# ----- gen sglang diff -----


def test_diff_real_pins() -> None:
    r = gen("sglang", "diff", "0.5.9", "0.5.23", "--root", str(ROOT))
    assert r.exit_code == 0
    assert r.stdout.startswith("SGLang 0.5.9 -> 0.5.23: 331 -> 531 flags; ")
    assert "  ~ --enable-dp-attention -> --attn-dp-size  (deprecated alias in the new pin)\n" in r.stdout


def test_diff_header_counts_agree_with_the_sections() -> None:
    import re

    r = gen("sglang", "diff", "0.5.9", "0.5.23", "--root", str(ROOT))
    flags_part = r.stdout.split("\nSGLang 0.5.9 -> 0.5.23 environment:", 1)[0]  # the env diff follows
    header = flags_part.splitlines()[0]
    counts = {kind: int(n) for n, kind in re.findall(r"(\d+) (added|removed|renamed|deprecated|changed)", header)}
    sections = {m.group(1).lower(): int(m.group(2)) for m in re.finditer(r"^(\w+) \((\d+)\):$", flags_part, re.M)}
    assert sections == counts, (header, sections)
    # each section's count is its number of flags (entries start with "  X --flag")
    for title in ("Removed", "Renamed", "Deprecated", "Added", "Changed"):
        block = flags_part.split(f"\n{title} (", 1)[1].split("\n\n", 1)[0]
        entries = [ln for ln in block.splitlines()[1:] if re.match(r"^  [-~!+*] ", ln)]
        assert len(entries) == counts[title.lower()], title


def test_diff_used_marks_the_flags_the_repo_renders() -> None:
    r = gen("sglang", "diff", "0.5.9", "0.5.23", "--used", "--root", str(ROOT))
    assert r.exit_code == 0
    assert "; 5 of them used here" in r.stdout.splitlines()[0]
    assert ("  * --tp-size  [used by gpu-a/deepseek, gpu-b/deepseek, llm-two-full/kimi, llm-two/qwen]"
            in r.stdout.splitlines())
    marked = [ln for ln in r.stdout.splitlines() if "[used by" in ln]
    assert len(marked) == 5
    assert "  * --attention-backend  [used by llm-two/qwen]" in r.stdout.splitlines()
    plain = gen("sglang", "diff", "0.5.9", "0.5.23", "--root", str(ROOT))
    assert "[used by" not in plain.stdout


def test_diff_unknown_pin_is_a_usage_error() -> None:
    r = gen("sglang", "diff", "0.5.9", "9.9.9", "--root", str(ROOT))
    assert r.exit_code == 2 and "no SGLang flag catalog for pin '9.9.9'" in r.stderr


# ----- gen sglang snapshot -----


def test_snapshot_usage_errors() -> None:
    assert gen("sglang", "snapshot").exit_code == 2
    assert gen("sglang", "snapshot", "--python", "x", "--host", "y").exit_code == 2
    r = gen("sglang", "snapshot", "--host", "nope", "--root", str(ROOT))
    assert r.exit_code == 2 and "no host 'nope'" in r.stderr


def test_snapshot_missing_python_is_an_environment_error(tmp_path: Path) -> None:
    r = gen("sglang", "snapshot", "--python", str(tmp_path / "no-python"), "--out", str(tmp_path / "c.json"))
    assert r.exit_code == 1 and "cannot run" in r.stderr and not (tmp_path / "c.json").exists()


def test_snapshot_target_from_inventory() -> None:
    """The snapshot reaches a host through live/target.py's one Target, as verify does."""
    host = load_sources(ROOT, Diagnostics()).hosts["llm-two"]
    # llm-two writes ssh.user but no port: the default 22 must not override an ssh config's Port.
    assert target_for_host(host, ssh_args=("-F", "/dev/null")).ssh_argv() == [
        "ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-l", "root", "-F", "/dev/null",
        "--", "llm-two.lan"]
    assert (host.ssh_user, host.ssh_port) == ("root", 22)  # resolved: what ansible uses
    written = dataclasses.replace(host, ssh_user="ops", ssh_port=2222, ssh_written=("user", "port"))
    assert target_for_host(written).ssh_argv() == [
        "ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-l", "ops", "-p", "2222", "--", "llm-two.lan"]
    for bad in ("-oProxyCommand=touch /tmp/x", "", "host name"):
        with pytest.raises(BadAddressError, match="not an SSH address"):
            target_for_host(dataclasses.replace(host, address=bad)).ssh_argv()


@pytest.mark.sglang
def test_snapshot_python_real_sglang(tmp_path: Path) -> None:
    out = tmp_path / "0.5.9.json"
    r = gen("sglang", "snapshot", "--python", sglang_python("0.5.9"), "--out", str(out))
    assert r.exit_code == 0 and r.stdout.startswith(f"wrote     {out}: pin 0.5.9, SGLang 0.5.9 (pypi), 331 flags")
    fresh, committed = json.loads(out.read_text()), json.loads((ROOT / "catalogs/sglang/0.5.9.json").read_text())
    for doc in (fresh, committed):  # the date differs, and with it the file's own digest
        doc["captured"].pop("date"), doc["captured"].pop("sha256")
    assert fresh == committed
    # Again into the default place of a repo that already holds it: nothing is rewritten.
    repo = tmp_path / "repo"
    (repo / "catalogs" / "sglang").mkdir(parents=True)
    target = repo / "catalogs" / "sglang" / "0.5.9.json"
    target.write_bytes((ROOT / "catalogs/sglang/0.5.9.json").read_bytes())
    before = target.stat().st_mtime_ns
    r = gen("sglang", "snapshot", "--python", sglang_python("0.5.9"), "--root", str(repo))
    assert r.exit_code == 0 and r.stdout.startswith("unchanged ") and target.stat().st_mtime_ns == before


# ----- gen import -----


def test_import_command_after_dashes() -> None:
    r = gen("import", "--sglang", "0.5.9", "--root", str(ROOT), "--size-gb", "595", "--",
            "python", "-m", "sglang.launch_server", "--model-path", "/shared/models/Kimi-K2.5",
            "--tp", "8", "--trust-remote-code")
    assert r.exit_code == 0
    assert "name: kimi-k2.5\n" in r.stdout and "  tp: 8\n" in r.stdout
    assert "<command>:1:70: warning[F101]: '--tp' is an abbreviation" in r.stderr


def test_import_a_whole_command_in_one_quoted_argument() -> None:
    r = gen("import", "--sglang", "0.5.9", "--root", str(ROOT), "--size-gb", "595", "--",
            "python -m sglang.launch_server --model-path /shared/models/Kimi-K2.5 --tp 8 --trust-remote-code")
    assert r.exit_code == 0
    assert "name: kimi-k2.5\n" in r.stdout and "  tp: 8\n" in r.stdout
    assert "<command>:1:70: warning[F101]: '--tp' is an abbreviation" in r.stderr


def test_import_an_unclosed_quote_in_one_argument_says_so() -> None:
    r = gen("import", "--sglang", "0.5.9", "--root", str(ROOT), "--",
            "python -m sglang.launch_server --model-path /m/x --served-model-name 'qwen")
    assert r.exit_code == 1
    assert "<command>:1:70: error[I001]: unterminated single quote: the quote opened here is never closed" in r.stderr


def test_import_with_host_names_its_model_root_for_a_repo_id() -> None:
    r = gen("import", "--host", "llm-two", "--root", str(ROOT), "--",
            "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.5-122B-A10B")
    assert r.exit_code == 0
    assert "--local-dir /shared/models/Qwen3.5-122B-A10B`" in r.stdout
    assert "  path: null\n" in r.stdout


def test_import_never_prints_a_secret() -> None:
    r = gen("import", "--sglang", "0.5.23", "--root", str(ROOT), "--",
            "python", "-m", "sglang.launch_server", "--model-path", "/m/x", "--api-key", "sk-TOPSECRET")
    assert r.exit_code == 1 and r.stdout == ""
    assert "sk-TOPSECRET" not in r.stdout + r.stderr
    assert "error[K001]: --api-key carries a secret" in r.stderr


def test_import_incident_1_from_stdin_refused() -> None:
    text = ("python -m sglang.launch_server --model-path /m \\\n  --speculative-algorithm EAGLE3 "
            "--speculative-eagle-topk 1 \\\n  --num-speculative-tokens 16\n")
    r = gen("import", "--host", "llm-two", "--root", str(ROOT), "--file", "-", stdin=text)
    assert r.exit_code == 1 and r.stdout == ""
    assert "<stdin>:3:3: error[F001]: unknown flag '--num-speculative-tokens'" in r.stderr
    assert "gen: no manifest printed" in r.stderr


def test_import_unit_file(tmp_path: Path) -> None:
    unit = tmp_path / "old.service"
    unit.write_text("[Service]\nExecStart=/opt/py -m sglang.launch_server --model-path /m \\\n"
                    "  --cuda-graph-max-bs 64\n")
    r = gen("import", "--sglang", "0.5.23", "--root", str(ROOT), "--file", str(unit))
    assert r.exit_code == 1
    assert f"{unit}:3:3: error[F007]: '--cuda-graph-max-bs' was removed in SGLang 0.5.23" in r.stderr
    r = gen("import", "--sglang", "0.5.9", "--root", str(ROOT), "--file", str(unit))
    assert r.exit_code == 0 and "  --cuda-graph-max-bs: 64\n" in r.stdout


def test_import_usage_errors() -> None:
    assert gen("import", "--root", str(ROOT), "--", "x").exit_code == 2
    assert gen("import", "--sglang", "0.5.9", "--root", str(ROOT)).exit_code == 2
    assert gen("import", "--sglang", "1.2.3", "--root", str(ROOT), "--", "sglang", "serve").exit_code == 2


# ----- gen check --sglang -----


def test_check_examples_against_0_5_23() -> None:
    """Our examples on 0.5.23: no flag breaks; the unit would spell TP as --tp-size."""
    r = gen("check", "--sglang", "0.5.23", "--root", str(ROOT))
    assert r.exit_code == 0
    assert r.stdout.splitlines() == [
        "gpu-a/deepseek (pin 0.5.9 -> 0.5.23): ok",
        "  renders no longer: --tensor-parallel-size 16",
        "  renders instead:   --tp-size 16",
        "gpu-b/deepseek (pin 0.5.9 -> 0.5.23): ok",
        "  renders no longer: --tensor-parallel-size 16",
        "  renders instead:   --tp-size 16",
        "llm-two/qwen (pin 0.5.9 -> 0.5.23): ok",
        "  renders no longer: --tensor-parallel-size 4",
        "  renders instead:   --tp-size 4",
        "llm-two-full/kimi (pin 0.5.9 -> 0.5.23): ok",
        "  renders no longer: --tensor-parallel-size 8",
        "  renders instead:   --tp-size 8",
        "gen: 0 of 4 service(s) would break on SGLang 0.5.23",
    ]


def test_check_lists_services_that_break(repo_copy: Path) -> None:
    model = repo_copy / "models" / "kimi-k2.5-eagle3.yaml"
    model.write_text(model.read_text() + "args:\n  --cuda-graph-max-bs: 64\n  --mamba-scheduler-strategy: auto\n"
                     "  --enable-dp-attention: true\n")
    host = repo_copy / "hosts" / "llm-two.yaml"
    host.write_text(host.read_text().replace("    gpus: [0, 1, 2, 3]\n",
                                             "    gpus: [0, 1, 2, 3]\n    args: {--nsa-decode-backend: flashmla_sparse}\n"))
    assert gen("check", "--root", str(repo_copy)).exit_code == 1  # output/ is stale, fine
    r = gen("check", "--sglang", "0.5.23", "--root", str(repo_copy))
    assert r.exit_code == 1
    out = r.stdout
    assert "llm-two/qwen (pin 0.5.9 -> 0.5.23): BREAKS\n  hosts/llm-two.yaml:40:12: error[F007]: " \
           "'--nsa-decode-backend' was removed in SGLang 0.5.23" in out
    kimi = out[out.index("llm-two-full/kimi"):]
    assert kimi.startswith("llm-two-full/kimi (pin 0.5.9 -> 0.5.23): BREAKS\n")
    assert "models/kimi-k2.5-eagle3.yaml:31:3: error[F007]: '--cuda-graph-max-bs' was removed" in kimi
    assert "use '--mamba-radix-cache-strategy'" in kimi
    assert "warning[F104]: '--enable-dp-attention' is deprecated in SGLang 0.5.23" in kimi
    assert out.endswith("gen: 2 of 4 service(s) would break on SGLang 0.5.23\n")


def test_check_against_a_release_only_the_history_knows() -> None:
    """0.4.6 has no committed catalog: the flags are checked against one built from the
    flag history (AST), and the report says how approximate that is."""
    r = gen("check", "--sglang", "0.4.6", "--root", str(ROOT))
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert lines[0].startswith("note: approximate: from the AST of server_args.py of SGLang 0.4.6.post5: ")
    assert "no environment catalog (env: keys are not checked)" in lines[0]
    assert "llm-two/qwen (pin 0.5.9 -> 0.4.6): BREAKS" in lines
    assert any("error[F003]: invalid choice for '--tool-call-parser': 'qwen3_coder'" in ln for ln in lines)
    assert lines[-1] == "gen: 2 of 4 service(s) would break on SGLang 0.4.6"


def test_check_against_a_release_nobody_knows_is_a_usage_error() -> None:
    r = gen("check", "--sglang", "0.3.9", "--root", str(ROOT))
    assert r.exit_code == 2
    assert "no SGLang flag catalog for pin '0.3.9'" in r.output
