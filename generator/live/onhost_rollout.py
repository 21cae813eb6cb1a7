"""The rollout steps on the host: keep the previous set, start, wait, roll back.

Standalone (standard library only): the generated playbook runs it as root with
Ansible's ``script`` module. Every mode takes one base64 JSON argument and prints one
JSON document after the marker line; a failure is data in that document, never an
exit status, so the playbook can roll a whole group back before it fails the run.

* ``save [service]`` (the inventory's service entries: ``unit``, ``paths``): copy each unit's live files (unit, env file) into
  ``/var/lib/gen/previous/<unit>/`` with ``files.json`` (path, sha256, mode, uid, gid,
  or ``absent``) and whether the unit was active; written into a temporary folder and
  renamed into place, so a half-written set never replaces a whole one.
* ``start [service]``: per unit, the journal cursor and NRestarts before the start, then
  ``reset-failed``, ``enable`` and ``restart --no-block`` (no rank blocks another).
* ``wait {services, started}``: poll every unit at once until
  each is active/running and its own /health answers 200 (rank >= 1: SGLang's small
  health server). Failure: ``failed``, ``auto-restart``, Result != success, NRestarts
  above the value before the start, or the deadline (TimeoutStartSec + a margin); then
  the unit's journal since the cursor as ``reason`` (:func:`deciding_line`) and a bounded,
  de-duplicated ``journal`` excerpt (:func:`excerpt`).
* ``record {outcome, units, reasons, ...}``: keep each unit's last rollout outcome
  (applied, refused by preflight, rolled back, failed) with its reason in
  ``/var/lib/gen/rollouts/<unit>.json``.
* ``rollback [service]``: stop; restore the previous set byte for byte (mode,
  owner), remove files the new set added; a unit with no previous set (new) is
  disabled and its files removed. Then daemon-reload and start what was active before.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from typing import Any

RESULT_MARKER = "=== gen on-host result ==="
PREVIOUS = "/var/lib/gen/previous"
OUTCOMES = "/var/lib/gen/rollouts"  # each unit's last rollout outcome (gen status reads it)
MARGIN_S = 60  # beyond TimeoutStartSec: systemd gives up first and says why
POLL_S = 1.0
HEALTH_TIMEOUT_S = 5  # one /health request: a server that accepts and never answers is not healthy
PROPS = "ActiveState,SubState,Result,NRestarts,ExecMainStatus,ExecMainCode"


def emit(result: object) -> None:
    """Print RESULT as JSON after the marker line."""
    sys.stdout.write("\n" + RESULT_MARKER + "\n" + json.dumps(result) + "\n")
    sys.stdout.flush()


def systemctl(*args: str) -> subprocess.CompletedProcess:
    """systemctl with ARGS; never raises."""
    return subprocess.run(["systemctl", *args], capture_output=True, text=True)


def show(unit: str) -> dict:
    """The unit properties the wait loop decides on."""
    out = systemctl("show", "-p", PROPS, unit).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def cursor() -> str:
    """The journal's current position: everything after it belongs to this start."""
    out = subprocess.run(["journalctl", "-n0", "--show-cursor", "-q"], capture_output=True, text=True).stdout
    return out.strip().rsplit("-- cursor: ", 1)[-1] if "-- cursor: " in out else ""


