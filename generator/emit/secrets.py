"""Secrets: where they live on a host, which flags and variables carry them, how SGLang gets them.

gen never holds a secret. A flag or variable that carries one is refused in ``args:`` and
``env:`` (of models and services) with a positioned error and the fix. Two ways remain:

* ``secret_args: [--api-key, ...]`` on a service: the operator writes the values into
  ``/etc/credstore/sglang-<svc>.yaml`` on the host (root, 0600; keys are the flag names
  in dash form, as SGLang's own ``--config FILE.yaml`` reads them). The unit loads it with
  ``LoadCredential=`` (systemd copies it, as root, into the service's private
  ``$CREDENTIALS_DIRECTORY``) and starts SGLang with ``--config
  ${CREDENTIALS_DIRECTORY}/sglang-secrets.yaml``. The key is then in neither the unit, the
  argv (``ps``), ``output/`` nor the playbook.
* ``secret_env: true``: variables (HF_TOKEN, ...) from ``/etc/sglang/secrets/<svc>.env``
  (root, 0600), read by systemd through EnvironmentFile= as root.

Both paths sit in folders gen never renders into, and each is ``prefix + name + suffix``
with one fixed prefix and suffix per folder, so no service name (which cannot hold ``/``)
can make a rendered file land on another service's secret file.
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.errors import Diagnostics
from generator.plan.argv import ServiceArgv
from generator.plan.placement import Placement
from generator.sglang.catalog import Action, Catalog
from generator.sglang.flags import CheckedArg
from generator.secrecy import credential_in, is_secret_env_name
from generator.sglang.secret_flags import is_secret_action
from generator.systemd import ExecVariable

SECRET_ENV_DIR = "etc/sglang/secrets"
CREDSTORE_DIR = "etc/credstore"
CREDENTIAL_NAME = "sglang-secrets.yaml"  # SGLang's --config wants a .yaml/.yml name
CONFIG_ARG = ExecVariable("${CREDENTIALS_DIRECTORY}/" + CREDENTIAL_NAME)


def secret_env_path(service_name: str) -> str:
    """Where a service's secret variables live (relative to /); gen never writes it."""
    return f"{SECRET_ENV_DIR}/{service_name}.env"


def credential_path(service_name: str) -> str:
    """Where a service's secret SGLang options live (relative to /); gen never writes it."""
    return f"{CREDSTORE_DIR}/sglang-{service_name}.yaml"


def _flag_fix(action: Action, service: str) -> str:
    key = action.canonical.removeprefix("--")
    return (f"remove it here; list it under the service's `secret_args: [{action.canonical}]` and put"
            f" `{key}: VALUE` in /{credential_path(service)} on the host (root, mode 0600):"
            f" systemd hands that file to SGLang's --config as a credential")


def _check_args(argv: ServiceArgv, p: Placement, diags: Diagnostics) -> None:
    for group in argv.groups:
        if group.words and is_secret_action(group.action):
            diags.error(group.pos, "K001",
                        f"{group.action.canonical} carries a secret: its value would be written into"
                        " output/, the unit file and the argv every user sees in `ps`",
                        _flag_fix(group.action, p.service.name))
            continue
        for word in group.words[1:] or [w.partition("=")[2] for w in group.words[:1]]:
            found = credential_in(word)
            if found is not None:
                diags.error(group.pos, "K005",
                            f"the value of {group.action.canonical} holds {found}: it would be written into"
                            " output/, the unit file and the argv every user sees in `ps`",
                            "take the credential out of the value; give it to the program another way (a"
                            f" secret variable: `secret_env: true` and /{secret_env_path(p.service.name)})")
                break


def env_secret_problem(name: str, value: str) -> tuple[str, str] | None:
    """(code, what) when variable ``name=value`` holds a secret: K002 by its name, K005 inside its value."""
    if is_secret_env_name(name):
        return "K002", f"{name} holds a secret"
    found = credential_in(value)
    if found is not None:
        return "K005", f"the value of {name} holds {found}"
    return None


def env_secret_fix(name: str, service: str) -> str:
    """How to give a service a secret variable without writing it into the repository."""
    return (f"remove it here; set `secret_env: true` on service {service} and put {name}=VALUE in"
            f" /{secret_env_path(service)} on the host (root, mode 0600)")


def _check_env(p: Placement, diags: Diagnostics) -> None:
    for owner, items in ((p.model, p.model.env), (p.service, p.service.env)):
        for name, value in items:
            problem = env_secret_problem(name, str(value))
            if problem is not None:
                code, what = problem
                diags.error(owner.pos("env", name, key=True), code,
                            f"{what}: its value would be written into output/ and a world-readable"
                            " environment file", env_secret_fix(name, p.service.name))


def _check_secret_args(catalog: Catalog, argv: ServiceArgv, p: Placement, diags: Diagnostics) -> list[Action]:
    """The actions ``secret_args`` names; each must be a value-taking flag not also in args."""
    given = {g.action.dest for g in argv.groups if g.words}
    out: list[Action] = []
    for i, flag in enumerate(p.service.secret_args):
        pos = p.service.pos("secret_args", i)
        action = catalog.by_option(flag)
        if action is None or not action.takes_value:
            diags.error(pos, "K003", f"secret_args: {flag} is not a flag that takes a value in SGLang"
                        f" {catalog.version}", "list flags such as --api-key exactly as SGLang spells them")
        elif action.dest in given:
            diags.error(pos, "K003", f"secret_args: {flag} is also given on the command line"
                        " (explicit flags win over --config)", "give it in one place only")
        else:
            out.append(action)
    return out


def check_and_add_config(catalog: Catalog, argv: ServiceArgv, p: Placement, diags: Diagnostics) -> ServiceArgv:
    """Refuse secrets in args/env; with ``secret_args``, append ``--config <credential>``."""
    _check_args(argv, p, diags)
    _check_env(p, diags)
    if not p.service.secret_args:
        return argv
    _check_secret_args(catalog, argv, p, diags)
    for group in argv.groups:
        if group.words and group.action.dest == "config":  # SGLang takes one --config only
            diags.error(group.pos, "K003", "--config is given here, but with secret_args gen passes"
                        " --config (the credential) itself; SGLang reads only one",
                        "move these options into args (or into the credential file)")
    config = catalog.by_option("--config")
    if config is None:
        diags.error(p.service.pos("secret_args"), "K004",
                    f"SGLang {catalog.version} has no --config option to read secret_args from")
        return argv
    group = CheckedArg(config, ("--config", CONFIG_ARG), p.service.pos("secret_args"))
    return ServiceArgv(argv.program, (*argv.groups, group))


def load_credentials(service_name: str, secret_args: Iterable[str]) -> list[tuple[str, str]]:
    """The ``(credential name, host path)`` pairs of a service's LoadCredential= lines."""
    return [(CREDENTIAL_NAME, "/" + credential_path(service_name))] if tuple(secret_args) else []


def runtime_argv(argv: Iterable[str], unit: str) -> tuple[str, ...]:
    """The argv the running process has: ``${CREDENTIALS_DIRECTORY}`` as systemd 252 sets it."""
    return tuple(w.replace("${CREDENTIALS_DIRECTORY}", f"/run/credentials/{unit}") if w == CONFIG_ARG else w
                 for w in argv)
