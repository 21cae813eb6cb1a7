"""How gen reaches a host: the one SSH target every command uses.

The inventory gives ``address`` and, optionally, ``ssh.user``/``ssh.port`` (resolved in
generator/load/resolve.py, the one place their defaults live); an ssh config
(``--ssh-config FILE``) supplies the rest (identity, jump hosts, a real port for an
alias). Only settings the inventory writes are passed on the command line
(``Host.ssh_explicit``), so an ssh config's ``Host`` block is never overridden by a default.

Every ssh command line comes from :meth:`Target.ssh_argv`: BatchMode (never a prompt),
ConnectTimeout, and ``--`` before the destination, so neither an address nor the
remote command can be taken for an ssh option. Three ways out, all plain ``ssh``: a
pytest-testinfra host (``testinfra_host``) for the checks, ``run_with_stdin`` for
scripts sent on stdin (preflight), and the argv prefix ``gen sglang snapshot --host``
hands to :func:`generator.sglang.snapshot.snapshot_remote`. An Ansible inventory gives
the same Target with an identity file and extra ssh arguments (generator/live/inventory.py).
"""

from __future__ import annotations

import contextlib
import shlex
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from typing import TYPE_CHECKING

from generator.errors import GenError, printable
from generator.live.plan import HostPlan
from generator.load.process import run_bounded
from generator.load.resolve import Host

if TYPE_CHECKING:  # testinfra is imported when a check runs, not for a snapshot's argv
    from testinfra.host import Host as InfraHost

CONNECT_TIMEOUT_S = 10
CONTROL_PERSIST_S = 30  # an upper bound only: the master is closed explicitly


class HostUnreachableError(GenError, ConnectionError):
    """SSH to the host failed (exit status 255): no check could run (``gen`` exits 3)."""


class BadAddressError(GenError, ValueError):
    """An address ssh would misread (empty, an option, whitespace): refused before ssh runs."""


@dataclass(frozen=True)
class Target:
    """An SSH destination: address (or ssh-config alias), optional user/port, config file.

    ``identity_file`` and ``ssh_args`` come from an Ansible inventory
    (``ansible_ssh_private_key_file``, ``ansible_ssh_common_args``/``_extra_args``).
    """

    address: str
    user: str | None = None
    port: int | None = None
    ssh_config: Path | None = None
    identity_file: str | None = None
    ssh_args: tuple[str, ...] = ()

    @property
    def spec(self) -> str:
        """The testinfra host spec, ``ssh://[user@]address[:port]``."""
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"ssh://{user}{self.address}{port}"

    def ssh_argv(self) -> list[str]:
        """``ssh`` with this target's options, up to and including the destination.

        The remote command, one shell string, goes after it.
        """
        if not self.address or self.address.startswith("-") or any(c.isspace() for c in self.address):
            raise BadAddressError(f"not an SSH address: {self.address!r}")
        argv = ["ssh", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}"]
        if self.ssh_config:
            argv += ["-F", str(self.ssh_config)]
        if self.user:
            argv += ["-l", self.user]
        if self.port:
            argv += ["-p", str(self.port)]
        if self.identity_file:
            argv += ["-i", self.identity_file]
        return argv + list(self.ssh_args) + ["--", self.address]


def target_for(plan: HostPlan, ssh_config: Path | None) -> Target:
    """The target of a host plan, with the operator's ssh config if given."""
    return Target(plan.address, plan.ssh_user, plan.ssh_port, ssh_config)


def target_for_host(host: Host, ssh_config: Path | None = None, ssh_args: Sequence[str] = ()) -> Target:
    """The target of an inventory host (as :func:`target_for` its plan), plus extra ssh arguments."""
    user, port = host.ssh_explicit()
    return Target(host.address, user, port, ssh_config, ssh_args=tuple(ssh_args))


def testinfra_host(target: Target, control_path: Path | None = None) -> InfraHost:
    """A pytest-testinfra host over ssh; with CONTROL_PATH all commands share one connection."""
    import testinfra

    target.ssh_argv()  # the address check, before testinfra builds its own command line
    # testinfra pastes ssh_extra_args into a shell command line: quote each word.
    extra = shlex.join(["-o", "BatchMode=yes", *target.ssh_args])
    kwargs: dict[str, object] = {"timeout": CONNECT_TIMEOUT_S, "ssh_extra_args": extra}
    if target.identity_file:
        kwargs["ssh_identity_file"] = target.identity_file
    if control_path is not None:
        kwargs.update(controlpersist=CONTROL_PERSIST_S, controlpath=str(control_path))
    else:
        kwargs["controlpersist"] = 0
    if target.ssh_config:
        kwargs["ssh_config"] = str(target.ssh_config)
    return testinfra.get_host(target.spec, **kwargs)


@contextlib.contextmanager
def shared_connection(target: Target) -> Iterator[InfraHost]:
    """A testinfra host whose commands share one ssh master, closed on exit.

    Each check is a command; a new ssh handshake per command cost ~0.3 s on a loopback
    container. The master is started by the first command and stopped here with
    ``ssh -O exit``, so no ssh process outlives gen.
    """
    with tempfile.TemporaryDirectory(prefix="gen-ssh-") as tmp:
        control = Path(tmp) / "master"
        try:
            yield testinfra_host(target, control)
        finally:
            if control.exists():
                subprocess.run([*target.ssh_argv()[:-2], "-o", f"ControlPath={control}", "-O", "exit",
                                "--", target.address], capture_output=True, timeout=30)


# What a script sent on stdin (preflight, the sandbox check) may print back: its JSON report is
# a few KB per service. A host that prints without end is stopped here, before its reply fills
# the controller's memory.
REPLY_MOST = 16 * 1024 * 1024


class HostReplyError(GenError, OSError):
    """The host did not answer in time, or answered more than a reply can be (``gen`` exits 3)."""


def run_with_stdin(target: Target, command: Sequence[str], stdin: bytes,
                   timeout: float = 300.0) -> subprocess.CompletedProcess[bytes]:
    """Run COMMAND (argv, quoted for the remote shell) on TARGET with STDIN; 255 raises, and so
    do a reply past REPLY_MOST bytes and no exit by ``timeout`` seconds (HostReplyError)."""
    argv = [*target.ssh_argv(), shlex.join(command)]
    done = run_bounded(argv, stdin=stdin, timeout=timeout, env=None, limit=REPLY_MOST)
    if done.overflowed:
        raise HostReplyError(f"{target.address} printed more than {REPLY_MOST // (1024 * 1024)} MiB in reply "
                             f"to {printable(command[0])}: stopped; no result was read")
    if done.timed_out:
        raise HostReplyError(f"{target.address} did not finish {printable(command[0])} within {timeout:g} s: "
                             "stopped; no result was read")
    if done.returncode == 255:
        raise HostUnreachableError(f"ssh {target.address} failed: "
                                   f"{printable(done.stderr.decode('utf-8', 'replace').strip())}")
    return subprocess.CompletedProcess(argv, done.returncode, done.stdout, done.stderr)
