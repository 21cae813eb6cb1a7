"""The on-host side of ``gen verify`` and ``gen preflight``: one standalone script.

This file is sent to the host and run there with the host's own SGLang interpreter
(``python -c SOURCE MODE ARG...`` for verify, ``python - preflight PAYLOAD`` over ssh
stdin for preflight). It imports nothing from ``generator`` and only the standard
library at module level (SGLang only inside ``preflight``), so it runs on any Python
3.8+ the host has. Every mode prints one JSON document on stdout after the marker
line ``RESULT_MARKER`` (SGLang may log to stdout before it).

Modes:

* ``weights DIR...``: every shard named in ``model.safetensors.index.json`` is present
  and its size equals ``8 + header length + last data offset`` from its safetensors
  header (a single ``model.safetensors`` without an index is checked the same way);
  the SHA-256 of config.json, the index and generation_config.json (gen compares them
  with the model's snapshot); the tensor-name prefixes, for the EAGLE3 drafter check.
* ``proc PID``: the process's argv and environment (from /proc, NUL-separated).
* ``http URL...``: status and body (first 64 KiB) of a GET on each URL.
* ``pids CGROUP``: every PID of the unit's cgroup (v2, or the v1/hybrid layouts).
* ``paths CGROUP PREFIX...``: for every process of the unit's cgroup, files it has
  open, mapped or as cwd/exe under a retired PREFIX.
* ``preflight PAYLOAD`` (base64 JSON): parse and validate each service's argv with the
  installed SGLang without starting a server, plus the checkpoint checks. With
  ``unit_file`` (the playbook's staged unit) and ``env_map`` (live env file -> staged
  copy), argv, environment and checkpoint paths are read from the staged files
  themselves, and SGLang validates with that environment.
"""

from __future__ import annotations

import base64
import io
import json
import os
import struct
import sys
import traceback
import urllib.error
import urllib.request

RESULT_MARKER = "=== gen on-host result ==="
INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"
# A real header is a few MB at most; anything larger means the file is not safetensors.
MAX_HEADER_BYTES = 100 * 1024 * 1024
HTTP_BODY_LIMIT = 1024 * 1024  # /get_server_info: every server arg, twice with one DP rank (~60 KB on 0.5.23)


def emit(result: object) -> None:
    """Print RESULT on stdout as JSON after the marker line (the caller reads only that)."""
    sys.stdout.write("\n" + RESULT_MARKER + "\n" + json.dumps(result) + "\n")
    sys.stdout.flush()


# ------------------------------------------------------------------ safetensors


def read_header(path: str) -> tuple:
    """The JSON header of a safetensors file (8-byte little-endian length first) and its length."""
    with open(path, "rb") as handle:
        head = handle.read(8)
        if len(head) != 8:
            raise ValueError("shorter than the 8-byte header length")
        (length,) = struct.unpack("<Q", head)
        if length > MAX_HEADER_BYTES:
            raise ValueError(f"header length {length} is not plausible")
        raw = handle.read(length)
        if len(raw) != length:
            raise ValueError(f"header cut short: {len(raw)} of {length} bytes")
    header = json.loads(raw.decode("utf-8"))
    if not isinstance(header, dict):
        raise ValueError("header is not a JSON object")
    return header, length


def expected_size(header: dict, header_length: int) -> int:
    """File size a complete shard has: 8 + header length + the largest data end offset."""
    ends = (int(info["data_offsets"][1]) for name, info in header.items() if name != "__metadata__")
    return 8 + header_length + max(ends, default=0)


def sha256_file(path: str) -> str | None:
    """SHA-256 of a regular file (links followed, as SGLang reads it), None when it is not one."""
    import hashlib

    if not os.path.isfile(path):
        return None
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def check_shard(path: str) -> dict:
    """Describe one shard: present, actual and expected size, tensor names, problem if any."""
    out: dict = {"file": os.path.basename(path), "present": os.path.isfile(path), "names": []}
    if not out["present"]:
        out["problem"] = "missing"
        return out
    try:
        size = os.path.getsize(path)
        header, length = read_header(path)
        out["size"] = size
        out["expected"] = expected_size(header, length)
        out["names"] = sorted(k for k in header if k != "__metadata__")
        if size != out["expected"]:
            out["problem"] = f"size {size} bytes, header says {out['expected']}"
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        out["problem"] = f"unreadable safetensors header: {exc}"
    return out