def journal(unit: str, after: str) -> str:
    """The unit's whole journal since AFTER (the start), as text."""
    cmd = ["journalctl", "-u", unit, "--no-pager", "-o", "short-iso"]
    cmd += [f"--after-cursor={after}"] if after else ["-b"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return (proc.stdout + proc.stderr).strip()


# A journal line in journalctl's short-iso form: "<time> <host> <identifier>[<pid>]: <message>".
_PREFIX = re.compile(r"^\S+ \S+ ([^:\s]+?)(?:\[\d+\])?: ")
_ARGPARSE_ERROR = re.compile(r"^\S+: error: ")
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b(: |$)")
_ENDED = re.compile(r"exited|[Ff]ailed|[Kk]illed|[Tt]imed out|timeout")
EXCERPT_LINES = 40  # a journal excerpt in a failure message: head and tail of what is left
EXCERPT_HEAD = 10


def _message(line: str) -> tuple:
    """(identifier, message) of a journal line; ("", line) when it has no journal prefix."""
    match = _PREFIX.match(line)
    return (match.group(1), line[match.end():]) if match else ("", line)


def _usage_flags(messages: list) -> list:
    """For each message: does it belong to argparse's usage text (``usage:`` and its indented lines)?"""
    flags, inside = [], False
    for message in messages:
        inside = message.startswith("usage: ") or (inside and (message[:1] in (" ", "\t") or message == ""))
        flags.append(inside)
    return flags


def deciding_line(text: str) -> str:
    """The one line that says why a server failed: argparse's ``error:`` line, else the last
    exception's line (after its traceback), else the first line that is not usage text
    (systemd's own lines count last). Empty when the text has none."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("-- ")]
    service = [m for ident, m in map(_message, lines) if ident != "systemd"]
    for message in service:
        if _ARGPARSE_ERROR.match(message):
            return message
    last_traceback = max((i for i, m in enumerate(service) if m.startswith("Traceback (most recent call last)")),
                         default=-1)
    exceptions = [m for i, m in enumerate(service) if i > last_traceback and _EXCEPTION.match(m)]
    if exceptions:
        return exceptions[0] if last_traceback >= 0 else exceptions[-1]
    for message, usage in zip(service, _usage_flags(service)):  # noqa: B905 (the same length; 3.8+ hosts)
        if not usage and not message.startswith("Traceback"):
            return message
    # Nothing from the server itself: systemd's first line about how it ended.
    ended = [m for ident, m in map(_message, lines) if ident == "systemd" and _ENDED.search(m)]
    return ended[0] if ended else (_message(lines[-1])[1] if lines else "")


def excerpt(text: str, limit: int = EXCERPT_LINES) -> str:
    """TEXT for a failure message: usage text collapsed, repeated lines dropped (counted), at
    most LIMIT lines (the first EXCERPT_HEAD and the last ones, the middle counted)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    messages = [_message(ln)[1] for ln in lines]
    kept, seen, repeats = [], set(), 0
    usage = _usage_flags(messages)
    for i, line in enumerate(lines):
        message = messages[i]
        if usage[i]:
            if message.startswith("usage: ") and message not in seen:
                seen.add(message)
                kept.append(line.split("usage: ", 1)[0] + "usage: ... (argparse's usage text, left out)")
            continue
        if message in seen:
            repeats += 1
            continue
        seen.add(message)
        kept.append(line)
    if len(kept) > limit:
        tail = limit - EXCERPT_HEAD
        kept = kept[:EXCERPT_HEAD] + [f"... {len(kept) - limit} line(s) left out ..."] + kept[-tail:]
    if repeats:
        kept.append(f"({repeats} repeated line(s) left out; the whole journal: journalctl -u UNIT)")
    return "\n".join(kept)


def _sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def save(items: list) -> dict:
    """Keep each unit's live files as its previous set."""
    out = {}
    for item in items:
        unit, final = item["unit"], os.path.join(PREVIOUS, item["unit"])
        tmp = f"{final}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp, mode=0o700)
        files = []
        for path in item["paths"]:
            if not os.path.isfile(path):
                files.append({"path": path, "absent": True})
                continue
            st = os.stat(path)
            copy = os.path.join(tmp, "files", path.lstrip("/"))
            os.makedirs(os.path.dirname(copy), mode=0o700, exist_ok=True)
            shutil.copy2(path, copy)
            files.append({"path": path, "sha256": _sha256(path), "mode": st.st_mode & 0o7777,
                          "uid": st.st_uid, "gid": st.st_gid})
        new = all(f.get("absent") for f in files if f["path"].endswith(".service"))
        active = systemctl("is-active", "--quiet", unit).returncode == 0
        with open(os.path.join(tmp, "files.json"), "w", encoding="utf-8") as handle:
            json.dump({"unit": unit, "new": new, "active": active, "files": files}, handle, indent=1)
        shutil.rmtree(final, ignore_errors=True)
        os.rename(tmp, final)
        out[unit] = {"new": new, "active": active, "saved": [f["path"] for f in files if not f.get("absent")]}
    return out


def _begin(unit: str) -> dict:
    """What the wait loop compares against: journal cursor and NRestarts before the start."""
    return {"cursor": cursor(), "nrestarts": int(show(unit).get("NRestarts") or 0)}


def start(services: list) -> dict:
    """Enqueue a restart of every service's unit without waiting for any of them."""
    out = {}
    for svc in services:
        unit = svc["unit"]
        out[unit] = _begin(unit)
        systemctl("reset-failed", unit)  # StartLimitBurst counts earlier failed starts
        systemctl("enable", "--quiet", unit)
        proc = systemctl("restart", "--no-block", unit)
        out[unit]["queued"] = proc.returncode == 0
        out[unit]["error"] = proc.stderr.strip()
    return out


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=HEALTH_TIMEOUT_S) as resp:  # the unit's own /health
            return resp.status == 200
    except Exception:  # noqa: BLE001  (refused, reset, timed out, HTTP error: not healthy yet)
        return False


def _verdict(item: dict, st: dict) -> tuple:
    """(done, ok, check, detail) for one unit's current state."""
    if item.get("queued") is False:
        return True, False, "start", f"systemctl restart {item['unit']} refused: {item.get('error')}"
    active, sub, res = st.get("ActiveState"), st.get("SubState"), st.get("Result")
    restarts = int(st.get("NRestarts") or 0)
    status = f"exit status {st.get('ExecMainStatus')} ({st.get('ExecMainCode')})"
    if active == "failed" or sub == "auto-restart" or (res not in ("", "success", None)) \
            or restarts > int(item["nrestarts"]):
        check = "readiness-timeout" if res == "timeout" else "exited"
        return True, False, check, (f"{item['unit']} is {active} ({sub}), result {res}, {status}, "
                                    f"restarted {restarts - int(item['nrestarts'])} time(s)")
    if (active, sub) == ("active", "running") and _healthy(item["url"]):
        return True, True, "healthy", f"{item['unit']} is active and {item['url']} answers 200"
    return False, False, "", ""


