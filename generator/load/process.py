"""Run a program whose output is data from outside, reading at most a bounded amount of it.

``subprocess.run(capture_output=True)`` keeps everything a program prints: a probe (or the
interpreter an inventory names, or an ssh peer) that prints without end filled the
controller's memory before any check of the reply could run. :func:`run_bounded` reads
stdout up to a limit and stops the program past it (``overflowed``), keeps only the last
part of stderr (where a Python's traceback ends), and stops the program at its deadline
(``timed_out``). The caller turns those into its own error: the reply is never used.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

READ_SIZE = 64 * 1024
STDERR_KEPT = 64 * 1024  # the tail of stderr kept for a message (a traceback is a few KB)


@dataclass(frozen=True)
class Finished:
    """What a bounded run saw. ``stdout`` is cut at the limit when ``overflowed``."""

    returncode: int
    stdout: bytes
    stderr: bytes  # its last STDERR_KEPT bytes
    stdout_bytes: int  # how many bytes were read before the run stopped (limit + 1 at most)
    overflowed: bool = False
    timed_out: bool = False


def _feed(pipe: object, data: bytes) -> None:
    try:
        pipe.write(data)  # type: ignore[attr-defined]
    except (BrokenPipeError, OSError, ValueError):
        pass  # the program stopped reading (or was stopped): its exit status says why
    finally:
        try:
            pipe.close()  # type: ignore[attr-defined]
        except (BrokenPipeError, OSError):
            pass


def run_bounded(argv: Sequence[str], *, stdin: bytes | None, timeout: float,
                env: Mapping[str, str] | None, limit: int) -> Finished:
    """Run ``argv``; at most ``limit`` bytes of stdout are kept, and the program is killed past
    them or past ``timeout`` seconds. FileNotFoundError/PermissionError as Popen raises them."""
    proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=None if env is None else dict(env))
    feeder = None
    if stdin is not None:  # written by a thread: a program that prints before it reads never blocks us
        feeder = threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True)
        feeder.start()
    out = bytearray()
    err = bytearray()
    overflowed = timed_out = False
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None and proc.stderr is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ, out)
        sel.register(proc.stderr, selectors.EVENT_READ, err)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, READ_SIZE)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf = key.data
                buf += chunk
                if buf is err and len(err) > 2 * STDERR_KEPT:
                    del err[:-STDERR_KEPT]
                if buf is out and len(out) > limit:
                    overflowed = True
            if overflowed:
                break
    if overflowed or timed_out:
        proc.kill()
    try:
        returncode = proc.wait(timeout=max(deadline - time.monotonic(), 0) + 5 if not (overflowed or timed_out) else 30)
    except subprocess.TimeoutExpired:  # closed its pipes but did not exit by the deadline
        proc.kill()
        returncode = proc.wait()
        timed_out = True
    for pipe in (proc.stdout, proc.stderr):
        pipe.close()
    if feeder is not None:
        feeder.join(timeout=5)
    return Finished(returncode, bytes(out[:limit]), bytes(err[-STDERR_KEPT:]), len(out), overflowed, timed_out)