def check_weights(directory: str) -> dict:
    """Check a checkpoint folder: index present and every shard it names complete."""
    out: dict = {"dir": directory, "exists": os.path.isdir(directory), "shards": [], "problems": []}
    if not out["exists"]:
        out["problems"].append(f"{directory}: no such directory")
        return out
    # gen compares these with the model's snapshot (live/checkpoint_compare.py)
    out["hashes"] = {n: sha256_file(os.path.join(directory, n)) for n in ("config.json", INDEX_FILE,
                                                                          "generation_config.json")}
    index_path = os.path.join(directory, INDEX_FILE)
    if os.path.isfile(index_path):
        try:
            with open(index_path, encoding="utf-8") as handle:
                weight_map = json.load(handle)["weight_map"]
            files = sorted(set(weight_map.values()))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            out["problems"].append(f"{index_path}: unreadable index: {exc}")
            return out
        out["index"] = INDEX_FILE
    elif os.path.isfile(os.path.join(directory, SINGLE_FILE)):
        files, weight_map = [SINGLE_FILE], None
        out["index"] = None
    else:
        out["problems"].append(f"{directory}: neither {INDEX_FILE} nor {SINGLE_FILE}")
        return out
    for name in files:
        # The index comes with the checkpoint, not from gen: its names are data. One that is
        # not a path inside the folder (absolute, "..") is a problem, never a file to open.
        if not isinstance(name, str) or not name or name.startswith("/") or ".." in name.split("/") \
                or "\0" in name:
            out["problems"].append(f"{INDEX_FILE} names {name!r}, which is not a file inside {directory}")
            continue
        shard = check_shard(os.path.join(directory, name))
        if "problem" in shard:
            out["problems"].append(f"{name}: {shard['problem']}")
        if weight_map is not None and shard["present"] and "problem" not in shard:
            # The index must not name tensors the shard lacks (a shard from another save).
            listed = {t for t, f in weight_map.items() if f == name}
            lacking = sorted(listed - set(shard["names"]))
            if lacking:
                out["problems"].append(f"{name}: lacks {len(lacking)} tensor(s) the index names, "
                                       f"e.g. {lacking[0]}")
        out["shards"].append({k: v for k, v in shard.items() if k != "names"})
        out.setdefault("prefixes", [])
        out["prefixes"] = sorted(set(out["prefixes"]) | {_prefix(n) for n in shard["names"]})
    return out


def _prefix(tensor: str) -> str:
    """The part of a tensor name that tells the layout: ``midlayer`` or ``layers.0``."""
    parts = tensor.split(".")
    if parts[0] == "model" and len(parts) > 1:
        parts = parts[1:]
    if parts[0] == "layers" and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]



def read_proc(pid: str) -> dict:
    """Argv and environment of a process, as lists of strings (NUL-separated in /proc)."""
    out: dict = {"pid": pid}
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            out["argv"] = [w.decode("utf-8", "surrogateescape") for w in handle.read().split(b"\0")[:-1]]
        with open(f"/proc/{pid}/environ", "rb") as handle:
            out["environ"] = [w.decode("utf-8", "surrogateescape") for w in handle.read().split(b"\0")[:-1]]
    except OSError as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


def cgroup_pids(cgroup: str) -> list:
    """Every PID in the unit's cgroup and its sub-cgroups (cgroup v2, else v1 systemd)."""
    pids: list = []
    for base in ("/sys/fs/cgroup", "/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified"):
        top = base + cgroup
        if not os.path.isdir(top):
            continue
        for folder, _dirs, files in os.walk(top):
            if "cgroup.procs" in files:
                with open(os.path.join(folder, "cgroup.procs")) as handle:
                    pids.extend(line.strip() for line in handle if line.strip())
        if pids:
            break
    return sorted(set(pids), key=int)


