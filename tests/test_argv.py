"""plan/argv.py: weights.quantization is informational; F105 says so when it reads like the flag."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from generator.cli.main import main


def _check(repo: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", "--root", str(repo)])
    return result.exit_code, result.stderr


def test_a_quantization_choice_warns_that_it_is_not_rendered(repo_copy: Path) -> None:
    model = repo_copy / "models/kimi-k2.5-eagle3.yaml"
    model.write_text(model.read_text().replace("quantization: int4 (compressed-tensors)",
                                               "quantization: compressed-tensors"))
    code, stderr = _check(repo_copy)
    assert code == 0, stderr  # a warning: output/ unchanged, nothing rendered differently
    assert ("models/kimi-k2.5-eagle3.yaml:12:17: warning[F105]: weights.quantization 'compressed-tensors' "
            "is informational: gen renders no --quantization (to pass it to SGLang, write args: "
            "{--quantization: compressed-tensors})") in stderr.splitlines()


def test_free_text_quantization_and_an_explicit_flag_are_quiet(repo_copy: Path) -> None:
    code, stderr = _check(repo_copy)  # the example says "int4 (compressed-tensors)"
    assert code == 0 and "F105" not in stderr, stderr