def wait(spec: dict) -> dict:
    """Poll every unit until each is healthy or has failed; failures carry the journal.

    SPEC: ``{"services": [...], "started": <start's or rollback's result>}``.
    """
    items = [{"unit": s["unit"], "url": s["health_url"], "timeout_s": s["timeout_start_s"],
              **spec["started"][s["unit"]]} for s in spec["services"]]
    started = time.monotonic()
    pending = {i["unit"]: i for i in items}
    out = {}
    while pending:
        for unit, item in list(pending.items()):
            done, ok, check, detail = _verdict(item, show(unit))
            late = time.monotonic() - started > float(item["timeout_s"]) + MARGIN_S
            if done or late:
                if late and not done:
                    check, detail = "readiness-timeout", f"{item['url']} did not answer 200 within " \
                                                         f"{int(item['timeout_s']) + MARGIN_S} s"
                seconds = round(time.monotonic() - started, 1)
                text = "" if ok else journal(unit, item.get("cursor", ""))
                out[unit] = {"unit": unit, "ok": ok, "check": check,
                             "detail": f"{detail} after {seconds} s" if ok else detail, "seconds": seconds,
                             # The reason first, then a bounded excerpt: never the whole journal.
                             "reason": "" if ok else (deciding_line(text) or detail),
                             "journal": "" if ok else excerpt(text)}
                del pending[unit]
        if pending:
            time.sleep(POLL_S)
    return out


def _restore(unit: str, paths: list) -> dict:
    """Put the previous set back byte for byte; a new unit is disabled and its files go."""
    folder = os.path.join(PREVIOUS, unit)
    meta_path = os.path.join(folder, "files.json")
    meta = None
    if os.path.isfile(meta_path):
        with open(meta_path, encoding="utf-8") as handle:
            meta = json.load(handle)
    if meta is None or meta["new"]:
        systemctl("disable", "--quiet", unit)
        for path in paths:
            if os.path.isfile(path):
                os.unlink(path)
        return {"restored": False, "active": False}
    for f in meta["files"]:
        if f.get("absent"):
            if os.path.isfile(f["path"]):
                os.unlink(f["path"])
            continue
        tmp = f"{f['path']}.gen-restore-{os.getpid()}"
        shutil.copyfile(os.path.join(folder, "files", f["path"].lstrip("/")), tmp)
        os.chmod(tmp, f["mode"])
        os.chown(tmp, f["uid"], f["gid"])
        os.replace(tmp, f["path"])  # atomic: the unit never sees half a file
    return {"restored": True, "active": bool(meta["active"])}


def rollback(items: list) -> dict:
    """Stop every unit, restore, reload once, start again what was running before."""
    out = {}
    for item in items:
        systemctl("stop", item["unit"])  # also cancels a pending auto-restart
        out[item["unit"]] = _restore(item["unit"], item["paths"])
    systemctl("daemon-reload")
    for unit, state in out.items():
        if state["active"]:
            state.update(_begin(unit))
            systemctl("reset-failed", unit)
            systemctl("restart", "--no-block", unit)
    return out


def record(spec: dict) -> dict:
    """Keep each unit's last rollout outcome in ``OUTCOMES/<unit>.json`` (what ``gen status`` shows).

    SPEC: ``{"outcome", "units", "reasons": {unit: reason}, "reason" (the others'),
    "down": [units whose rollback did not come back], "inventory", "digest"}``; the host's
    clock adds ``at`` (UTC). Written to a temporary file and renamed: never half a file.
    """
    os.makedirs(OUTCOMES, mode=0o755, exist_ok=True)
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    reasons, down = spec.get("reasons") or {}, set(spec.get("down") or ())
    out = {}
    for unit in sorted(set(spec.get("units") or ())):
        if "/" in unit or unit.startswith("."):
            continue  # a unit name, never a path
        outcome = "failed, and the rollback did not come back healthy" if unit in down else spec["outcome"]
        doc = {"unit": unit, "at": at, "outcome": outcome, "reason": str(reasons.get(unit, spec.get("reason", ""))),
               "inventory": str(spec.get("inventory", "")), "digest": str(spec.get("digest", ""))}
        final = os.path.join(OUTCOMES, f"{unit}.json")
        tmp = f"{final}.tmp-{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(doc, handle, indent=1, sort_keys=True)
        os.chmod(tmp, 0o644)
        os.replace(tmp, final)
        out[unit] = doc
    return out


# Each takes the decoded JSON spec (a list or a mapping, per mode) and returns the result to emit.
MODES: dict[str, Callable[[Any], dict]] = {"save": save, "start": start, "wait": wait, "rollback": rollback,
                                           "record": record}


def main(argv: list) -> int:
    """Dispatch on the mode word."""
    if len(argv) != 2 or argv[0] not in MODES:
        print(f"usage: onhost_rollout.py {'|'.join(MODES)} SPEC", file=sys.stderr)
        return 2
    emit(MODES[argv[0]](json.loads(base64.b64decode(argv[1]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
