"""An ansible.cfg in the repository is refused (O004) once it has an ansible/ folder.

The README runs ``ansible-playbook -i ansible/inventory.yml ansible/site.yml`` from the
repository's root, so Ansible reads the root's ansible.cfg, and that file can name plugin
folders anywhere (``filter_plugins = ./x``): Python a pull request put there, run on the
controller. The entries of ansible/ itself are test_attack_round3's.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from generator.cli.main import main


def _gen(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("link", [False, True])
def test_an_ansible_cfg_at_the_root_is_refused_by_check_and_ansible(repo_copy: Path, link: bool) -> None:
    root = str(repo_copy)
    for args in (("render", "--all"), ("ansible",), ("check",)):
        assert _gen(*args, "--root", root).exit_code == 0
    cfg = repo_copy / "ansible.cfg"
    if link:  # named, never followed
        os.symlink("/nonexistent/ansible.cfg", cfg)
    else:
        cfg.write_text("[defaults]\nfilter_plugins = ./pr_plugins\n")
    for args in (("check",), ("ansible",)):
        result = _gen(*args, "--root", root)
        assert result.exit_code == 1, (args, result.output)
        assert "ansible.cfg: error[O004]: ansible.cfg in the repository" in result.stderr, result.stderr
    cfg.unlink()
    assert _gen("check", "--root", root).exit_code == 0


def test_without_ansible_folder_an_ansible_cfg_is_the_operators_business(repo_copy: Path) -> None:
    (repo_copy / "ansible.cfg").write_text("[defaults]\n")
    assert _gen("check", "--root", str(repo_copy)).exit_code == 0  # no playbook gen wrote reads it
