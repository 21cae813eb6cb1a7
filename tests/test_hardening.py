"""Tests for templates/hardening.j2: a whole SGLang unit with the partial, judged by systemd.

The unit is rendered through Jinja with StrictUndefined, written under its real name, and
given to the real systemd 252 tools: ``systemd-analyze security --offline=yes`` must rate it
at most 3.0, ``systemd-analyze verify`` must print nothing, and ``systemd --test`` must load
it with the cache paths and read-only paths resolved as meant. No GPU is here, so that the
settings keep CUDA working is argued in the template's comments, not tested.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import jinja2
import pytest
from systemd_unquote import analyze_verify, systemd_load

from generator.systemd import exec_lines
from generator.systemd_settings import JINJA_FILTERS

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
SERVICE = "sglang-hardening-test"
UNIT = f"{SERVICE}.service"
# The program must exist for verify; this interpreter always does.
PYTHON = sys.executable

# A test-only wrapper: the real unit template belongs to the renderer.
WRAPPER = """[Unit]
Description=SGLang test unit for the hardening partial
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
{{ exec_start }}
Environment="CUDA_VISIBLE_DEVICES=0,1"
Restart=on-failure
RestartSec=5
TimeoutStartSec=900
{% include "hardening.j2" %}

[Install]
WantedBy=multi-user.target
"""

BARE = """[Unit]
Description=SGLang test unit without hardening

[Service]
{{ exec_start }}
Restart=on-failure
"""


def _env(trim_blocks: bool = False) -> jinja2.Environment:
    """A Jinja environment like the renderer's: StrictUndefined, gen's filters."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=trim_blocks,
        keep_trailing_newline=True,
    )
    env.filters.update(JINJA_FILTERS)
    return env


def _variables(**override: object) -> dict[str, object]:
    """Representative values: the sglang user, a model root, no install under a home."""
    values: dict[str, object] = {
        "service_name": SERVICE,
        "user": "sglang",
        "bind_read_only_paths": [],
        "model_root": "/shared/models/Qwen3.5-122B-A10B",
        "exec_start": exec_lines(
            [[PYTHON, "-m", "sglang.launch_server"],
             ["--model-path", "/shared/models/Qwen3.5-122B-A10B"], ["--tp-size", "2"],
             ["--port", "30000"], ["--trust-remote-code"]]
        ),
    }
    values.update(override)
    return values


def _render(template: str = WRAPPER, trim_blocks: bool = False, **override: object) -> str:
    """Render the wrapper (which includes the partial) with representative values."""
    return _env(trim_blocks).from_string(template).render(**_variables(**override))


def _security(unit_text: str) -> tuple[float, int, str]:
    """Run ``systemd-analyze security --offline=yes --threshold=30``; score, exit, output."""
    d = Path(tempfile.mkdtemp(prefix="gen-hardening-"))
    try:
        path = d / UNIT
        path.write_text(unit_text, encoding="utf-8")
        proc = subprocess.run(
            ["systemd-analyze", "security", "--offline=yes", "--threshold=30", "--no-pager",
             str(path)],
            capture_output=True, text=True, timeout=120, check=False,
        )
    finally:
        shutil.rmtree(d)
    m = re.search(rf"Overall exposure level for {re.escape(UNIT)}: (\d+\.\d)", proc.stdout)
    assert m, proc.stdout + proc.stderr
    return float(m.group(1)), proc.returncode, proc.stdout


def _settings(unit_text: str) -> dict[str, list[str]]:
    """Setting name -> values, ignoring comment lines."""
    out: dict[str, list[str]] = {}
    for line in unit_text.split("\n"):
        if "=" in line and not line.lstrip().startswith(("#", ";")):
            key, _, value = line.partition("=")
            out.setdefault(key.strip(), []).append(value)
    return out


def test_exposure_at_most_3() -> None:
    """systemd-analyze security rates the hardened unit at most 3.0 (threshold 30 passes)."""
    score, rc, output = _security(_render())
    print(f"exposure with hardening.j2: {score}")
    assert rc == 0, output
    assert score <= 3.0, output


def test_root_with_install_under_root_stays_at_most_3() -> None:
    """The field host runs SGLang from /root as root: homes hidden, the install bound back."""
    text = _render(user="root", bind_read_only_paths=["/root/sglang-main"])
    score, rc, output = _security(text)
    print(f"exposure as root with /root/sglang-main bound read-only: {score}")
    assert rc == 0 and score <= 3.0, output
    s = _settings(text)
    assert s["ProtectHome"] == ["tmpfs"] and s["BindReadOnlyPaths"] == ["/root/sglang-main"]
    assert s["CapabilityBoundingSet"] == [""]  # root, but without any capability
    dump = systemd_load(UNIT, text.replace("[Unit]\n", "[Unit]\nDefaultDependencies=no\n", 1)).dump
    assert "\t\tBindReadOnlyPaths: /root/sglang-main:/root/sglang-main:rbind" in dump.split("\n"), dump


