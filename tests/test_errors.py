"""Every error class gen defines derives from GenError and the built-in it resembles.

The classes are found by importing every module of ``generator`` and reading what each
defines, so a new error class elsewhere is checked without being listed here.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

from click.testing import CliRunner

import generator
from generator.cli.common import EXIT_CODES_HELP
from generator.cli.main import main
from generator.errors import ExitCode, GenError

ROOT = Path(__file__).resolve().parent.parent


def _error_classes() -> list[type[BaseException]]:
    modules = [importlib.import_module(info.name)
               for info in pkgutil.walk_packages(generator.__path__, "generator.")
               if not info.name.endswith("__main__")]
    # A probe (a module's PROBE file) runs inside the host's SGLang venv, where generator cannot be
    # imported: its own exceptions stay inside it and never reach gen's error handling.
    probes = {Path(m.PROBE).resolve() for m in modules if isinstance(getattr(m, "PROBE", None), (str, Path))}
    assert probes, "no module names a PROBE: the exclusion below would be dead"
    found = []
    for module in modules:
        if module.__file__ is not None and Path(module.__file__).resolve() in probes:
            continue
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == module.__name__:
                found.append(obj)
    return found


def test_every_error_class_is_a_gen_error_and_a_builtin() -> None:
    classes = _error_classes()
    names = {c.__name__ for c in classes}
    assert {"RulesFormatError", "RemoteError", "WriteError", "InputError"} <= names, names
    for cls in classes:
        if cls is GenError:
            continue
        assert issubclass(cls, GenError), f"{cls.__module__}.{cls.__name__} is not a GenError"
        builtins = [b for b in cls.__mro__ if b.__module__ == "builtins"
                    and b not in (Exception, BaseException, object)]
        assert builtins, f"{cls.__name__} inherits no built-in error it resembles"
        assert isinstance(cls.exit_code, ExitCode)


def test_exit_codes_are_0_to_4_and_documented_alike() -> None:
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 4]
    helped = [int(n) for n in re.findall(r"^\s+(\d)\s", EXIT_CODES_HELP, re.M)]
    assert helped == [0, 1, 2, 3, 4]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    assert [int(n) for n in re.findall(r"^\| (\d) \|", section, re.M)] == [0, 1, 2, 3, 4]


def test_no_bare_exit_code_numbers_in_the_cli() -> None:
    # gen's own exit codes go through ExitCode, so a code's meaning is written once. (The
    # on-host script and the SGLang probe run in another interpreter, without gen.)
    bare = re.compile(r"(sys\.exit|return|exit_code\s*=)\s*\(?\s*[1-4]\s*\)?\s*$", re.M)
    for path in sorted((ROOT / "generator" / "cli").rglob("*.py")) + [ROOT / "generator/live/fleet.py"]:
        assert not bare.search(path.read_text(encoding="utf-8")), path


def test_exit_code_follows_the_builtin_unless_the_class_says() -> None:
    class Lookup(GenError, KeyError):
        """A lookup by name."""

    class Disk(GenError, OSError):
        """A file problem."""

    class Bad(GenError, ValueError):
        """Invalid data."""

    class Own(GenError, OSError):
        """Sets its own."""

        exit_code = ExitCode.FINDINGS

    assert [c.exit_code for c in (Lookup, Disk, Bad, Own)] == [
        ExitCode.USAGE, ExitCode.ENVIRONMENT, ExitCode.FINDINGS, ExitCode.FINDINGS]


def test_a_broken_rules_file_is_a_finding_not_an_internal_error(repo_copy: Path) -> None:
    rules = repo_copy / "catalogs" / "rules.yaml"
    rules.write_text(rules.read_text().replace("    code: X002\n", "    code: X102\n", 1))
    out = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert out.exit_code == ExitCode.FINDINGS, out.output
    assert "internal error" not in out.output and "Traceback" not in out.output
    assert "X102" in out.output
