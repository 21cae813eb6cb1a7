"""A content-addressed cache of per-host results, so a no-change render is cheap.

A host's result depends only on its inventory file, its multi-node peers' files, every
model manifest, the catalogs, the templates and gen itself (its source and the libraries
that shape its output). The key hashes all of those (:func:`shared_key`, :func:`host_key`),
so any edit anywhere misses the cache and renders afresh.

The cache is untrusted storage: an entry is data only, never code: a first JSON line
naming the format, its own key and a CRC-32 of the rest, a JSON payload line, then the
text of the host's files (UTF-8, the payload gives each file's length).
:func:`load` re-checks the key and the digest before it parses the payload, and the
caller checks the exact shape of every field; anything else is a miss. The folder is
used only when it belongs to the current user and neither group nor others can write
it; otherwise :func:`open_cache` gives no folder and one warning, and the run proceeds
uncached. Each ``xx/`` folder below it is held to the same test when its first entry is
read (a link, or a folder others can write, makes every entry in it a miss), and each
entry too. Entries are written atomically.

Entries live in ``$GEN_RENDER_CACHE``, else under ``${GEN_CACHE:-$HOME/.cache/gen}/render/``;
``GEN_RENDER_CACHE=off`` (or ``GEN_CACHE=off`` when it is unset) turns the cache off.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import stat
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.load.files import read_file

CACHE_FORMAT = "render-v4-json+text"  # bump when the entry layout changes
_LIBRARIES = ("jinja2", "ruamel.yaml", "ruamel.yaml.clib", "cerberus")
_SHARED_FOLDERS = ("models", "catalogs")  # templates/: keyed by the texts read (shared_key)


@dataclass(frozen=True)
class CacheFolder:
    """Where entries go (None: caching is off or refused) and why it was refused, if it was."""

    path: Path | None
    warning: str | None = None


def _unsafe(path: Path) -> str | None:
    """Why ``path`` (an existing folder) must not hold cache entries, or None when it may."""
    try:
        st = path.lstat()
    except OSError as exc:
        return f"cannot inspect {path}: {exc.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a folder"
    if st.st_uid != os.getuid():
        return f"{path} belongs to uid {st.st_uid}, not to you (uid {os.getuid()})"
    if st.st_mode & 0o022:
        return f"{path} is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def cache_dir() -> Path | None:
    """The configured folder for render entries (not yet checked), or None when caching is off.

    ``GEN_RENDER_CACHE`` names the folder itself (the tests point it at a temporary one);
    without it, entries go under ``GEN_CACHE``'s ``render/``, beside the heavy, shared
    build products (SGLang venvs, the test host's root) that must stay found.
    """
    off = ("off", "none", "0", "")
    render = os.environ.get("GEN_RENDER_CACHE")
    if render is not None:
        return None if render.strip().lower() in off else Path(render)
    base = os.environ.get("GEN_CACHE")
    if base is not None and base.strip().lower() in off:
        return None
    return Path(base or Path.home() / ".cache" / "gen") / "render"


def open_cache() -> CacheFolder:
    """The render cache folder, created private (0700) when missing, or why it is not used.

    The folder and the one holding it (``$GEN_CACHE`` when entries go to its ``render/``)
    must belong to the current user and be closed to group and others.
    """
    folder = cache_dir()
    if folder is None:
        return CacheFolder(None)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        return CacheFolder(None, f"render cache {folder} cannot be created ({exc.strerror}); rendering uncached")
    checked = [folder] if "GEN_RENDER_CACHE" in os.environ else [folder.parent, folder]
    for path in checked:
        why = _unsafe(path)
        if why is not None:
            return CacheFolder(None, f"render cache not used: {why}; rendering uncached")
    return CacheFolder(folder)


def _hash_tree(digest: Any, folder: Path, label: str) -> None:
    """Feed every entry under ``folder`` (relative name and bytes, sorted) into ``digest``.

    Entries that are not regular files (a FIFO, device, symlink, a folder named x.yaml) are
    never read (load/files.py) but count by name, so that a loader error about them is not
    hidden by an entry cached before they appeared. A linked ``folder`` is not walked, nor
    is a linked folder inside it; ``__pycache__`` folders are left out.
    """
    if folder.is_symlink() or not folder.is_dir():
        digest.update(f"{label}: {'a symlink' if folder.is_symlink() else 'none'}\0".encode())
        return
    if "__pycache__" not in folder.parts:
        _hash_entries(digest, str(folder), label)


def _hash_entries(digest: Any, path: str, name: str) -> None:
    """:func:`_hash_tree` below the folder ``path`` (shown as ``name``): each folder's entries
    by name, a folder's own entries right after it (the order of sorted relative paths),
    listed with ``os.scandir`` (every Python folder of gen is hashed on every run)."""
    with os.scandir(path) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        if entry.name == "__pycache__":
            continue
        # surrogateescape: a file name that is not UTF-8 is keyed by its bytes, not a crash
        shown = f"{name}/{entry.name}"
        encoded = shown.encode("utf-8", "surrogateescape")
        if entry.is_dir(follow_symlinks=False):
            digest.update(encoded + b"/\0")
            _hash_entries(digest, entry.path, shown)
            continue
        # No size limit: a catalog over the manifests' 256 KiB must still key by its content.
        data = None if entry.is_symlink() else read_file(Path(entry.path), entry.path, limit=None)[0]
        data = data if data is not None else b"\0not a regular file"
        digest.update(encoded + f"\0{len(data)}\0".encode())
        digest.update(data)


@functools.lru_cache(maxsize=1)
def gen_fingerprint() -> str:
    """A hash of gen's own source, the versions of the libraries it uses, and Python's."""
    digest = hashlib.sha256(CACHE_FORMAT.encode())
    package = Path(__file__).resolve().parents[1]
    _hash_tree(digest, package, "generator")
    # catalog.tables_dir falls back to the project's own catalogs/ folder.
    _hash_tree(digest, package.parent / "catalogs", "project-catalogs")
    for lib, version in library_versions().items():
        digest.update(f"{lib}={version}\0".encode())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def _normal(name: str) -> str:
    """A distribution name as packaging compares it: ``ruamel.yaml`` = ``ruamel_yaml``."""
    return re.sub(r"[-_.]+", "_", name).lower()


def library_versions() -> dict[str, str]:
    """The installed version of each library in _LIBRARIES ("absent" when it is not installed).

    Read from the ``<name>-<version>.dist-info`` folders on ``sys.path``, first match
    wins, as importlib.metadata finds them: listing a few folders is cheap, while importing
    importlib.metadata (email, zipfile, csv, ...) costs more than the rest of a warm run's
    start. Anything this does not read plainly (an egg, two candidates in one folder, a
    library not found) is asked of importlib.metadata itself.
    """
    wanted = {_normal(lib): lib for lib in _LIBRARIES}
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        here: dict[str, list[str]] = {}
        for name in names:
            base, dot, kind = name.rpartition(".")
            if not dot or kind not in ("dist-info", "egg-info", "egg"):
                continue
            dist, dash, version = base.partition("-")
            if _normal(dist) not in wanted:
                continue
            if kind != "dist-info" or not dash:
                return _metadata_versions()  # an egg or egg-info: importlib.metadata reads those
            here.setdefault(_normal(dist), []).append(version)
        for key, versions in here.items():
            if len(versions) > 1:
                return _metadata_versions()
            found.setdefault(key, versions[0])
    if len(found) != len(wanted):
        return _metadata_versions()
    return {lib: found[key] for key, lib in wanted.items()}


def _metadata_versions() -> dict[str, str]:
    """:func:`library_versions` as importlib.metadata gives them (the slow, general way)."""
    import importlib.metadata

    out = {}
    for lib in _LIBRARIES:
        try:
            out[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            out[lib] = "absent"
    return out


def shared_key(root: Path, pin: str | None, templates: str) -> str:
    """The part of every host's key that all hosts share: gen, models, catalogs, and
    ``templates``, the digest of the texts every render reads (emit/templates.py)."""
    digest = hashlib.sha256(gen_fingerprint().encode())
    digest.update(f"pin={pin}\0templates={templates}\0".encode())
    for folder in _SHARED_FOLDERS:
        _hash_tree(digest, root / folder, folder)
    return digest.hexdigest()


def host_key(shared: str, display: str, data: bytes | None,
             peers: tuple[tuple[str, bytes | None], ...] = ()) -> str:
    """The key of one host file: the shared key, its displayed path, its bytes and its peers'.

    ``peers`` are (displayed path, bytes) of the inventories of the hosts a multi-node model
    puts in one replica with this one (the bare name and None: no such file): their addresses, pins and flags go
    into this host's unit (generator/plan/cluster.py).
    """
    digest = hashlib.sha256(shared.encode())
    digest.update(f"{display}\0".encode())
    digest.update(b"\0unreadable" if data is None else b"\1" + data)
    for name, peer in peers:
        digest.update(f"\0peer {name}\0".encode())
        digest.update(b"\0missing" if peer is None else f"{len(peer)}\0".encode() + peer)
    return digest.hexdigest()


def _entry_name(folder: Path, key: str) -> str:
    """Where the entry of ``key`` lives, as a string for the read of every entry (no Path objects)."""
    return f"{folder}/{key[:2]}/{key}.json"


# The xx/ folders found safe in this process: each is looked at once, on its first entry.
_SAFE_SUBFOLDERS: set[str] = set()


def _subfolder_safe(entry: str) -> bool:
    """True when the ``xx/`` folder of ``entry`` is a real folder of ours that no one else can write.

    ``O_NOFOLLOW`` guards only an entry's own name: a linked ``xx/`` would be followed.
    A missing folder is not remembered (it may be made later in the run).
    """
    name = os.path.dirname(entry)
    if name in _SAFE_SUBFOLDERS:
        return True
    if _unsafe(Path(name)) is not None:
        return False
    _SAFE_SUBFOLDERS.add(name)
    return True


def _digest(data: bytes | memoryview) -> str:
    """The check of an entry's bytes against damage (a bad disk, a write cut short).

    CRC-32, not SHA-256: no unkeyed hash makes an entry authentic, since whoever can write
    the folder can write a matching one (hence the folder checks, and the shape checks
    after this one); against damage CRC-32 serves as well, at a fifth of the time over
    the 20 MB a warm run of 1,000 hosts reads.
    """
    return f"crc32:{zlib.crc32(data):08x}"


def encode(key: str, payload: Any, text: str = "") -> bytes:
    """An entry's bytes: the header line (format, key, digest), the payload line, then ``text``.

    The payload is JSON escaped to ASCII, so it holds no raw newline and its line ends at
    the first one. ``text`` (the host's files, one after another) is stored as UTF-8 as it
    is, not as JSON strings: a warm run then parses a few KiB per host instead of every
    file's escaped text. The digest covers both. A text UTF-8 cannot hold (a lone
    surrogate) raises ValueError, as JSON that cannot be written does.
    """
    body = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode() + b"\n" + text.encode("utf-8")
    header = json.dumps({"format": CACHE_FORMAT, "key": key, "digest": _digest(body)}).encode()
    return header + b"\n" + body


_JSON = json.JSONDecoder()


def decode(key: str, data: bytes) -> tuple[Any, str] | None:
    """The (payload, text) of an entry's bytes, or None unless the header, digest and both
    parts are exactly what :func:`encode` writes (the text strict UTF-8)."""
    cut = data.find(b"\n")
    end = data.find(b"\n", cut + 1) if cut >= 0 else -1
    if end < 0:
        return None
    try:
        head = data[:end].decode("ascii")  # the header and payload lines only, not the text
        header, stop = _JSON.raw_decode(head)
        if (stop != cut or not isinstance(header, dict) or set(header) != {"format", "key", "digest"}
                or header["format"] != CACHE_FORMAT or header["key"] != key
                or header["digest"] != _digest(memoryview(data)[cut + 1:])):
            return None
        payload, stop = _JSON.raw_decode(head, cut + 1)
        return (payload, str(memoryview(data)[end + 1:], "utf-8")) if stop == end else None
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None


# O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer; O_NOCTTY: a terminal
# device planted as an entry must not become the controlling terminal. fstat refuses both.
_READ_FLAGS = (os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_NOCTTY", 0))


def load(folder: Path | None, key: str) -> tuple[Any, str] | None:
    """The (payload, text) stored under ``key``, or None (missing, not ours, corrupt, or tampered with).

    Only the envelope is checked here (key, digest, UTF-8); the caller checks the payload's shape.
    """
    if folder is None:
        return None
    entry = _entry_name(folder, key)
    if not _subfolder_safe(entry):
        return None
    try:
        fd = os.open(entry, _READ_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
            return None
        # One read of the size fstat gave, plus one byte: an entry that is not exactly that
        # size when read (written meanwhile) is a miss, never half an entry.
        data = os.read(fd, st.st_size + 1)
        if len(data) != st.st_size:
            return None
    except OSError:
        return None
    finally:
        os.close(fd)
    return decode(key, data)


def store(folder: Path | None, key: str, payload: Any, text: str = "") -> None:
    """Save a JSON payload and its text under ``key`` atomically; a cache that cannot be written is skipped."""
    if folder is None:
        return
    path = Path(_entry_name(folder, key))
    try:
        data = encode(key, payload, text)
    except (TypeError, ValueError):
        return
    try:
        import tempfile  # writing only: a warm run reads

        path.parent.mkdir(mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".entry.", dir=path.parent)
    except OSError:
        return  # a read-only or full cache only costs speed
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