def test_bare_unit_fails_the_same_threshold() -> None:
    """The threshold check can fail: the same unit without the partial is rated unsafe."""
    score, rc, output = _security(_render(BARE))
    print(f"exposure without hardening.j2: {score}")
    assert score > 3.0
    assert rc != 0, output


def test_the_exposure_the_template_states_is_the_measured_one() -> None:
    """hardening.j2's comment gives the scores of the committed units: it must not go stale."""
    comment = " ".join((TEMPLATES / "hardening.j2").read_text(encoding="utf-8").split())
    m = re.search(r"gives (\d\.\d) for the rendered units that run as root.*?and (\d\.\d) for "
                  r"those that run as the sglang user.*?a bare unit gives (\d\.\d)", comment, re.S)
    assert m, "hardening.j2 no longer states the measured exposure"
    stated = {"root": float(m.group(1)), "sglang": float(m.group(2))}
    units = sorted((TEMPLATES.parent / "output").glob("*/etc/systemd/system/*.service"))
    assert units
    for unit in units:
        text = unit.read_text(encoding="utf-8")
        user = "root" if "\nUser=root\n" in text else "sglang"
        assert _security(text)[0] == stated[user], f"{unit}: not the {stated[user]} stated for {user}"
    assert _security(_render(BARE))[0] == float(m.group(3))


@pytest.mark.parametrize("trim_blocks", [False, True])
def test_verify_prints_nothing(trim_blocks: bool) -> None:
    """systemd-analyze verify has nothing to say, whatever the renderer's trim_blocks."""
    assert analyze_verify(UNIT, _render(trim_blocks=trim_blocks)) == ""


@pytest.mark.parametrize("keep_trailing_newline", [False, True])
def test_partial_text_independent_of_whitespace_settings(keep_trailing_newline: bool) -> None:
    """The partial renders the same lines, with no blank line, under common Jinja settings."""
    outputs = []
    for trim_blocks in (False, True):
        env = _env(trim_blocks)
        env.keep_trailing_newline = keep_trailing_newline
        outputs.append(env.get_template("hardening.j2").render(**_variables()))
    assert outputs[0] == outputs[1]
    assert outputs[0].endswith("ReadOnlyPaths=/shared/models/Qwen3.5-122B-A10B\n")
    assert "\n\n" not in outputs[0] and not outputs[0].startswith("\n")


def test_systemd_loads_paths_and_cache_environment() -> None:
    """The real systemd resolves %S/%C and reads the quoted paths back as written."""
    text = _render(model_root="/shared/models/eagle 3/%spool",
                   bind_read_only_paths=["/root/sglang main/%x"])
    text = text.replace("[Unit]\n", "[Unit]\nDefaultDependencies=no\n", 1)
    dump = systemd_load(UNIT, text).dump
    env = [ln.strip() for ln in dump.split("\n") if ln.startswith("\t\tEnvironment: ")]
    assert f"Environment: HOME=/var/lib/{SERVICE}" in env
    assert f"Environment: TRITON_CACHE_DIR=/var/cache/{SERVICE}/triton" in env
    assert f"Environment: XDG_CACHE_HOME=/var/cache/{SERVICE}" in env
    assert "\t\tReadOnlyPaths: /shared/models/eagle 3/%spool" in dump.split("\n")
    assert "\t\tBindReadOnlyPaths: /root/sglang main/%x:/root/sglang main/%x:rbind" in dump.split("\n")
    assert "\t\tDeviceAllow: char-nvidia* rw" in dump.split("\n")
    assert "\t\tDevicePolicy: closed" in dump.split("\n")
    assert "\t\tUser: sglang" in dump.split("\n")


def test_gpu_breaking_settings_stay_off() -> None:
    """Settings that would break CUDA/Triton on the GPU host are not set by the partial."""
    s = _settings(_render())
    assert "MemoryDenyWriteExecute" not in s  # Triton / PTX JIT need W+X memory
    assert "ProcSubset" not in s  # NVML reads /proc/driver/nvidia
    assert "PrivateDevices" not in s  # would hide /dev/nvidia*
    assert "PrivateNetwork" not in s  # the server and NCCL need the network
    assert s["DeviceAllow"] == ["char-nvidia* rw"]
    assert "~@resources" not in " ".join(s["SystemCallFilter"])  # NCCL sets CPU affinity
    assert "AF_NETLINK" in s["RestrictAddressFamilies"][0]  # getifaddrs()


def test_missing_variable_fails() -> None:
    """StrictUndefined: a renderer that forgets a variable gets an error, not a blank."""
    values = _variables()
    del values["bind_read_only_paths"]
    with pytest.raises(jinja2.UndefinedError, match="bind_read_only_paths"):
        _env().from_string(WRAPPER).render(**values)


@pytest.mark.parametrize(
    "bad", ["relative/models", "/shared/models/../../etc", "/shared//models", "/m/", '/m"x',
            "/m\\x", "/m\nx"],
)
def test_bad_paths_refused(bad: str) -> None:
    """The systemd_path filter refuses paths systemd would reject or read differently."""
    with pytest.raises(ValueError):
        _render(model_root=bad)
    with pytest.raises(ValueError):
        _render(bind_read_only_paths=[bad])