def _under(path: str, prefixes: list) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def retired_paths(cgroup: str, prefixes: list) -> dict:
    """Files under PREFIXES that any process of CGROUP has as exe, cwd, open fd or mapping."""
    hits: list = []
    pids = cgroup_pids(cgroup)
    for pid in pids:
        seen = set()
        links = [f"/proc/{pid}/exe", f"/proc/{pid}/cwd"]
        try:
            links += [f"/proc/{pid}/fd/{fd}" for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            pass
        for link in links:
            try:
                target = os.readlink(link)
            except OSError:
                continue  # the fd closed meanwhile
            target = target.removesuffix(" (deleted)")
            if _under(target, prefixes) and target not in seen:
                seen.add(target)
                hits.append({"pid": pid, "via": link.split("/", 3)[3], "path": target})
        try:
            with open(f"/proc/{pid}/maps") as handle:
                for line in handle:
                    fields = line.split(None, 5)
                    path = fields[5].strip() if len(fields) == 6 else ""
                    if path and _under(path, prefixes) and path not in seen:
                        seen.add(path)
                        hits.append({"pid": pid, "via": "maps", "path": path})
        except OSError:
            pass
    return {"pids": pids, "hits": hits}



def http_get(url: str) -> dict:
    """Status and body of GET URL; a refused connection is status 0 with the error."""
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return {"url": url, "status": resp.status,
                    "body": resp.read(HTTP_BODY_LIMIT).decode("utf-8", "replace")}
    except urllib.error.HTTPError as exc:
        return {"url": url, "status": exc.code, "body": exc.read(HTTP_BODY_LIMIT).decode("utf-8", "replace")}
    except (OSError, ValueError) as exc:
        return {"url": url, "status": 0, "error": f"{type(exc).__name__}: {exc}"}



def _capture(fn, *args):
    """Call FN; return (value, None) or (None, error text): the deciding line first, then detail."""
    err = io.StringIO()
    old = sys.stderr
    sys.stderr = err
    try:
        return fn(*args), None
    except SystemExit as exc:  # argparse: usage text on stderr, exit status 2
        # The reason is argparse's "prog: error: ..." line; its usage text says nothing more.
        lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
        reason = next((ln for ln in lines if ": error: " in ln), lines[-1] if lines else "(no message)")
        return None, f"exit status {exc.code}: {reason}"
    except Exception as exc:  # noqa: BLE001  (SGLang's own validation: the traceback is the message)
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        summary = (f"{type(exc).__name__}: {exc}" if str(exc) else f"{type(exc).__name__} (no message)")
        where = f"{os.path.basename(frame.filename)}:{frame.lineno}"
        return None, f"{summary.splitlines()[0]} at {where}\n{err.getvalue()}{traceback.format_exc()}".rstrip()
    finally:
        sys.stderr = old


def _flag_value(argv: list, flag: str):
    """The value given to FLAG in ARGV (``--flag v`` or ``--flag=v``), else None."""
    for i, word in enumerate(argv):
        if word == flag and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith(flag + "="):
            return word.split("=", 1)[1]
    return None


def _checkpoint_results(svc: dict) -> list:
    """Shards of the model and the drafter; an EAGLE3 drafter must use ``midlayer.*``."""
    results = []
    for role, path in (("model", svc.get("model_path")), ("draft", svc.get("draft_path"))):
        if not path:
            continue
        found = check_weights(path)
        results.append({"check": f"checkpoint-{role}", "ok": not found["problems"],
                        "detail": path if not found["problems"] else "\n".join(found["problems"]),
                        "found": {"hashes": found.get("hashes"), "shards": found["shards"]}})
        if role == "draft" and (svc.get("algorithm") or "").upper() == "EAGLE3" and not found["problems"]:
            prefixes = found.get("prefixes", [])
            ok = "midlayer" in prefixes and "layers.0" not in prefixes
            detail = ("tensors are named midlayer.*" if ok else
                      f"EAGLE3 drafter tensors must be named midlayer.*, found {', '.join(prefixes)}"
                      + (" (rename layers.0.* to midlayer.*)" if "layers.0" in prefixes else ""))
            results.append({"check": "eagle3-draft-names", "ok": ok, "detail": detail})
    return results


def _sglang_results(svc: dict, argv: list) -> list:
    """SGLang's parser, then ServerArgs with its validation (0.5.23: resolve_once, check)."""
    import argparse

    from sglang.srt import server_args as sa  # the host's own SGLang

    parser = argparse.ArgumentParser()
    sa.ServerArgs.add_cli_args(parser)
    _, error = _capture(parser.parse_args, argv)
    results = [{"check": "sglang-parse", "ok": error is None, "detail": error or "argv accepted by SGLang's parser"}]
    if error is not None:
        return results
    if not os.path.isfile(os.path.join(svc.get("model_path") or "", "config.json")):
        results.append({"check": "sglang-server-args", "ok": False,
                        "detail": f"{svc.get('model_path')}/config.json missing: SGLang cannot load the model"})
        return results

    def validate():
        args = sa.prepare_server_args(list(argv))
        for step in ("resolve_once", "check_server_args"):
            if hasattr(args, step):
                getattr(args, step)()
        return args

    _, error = _capture(validate)
    results.append({"check": "sglang-server-args", "ok": error is None,
                    "detail": error or "ServerArgs built and validated"})
    return results


def _no_accelerator() -> bool:
    """True when torch sees no CUDA device (SGLang would refuse to pick a device)."""
    try:
        import torch

        return not torch.cuda.is_available()
    except Exception:  # noqa: BLE001  (no torch, or a broken one: no accelerator either way)
        return True


def _unit_lines(path: str) -> list:
    """A unit file's lines with backslash continuations joined (comments dropped)."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read().replace("\\\n", " ")
    return [ln for ln in text.splitlines() if not ln.lstrip().startswith(("#", ";"))]


def argv_from_unit(path: str) -> list:
    """The SGLang flags of a unit file's ExecStart (continuations joined; program words dropped).

    The playbook checks the staged unit, exactly what it would install, not a copy of
    its argv; gen renders ExecStart with quoting shlex reads the same way.
    """
    import shlex

    for line in _unit_lines(path):
        if line.startswith("ExecStart="):
            words = shlex.split(line.split("=", 1)[1])
            return words[3:] if words[1:3] == ["-m", "sglang.launch_server"] else words[1:]
    raise ValueError(f"{path} has no ExecStart=")


# The specifiers gen writes into Environment= (systemd.unit(5), system manager).
SPECIFIERS = {"%S": "/var/lib", "%C": "/var/cache", "%L": "/var/log", "%t": "/run", "%%": "%"}


def expand_specifiers(value: str) -> str:
    """VALUE with the system manager's directory specifiers expanded (others kept)."""
    out, i = [], 0
    while i < len(value):
        pair = value[i:i + 2]
        if pair in SPECIFIERS:
            out.append(SPECIFIERS[pair])
            i += 2
        else:
            out.append(value[i])
            i += 1
    return "".join(out)


def unit_environment(path: str) -> tuple:
    """(Environment= assignments in order, EnvironmentFile= paths in order) of a unit file.

    An assignment is ``(name, value)`` as systemd reads the quoted words (specifiers not yet
    expanded); a path keeps a leading ``-`` (a missing file is then not an error).
    """
    import shlex

    assignments, files = [], []
    for line in _unit_lines(path):
        if line.startswith("Environment="):
            for word in shlex.split(line.split("=", 1)[1]):
                name, sep, value = word.partition("=")
                if sep:
                    assignments.append((name, value))
        elif line.startswith("EnvironmentFile="):
            files.append(line.split("=", 1)[1].strip())
    return assignments, files


def read_env_file(path: str) -> dict:
    """NAME=VALUE lines as systemd's EnvironmentFile= reads them (env-file.c, the subset gen writes).

    Inside double quotes a backslash escapes ``"``, ``\\``, `` ` `` and ``$`` and is kept
    before any other character; a bare value ends at trailing blanks; ``#``/``;`` lines
    are comments.
    """
    out = {}
    with open(path, encoding="utf-8") as handle:
        for raw in handle.read().split("\n"):
            line = raw.strip()
            if not line or line.startswith(("#", ";")) or "=" not in line:
                continue
            name, value = line.split("=", 1)
            name, value = name.strip(), value.lstrip()
            if value.startswith('"') and value.endswith('"') and len(value) >= 2:
                inner, chars, i = value[1:-1], [], 0
                while i < len(inner):
                    if inner[i] == "\\" and i + 1 < len(inner) and inner[i + 1] in '"\\`$':
                        chars.append(inner[i + 1])
                        i += 2
                    else:
                        chars.append(inner[i])
                        i += 1
                value = "".join(chars)
            out[name] = value
    return out


def environment_from_unit(path: str, env_map: dict) -> tuple:
    """(environment, notes): what the unit at PATH gives its process, read from the staged files.

    Environment= first, then each EnvironmentFile= in order (systemd: the files win). A
    file gen stages is read at its staged path (ENV_MAP: live path -> staged path); any
    other file (the operator's secret environment) is not read, and a note says so.
    """
    assignments, files = unit_environment(path)
    env = {name: expand_specifiers(value) for name, value in assignments}
    notes = []
    for spec in files:
        live = spec.lstrip("-")
        if live not in env_map:
            notes.append(f"{live}: not read by preflight (not a file gen renders)")
            continue
        staged = env_map[live]
        if not os.path.isfile(staged):
            if not spec.startswith("-"):
                raise ValueError(f"{staged} (staged {live}) is missing")
            continue
        env.update(read_env_file(staged))
    return env, notes


def preflight(payload_b64: str) -> dict:
    """Run the checks for every service in the payload; never starts a server."""
    payload = json.loads(base64.b64decode(payload_b64))
    # SGLang must never reach the network here: a missing model would become a hub download.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    out: dict = {"services": {}, "notes": []}
    try:
        import importlib.metadata as md

        out["sglang_version"] = md.version("sglang")
    except Exception as exc:  # noqa: BLE001  (a note, not a failure: the checks below still run)
        out["sglang_version"] = None
        out["notes"].append(f"cannot read the sglang version: {exc}")
    add_cpu = _no_accelerator()
    for svc in payload["services"]:
        env: dict = {}
        if svc.get("unit_file"):
            # The staged files themselves, exactly what would be installed: argv, environment
            # and the checkpoints the argv names.
            argv = argv_from_unit(svc["unit_file"])
            env, env_notes = environment_from_unit(svc["unit_file"], svc.get("env_map") or {})
            out["notes"] += [f"{svc['name']}: {n}" for n in env_notes]
            svc = dict(svc, model_path=_flag_value(argv, "--model-path"),
                       draft_path=_flag_value(argv, "--speculative-draft-model-path"),
                       algorithm=_flag_value(argv, "--speculative-algorithm"))
        else:
            argv = list(svc["argv"])
        results = _checkpoint_results(svc)
        if add_cpu and _flag_value(argv, "--device") is None:
            # Without a GPU SGLang cannot pick a device; CPU keeps every other rule in force.
            argv.append("--device")
            argv.append("cpu")
            out["notes"].append(f"{svc['name']}: no CUDA device visible, validated with --device cpu")
        saved = dict(os.environ)
        os.environ.update(env)  # SGLang reads its variables while it validates
        try:
            results += _sglang_results(svc, argv)
        except Exception:  # noqa: BLE001  (SGLang that does not import is the finding, with its traceback)
            results.append({"check": "sglang-import", "ok": False, "detail": traceback.format_exc().rstrip()})
        finally:
            os.environ.clear()
            os.environ.update(saved)
        out["services"][svc["name"]] = results
    return out


def main(argv: list) -> int:
    """Dispatch on the mode word; the result goes to stdout after the marker."""
    mode, args = argv[0], argv[1:]
    if mode == "weights":
        emit([check_weights(d) for d in args])
    elif mode == "proc":
        emit(read_proc(args[0]))
    elif mode == "http":
        emit([http_get(u) for u in args])
    elif mode == "pids":
        emit(cgroup_pids(args[0]))
    elif mode == "paths":
        emit(retired_paths(args[0], args[1:]))
    elif mode == "preflight":
        emit(preflight(args[0]))
    else:
        print(f"unknown mode {mode!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
