"""The capture header of gen's captured data files: every ``catalogs/**/*.json`` proves its content.

A catalog JSON is what a capture produced (``gen sglang snapshot``, the env probe, the
checks inventory, the flag history, ``gen model snapshot``, the device tables...), never
hand-edited. Its header is the top-level ``captured`` object: the tool that made it (and
whatever the capture records: probe version, Python, date) and ``sha256``, the digest of the
file itself. The digest covers every byte of the file, with its own 64 hex digits written as
zeros, so nothing needs parsing to check it, any layout works (indented or one entry a line),
and any edit after the capture, even of whitespace, no longer matches.

A writer builds its document with :func:`with_header` and writes :func:`stamp` of its text
(or :func:`captured_json` for the usual indented layout); ``gen check`` calls
:func:`check_captured` on the repository, which reports C016 at a file whose digest does
not match (edited after capture) and C017 at one without a well-formed header.

A digest a pull request can recompute proves integrity, not origin: what makes an edited
catalog visible in review is that every rendered unit names the digest of the catalog it
was checked against (``generator/emit/render.py``), so changed facts change ``output/``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from generator.errors import Diagnostic, Position
from generator.load.files import read_file

HEADER = "captured"
DIGEST = "sha256"
PLACEHOLDER = "0" * 64
# The header is a flat object (no nested braces), so its extent is known without parsing,
# and a string of the content cannot look like it (JSON escapes every quote inside one).
_HEADER_RE = re.compile(r'"captured"\s*:\s*\{([^{}]*)\}')
_DIGEST_RE = re.compile(r'"sha256"\s*:\s*"([0-9a-f]{64})"')
_TOOL_RE = re.compile(r'"tool"\s*:\s*"([^"\\]{1,200})"')
CATALOGS = "catalogs"
# Far above any capture (the largest, a checks inventory, is 430 KB); a file past it is
# refused unread, so a pull request cannot make gen check hash gigabytes.
MAX_CAPTURED_BYTES = 16 * 1024 * 1024
MAX_CAPTURED_FILES = 10_000


def with_header(doc: Mapping[str, Any], tool: str | None = None, **record: Any) -> dict[str, Any]:
    """``doc`` with its ``captured`` header: what it had there, ``tool`` (None: the one it
    names already), ``record``, and the digest's placeholder (filled by :func:`stamp`)."""
    header = dict(doc.get(HEADER) or {}) | ({"tool": tool} if tool else {}) | record | {DIGEST: PLACEHOLDER}
    if not isinstance(header.get("tool"), str) or not header["tool"]:
        raise ValueError("a capture header names the tool that made the file")
    return dict(doc) | {HEADER: header}


def _digest(data: bytes, span: tuple[int, int]) -> str:
    """The sha256 of ``data`` with the bytes of ``span`` (the 64 hex digits) as zeros."""
    start, end = span
    return hashlib.sha256(data[:start] + PLACEHOLDER.encode() + data[end:]).hexdigest()


def _locate(text: str) -> tuple[tuple[int, int] | None, str | None, str | None]:
    """The span of the digest's hex digits in ``text``, the tool the header names, and the
    problem when there is not exactly one well-formed header with one digest."""
    headers = list(_HEADER_RE.finditer(text))
    if len(headers) != 1:
        return None, None, ("no capture header (a top-level \"captured\" object with \"tool\" and "
                            "\"sha256\")" if not headers else f"{len(headers)} capture headers")
    header = headers[0]
    digests = list(_DIGEST_RE.finditer(header.group(1)))
    tool = _TOOL_RE.search(header.group(1))
    if len(digests) != 1:
        return None, tool.group(1) if tool else None, "its capture header has no sha256 of 64 hex digits"
    base = header.start(1)
    return (base + digests[0].start(1), base + digests[0].end(1)), tool.group(1) if tool else None, None


def stamp(text: str) -> str:
    """``text`` (a captured file's JSON, its header made by :func:`with_header`) with its digest filled in.

    ASCII text is expected (every capture writes ``ensure_ascii``), so character offsets are byte offsets.
    """
    if not text.isascii():
        raise ValueError("a captured file is ASCII JSON (ensure_ascii=True)")
    span, _, problem = _locate(text)
    if span is None:
        raise ValueError(f"cannot stamp: {problem}")
    return text[:span[0]] + _digest(text.encode(), span) + text[span[1]:]


