"""``syncfs(2)``: make a whole filesystem's written data durable with one call (Linux >= 5.8).

Used by generator/emit/safe_fs.py (``OutputTree.sync_filesystems``), which falls back to
one fsync per file and folder where this is unavailable.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable


@functools.cache
def _libc_syncfs() -> Callable[[int], int] | None:
    """Linux's ``syncfs(2)`` through ctypes; None where it is missing or cannot be trusted.

    Before Linux 5.8 syncfs returned 0 even when writeback failed, so an I/O error would
    go unnoticed: there (and off Linux) callers fall back to one fsync per file.
    """
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # only a run that writes gets here

    try:
        major, minor = (int(x) for x in re.findall(r"\d+", os.uname().release)[:2])
        if (major, minor) < (5, 8):
            return None
        func = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError, ValueError):
        return None
    func.argtypes = [ctypes.c_int]
    func.restype = ctypes.c_int
    return func


def syncfs(fd: int) -> bool:
    """Write back and wait for every dirty page and inode of the filesystem holding ``fd``.

    False when ``syncfs(2)`` is unavailable (the caller must fsync itself); an I/O error
    raises :class:`OSError`.
    """
    func = _libc_syncfs()
    if func is None:
        return False
    if func(fd) != 0:
        import ctypes

        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return True
