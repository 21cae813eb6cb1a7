"""The lower bounds in pyproject.toml are true: each is a release the code and tests work with."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
# The oldest ansible-core gen's playbook and its tests are written for: 2.19 reads a
# `!unsafe` scalar as if it were plain (what emit/ansible/yamltext.py writes for), and the
# tests evaluate the playbook with ansible.template.trust_as_template, new in 2.19.
ANSIBLE_CORE_NEEDED = Version("2.19")


def _lower_bound(package: str) -> Version:
    text = (ROOT / "pyproject.toml").read_text()
    found = re.findall(rf'"{re.escape(package)}>=([0-9][0-9.]*)[",]', text)
    assert len(found) == 1, f"pyproject.toml should name {package}>=X once, found {found}"
    return Version(found[0])


def test_ansible_core_bound_is_the_release_the_tests_use() -> None:
    assert _lower_bound("ansible-core") >= ANSIBLE_CORE_NEEDED
    from ansible.template import trust_as_template  # noqa: F401  (the 2.19 API the tests use)

    assert Version(version("ansible-core")) >= _lower_bound("ansible-core")
