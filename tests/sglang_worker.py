"""One real SGLang process per pin for the whole test session, in which the oracle scripts run.

Importing SGLang takes 5 s (0.5.9) to 10 s (0.5.23) here, and each oracle test used to start
its own interpreter for it (``python -c SCRIPT`` with the cases on stdin). :func:`run` gives
a script the same stdin text, captures what it writes to ``sys.stdout``/``sys.stderr`` and
its exit status, as ``subprocess.run`` did, but runs it in a worker that stays up for the
session, so SGLang's modules are imported once per pin. The scripts are unchanged.

Each request runs in a fresh namespace as ``__main__``; ``os.environ``, the working folder,
``sys.argv`` and ``sys.path`` are put back afterwards, so one script cannot leave settings
for the next. The worker talks over its own pipe, not stdout: whatever SGLang prints at C
level cannot corrupt a reply. It is stopped at exit, by its process id.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import tempfile
from dataclasses import dataclass

from sglang_env import sglang_python

# Runs in the SGLang venv: one JSON request per line on stdin, one JSON reply per line on fd REPLY_FD.
WORKER = r'''
import contextlib, io, json, os, sys, traceback
reply = os.fdopen(int(sys.argv[1]), "w")
for line in sys.stdin:
    req = json.loads(line)
    out, err = io.StringIO(), io.StringIO()
    env, cwd, argv, path, stdin = dict(os.environ), os.getcwd(), list(sys.argv), list(sys.path), sys.stdin
    code = 0
    sys.stdin, sys.argv = io.StringIO(req["input"]), [req["name"]]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            exec(compile(req["script"], req["name"], "exec"), {"__name__": "__main__", "__file__": req["name"]})
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        err.write(traceback.format_exc())
        code = 1
    finally:
        sys.stdin, sys.argv, sys.path[:] = stdin, argv, path
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
    reply.write(json.dumps({"returncode": code, "stdout": out.getvalue(), "stderr": err.getvalue()}) + "\n")
    reply.flush()
'''


@dataclass(frozen=True)
class Result:
    """What ``subprocess.run(..., capture_output=True, text=True)`` gave the tests."""

    returncode: int
    stdout: str
    stderr: str


class _Worker:
    """The running worker of one pin."""

    def __init__(self, pin: str) -> None:
        read_fd, write_fd = os.pipe()
        # C-level output of SGLang goes to a file: a full pipe nobody reads would block it.
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sglang_python(pin), "-c", WORKER, str(write_fd)], stdin=subprocess.PIPE,
                                     stdout=self.log, stderr=self.log, pass_fds=(write_fd,), text=True)
        os.close(write_fd)
        self.replies = os.fdopen(read_fd, "r")
        atexit.register(self.stop)

    def ask(self, script: str, stdin: str, name: str, timeout: float) -> Result:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"script": script, "input": stdin, "name": name}) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.replies], [], [], timeout)
        line = self.replies.readline() if ready else ""
        if not line:
            self.stop()
            self.log.seek(0)
            raise RuntimeError(f"SGLang worker gave no answer to {name} within {timeout} s:\n"
                               + self.log.read().decode(errors="replace")[-3000:])
        found = json.loads(line)
        return Result(found["returncode"], found["stdout"], found["stderr"])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()  # by its own process id (Popen holds it)
            self.proc.wait()


_WORKERS: dict[str, _Worker] = {}


def run(pin: str, script: str, stdin: str, name: str = "<oracle>", timeout: float = 600) -> Result:
    """``script`` with ``stdin`` in the session's SGLang ``pin`` process (started on first use)."""
    worker = _WORKERS.get(pin)
    if worker is None or worker.proc.poll() is not None:
        worker = _WORKERS[pin] = _Worker(pin)
    return worker.ask(script, stdin, name, timeout)