def captured_json(doc: Mapping[str, Any], tool: str | None = None, **record: Any) -> str:
    """The usual text of a captured file: ``doc`` with its header, indented by one, keys
    sorted, ASCII, a final newline, stamped. Deterministic: the same capture, the same bytes."""
    import json

    body = json.dumps(with_header(doc, tool, **record), indent=1, sort_keys=True, ensure_ascii=True,
                      allow_nan=False)
    return stamp(body + "\n")


def recorded_digest(path: Path) -> str | None:
    """The digest the capture header of ``path`` records (not checked: :func:`check_captured`
    does that), or None when the file is missing, unreadable or has no header."""
    try:
        info = path.lstat()
    except OSError:
        return None
    return _recorded(path, info.st_mtime_ns, info.st_size)


@functools.lru_cache(maxsize=64)
def _recorded(path: Path, mtime_ns: int, size: int) -> str | None:
    """:func:`recorded_digest` of one version of the file (the stamp arguments key the cache)."""
    data, error = read_file(path, str(path), limit=MAX_CAPTURED_BYTES)
    if data is None or error is not None:
        return None
    text = data.decode("ascii", "replace")
    span = _locate(text)[0]
    return None if span is None else text[span[0]:span[1]]


def digest_problem(data: bytes) -> tuple[str, str | None, int] | None:
    """Why ``data`` is not a captured file as its capture wrote it: (code, message with the
    tool that re-captures it or None, line of the digest), or None when it proves its content."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return "C016", "holds text that is not ASCII, which no capture writes", 0
    span, tool, problem = _locate(text)
    if span is None:
        return "C017", problem, 0
    recorded = text[span[0]:span[1]]
    line = text.count("\n", 0, span[0]) + 1
    actual = _digest(data, span)
    if recorded == actual:
        return None
    return "C016", (f"its content does not match the digest its capture recorded (sha256 {recorded[:12]}..., "
                    f"the file now gives {actual[:12]}...): it was edited after "
                    f"{'`' + tool + '`' if tool else 'the capture'} wrote it"), line


def _json_files(folder: str, rel: str, out: list[tuple[str, str]], linked: list[Diagnostic]) -> None:
    """Every ``*.json`` below ``folder`` as (path, display) in name order, into ``out``; a
    linked folder, or a link named ``*.json``, into ``linked`` (Y009): a link would put
    files gen reads out of this check's reach."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if len(out) >= MAX_CAPTURED_FILES:
            return
        shown = f"{rel}/{entry.name}"
        if entry.is_symlink() and (entry.name.endswith(".json") or entry.is_dir()):
            linked.append(_linked(shown, entry.path))
        elif entry.is_dir(follow_symlinks=False):
            _json_files(entry.path, shown, out, linked)
        elif entry.name.endswith(".json"):
            out.append((entry.path, shown))


def _linked(shown: str, path: str) -> Diagnostic:
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return Diagnostic(Position(shown), "Y009", f"is a symbolic link (to {target!r}): the files under catalogs/ "
                      "are read and checked as they are in the repository; copy them instead of linking")


def check_captured(root: Path) -> list[Diagnostic]:
    """C016/C017 for each ``catalogs/**/*.json`` of ``root`` that does not prove its content
    (Y009/Y008/Y010 when it cannot be read as a regular file within the size bound; Y009 for
    ``catalogs/`` itself or a folder below it that is a link)."""
    folder = root / CATALOGS
    try:
        mode = folder.lstat().st_mode
    except OSError:
        return []
    if stat.S_ISLNK(mode):
        return [_linked(f"{CATALOGS}/", str(folder))]
    if not stat.S_ISDIR(mode):
        return []
    files: list[tuple[str, str]] = []
    out: list[Diagnostic] = []
    _json_files(str(folder), CATALOGS, files, out)
    for path, shown in files:
        data, error = read_file(Path(path), shown, limit=MAX_CAPTURED_BYTES)
        if error is not None:
            out.append(error)
            continue
        assert data is not None
        found = digest_problem(data)
        if found is None:
            continue
        code, message, line = found
        again = "capture it again; a captured file is never edited by hand (catalogs/README.md)"
        out.append(Diagnostic(Position(shown, line, 1 if line else 0), code, message or "", hint=again))
    return out
