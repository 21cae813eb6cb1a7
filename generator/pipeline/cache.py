"""A content-addressed cache of per-host render results, so a no-change render is cheap.

A host's render depends only on its inventory file, every model manifest, the catalogs,
the templates and gen itself (its source and the libraries that shape its output). The
key hashes all of those, so any edit anywhere misses the cache and renders afresh; a
hit returns exactly what rendering would (diagnostics and tree), byte for byte.

Entries live in ``$GEN_RENDER_CACHE``, else under ``${GEN_CACHE:-$HOME/.cache/gen}/render/``,
as pickles written atomically; a corrupt or unreadable entry is a miss, never an error.
``GEN_RENDER_CACHE=off`` (or ``GEN_CACHE=off`` when it is unset) turns the cache off.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import pickle
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from generator.errors import Diagnostic
from generator.emit.writer import HostTree

CACHE_FORMAT = "render-v1"  # bump when the entry layout changes
_LIBRARIES = ("jinja2", "ruamel.yaml", "ruamel.yaml.clib", "cerberus")
_SHARED_FOLDERS = ("models", "catalogs", "templates")


@dataclass(frozen=True)
class HostEntry:
    """What loading and rendering one host file produced.

    ``load`` holds the diagnostics of loading and validating the file, ``render`` those of
    placing, checking and rendering it; ``tree`` is None when rendering failed.
    """

    name: str | None  # the host's name, None when the file did not load
    load: tuple[Diagnostic, ...]
    render: tuple[Diagnostic, ...]
    tree: HostTree | None


def cache_dir() -> Path | None:
    """The folder for render entries, or None when caching is off.

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


def _hash_tree(digest: hashlib._Hash, folder: Path, label: str) -> None:
    """Feed every file under ``folder`` (relative name and bytes, sorted) into ``digest``."""
    if not folder.is_dir():
        digest.update(f"{label}: none\0".encode())
        return
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            data = path.read_bytes()
            digest.update(f"{label}/{path.relative_to(folder)}\0{len(data)}\0".encode())
            digest.update(data)


@functools.lru_cache(maxsize=1)
def gen_fingerprint() -> str:
    """A hash of gen's own source, the versions of the libraries it uses, and Python's."""
    digest = hashlib.sha256(CACHE_FORMAT.encode())
    package = Path(__file__).resolve().parents[1]
    _hash_tree(digest, package, "generator")
    # catalog.tables_dir falls back to the project's own catalogs/ folder.
    _hash_tree(digest, package.parent / "catalogs", "project-catalogs")
    for lib in _LIBRARIES:
        try:
            version = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{lib}={version}\0".encode())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def shared_key(root: Path, pin: str | None) -> str:
    """The part of every host's key that all hosts share: gen, models, catalogs, templates."""
    digest = hashlib.sha256(gen_fingerprint().encode())
    digest.update(f"pin={pin}\0".encode())
    for folder in _SHARED_FOLDERS:
        _hash_tree(digest, root / folder, folder)
    return digest.hexdigest()


def host_key(shared: str, display: str, data: bytes, peers: tuple[Path, ...] = ()) -> str:
    """The key of one host file: the shared key, its displayed path, its bytes and its peers'.

    ``peers`` are the inventories of the hosts a multi-node model puts in one replica with
    this one: their addresses, pins and flags go into this host's unit (generator/plan/cluster.py).
    """
    digest = hashlib.sha256(shared.encode())
    digest.update(f"{display}\0".encode())
    digest.update(data)
    for peer in peers:
        try:
            peer_data = peer.read_bytes()
        except OSError:
            peer_data = b"\0missing"
        digest.update(f"\0peer {peer.name}\0{len(peer_data)}\0".encode())
        digest.update(peer_data)
    return digest.hexdigest()


def multinode_peers(root: Path) -> dict[str, tuple[Path, ...]]:
    """Host name -> inventory files of every host listed with it in a model's ``multinode``.

    Read straight from models/ (a file that does not parse names no peers; the render
    reports it). Membership itself lives in models/, which the shared key covers.
    """
    from ruamel.yaml import YAML  # the plain loader: positions do not matter here

    yaml = YAML(typ="safe")
    peers: dict[str, set[str]] = {}
    folder = root / "models"
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        if path.suffix not in (".yaml", ".yml") or path.name.startswith("."):
            continue
        try:
            data = yaml.load(path.read_bytes().decode("utf-8"))
            members = [str(h) for h in data["multinode"]["hosts"]]
        except Exception:  # noqa: BLE001, S112 - any malformed manifest simply names no peers
            continue
        for name in members:
            peers.setdefault(name, set()).update(members)
    return {name: tuple(p for m in sorted(group) for p in (root / "hosts" / f"{m}.yaml", root / "hosts" / f"{m}.yml"))
            for name, group in peers.items()}


def _entry_path(folder: Path, key: str) -> Path:
    return folder / key[:2] / f"{key}.pickle"


def load(folder: Path | None, key: str) -> object | None:
    """The cached value under ``key``, or None (missing, unreadable or corrupt)."""
    if folder is None:
        return None
    try:
        with open(_entry_path(folder, key), "rb") as fh:
            return pickle.load(fh)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        return None


def store(folder: Path | None, key: str, value: object) -> None:
    """Save ``value`` under ``key`` atomically; a cache that cannot be written is skipped."""
    if folder is None:
        return
    path = _entry_path(folder, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".entry.", dir=path.parent)
    except OSError:
        return  # a read-only or full cache only costs speed
    try:
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except (OSError, pickle.PicklingError):
        Path(tmp).unlink(missing_ok=True)
