"""``templates/``, read like models/: regular files only, bounded, and only what Jinja is given.

The templates are repository content a pull request controls, and ``gen check`` renders
them in CI. Before, jinja2's FileSystemLoader opened whatever a name pointed at: a
``templates/x.j2 -> /proc/self/environ`` link plus ``{% include "x.j2" %}`` put the CI
job's environment into ``gen diff`` and ``output/``, and the render cache keyed the link by
its name, so a changed target left ``output/`` stale while ``gen check`` said current.

So the folder is read once per run, here, the way ``load/files.py`` reads ``models/``:
the folder and each entry opened without following a link, checked on the open
descriptor, bounded in count and size, and its text handed to Jinja as a dict
(:class:`Templates`); Jinja never opens a file. The render cache keys the same texts
(:attr:`Templates.digest`). Includes are known before anything renders: every
``include``/``import``/``from``/``extends`` names a constant template of the folder, and
no chain of them is circular or deeper than :data:`MAX_INCLUDE_DEPTH` (Y016).

Findings: Y009 (a symlink, FIFO, device or folder), Y010 (too many or too large), Y008
(unreadable), Y007 (not UTF-8), Y015 (a name that is not printable text), Y016 (an
include that is dynamic, unknown, circular or too deep).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from generator.errors import Diagnostic, Position
from generator.systemd import device_name_problem
from generator.load.files import read_at
from generator.load.names import case_collisions

FOLDER = "templates"
MAX_TEMPLATES = 64  # gen's own four, and room for an operator's split of them
MAX_TEMPLATE_BYTES = 64 * 1024  # the largest of gen's is 2.5 KB
MAX_INCLUDE_DEPTH = 8  # gen's own: the unit includes the hardening block (2)
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Templates:
    """The texts of ``templates/`` by file name, as every render reads them, and the entries
    that could not be read (their findings). :attr:`digest` covers both: the render cache's key."""

    texts: tuple[tuple[str, str], ...]
    problems: tuple[Diagnostic, ...] = ()
    digest: str = field(init=False)

    def __post_init__(self) -> None:
        digest = hashlib.sha256(b"templates\0")
        for name, text in self.texts:
            data = text.encode("utf-8")
            digest.update(f"{name}\0{len(data)}\0".encode())
            digest.update(data)
        for problem in self.problems:
            digest.update(f"\0problem {problem}".encode("utf-8", "surrogateescape"))
        object.__setattr__(self, "digest", digest.hexdigest())

    def mapping(self) -> dict[str, str]:
        """Name -> text, for Jinja's DictLoader."""
        return dict(self.texts)


def _fail(display: str, code: str, message: str, line: int = 0) -> Diagnostic:
    return Diagnostic(Position(display, line, 1 if line else 0), code, message)


def _read_folder(root: Path) -> tuple[dict[str, str], list[Diagnostic]]:
    """Every entry of ``root/templates`` read as a template, or the finding that says why not."""
    folder = root / FOLDER
    try:
        dir_fd = os.open(folder, _DIR_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return {}, []
        linked = exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and folder.is_symlink())
        reason = ("is a symbolic link: gen reads only a real folder here; copy the templates in" if linked
                  else f"cannot be read: {exc.strerror or exc}")
        return {}, [_fail(f"{FOLDER}/", "Y009" if linked else "Y008", f"{FOLDER}/ {reason}")]
    texts: dict[str, str] = {}
    out: list[Diagnostic] = []
    try:
        names = sorted(n for n in os.listdir(dir_fd) if not n.startswith("."))  # editors' swap files
        if len(names) > MAX_TEMPLATES:
            return {}, [_fail(f"{FOLDER}/", "Y010", f"{FOLDER}/ holds {len(names)} entries; at most "
                              f"{MAX_TEMPLATES} templates are read")]
        for name in names:
            display = f"{FOLDER}/{name}"
            if not name.isprintable() or not _NAME_RE.fullmatch(name):
                out.append(_fail(display, "Y015", "a template name is letters, digits, '_', '.' and '-', "
                                 "printable text: rename it"))
                continue
            device = device_name_problem(name)
            if device is not None:
                out.append(_fail(display, "Y017", f"{device}: rename it"))
                continue
            data, problem = read_at(dir_fd, folder / name, display, MAX_TEMPLATE_BYTES)
            if problem is not None or data is None:
                out.append(problem or _fail(display, "Y008", "cannot read file"))
                continue
            try:
                texts[name] = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                out.append(_fail(display, "Y007", f"not UTF-8 text (byte {exc.start}): save it as UTF-8"))
    finally:
        os.close(dir_fd)
    out += case_collisions(((n, Position(f"{FOLDER}/{n}")) for n in texts), "template")
    return texts, out


def _references(name: str, text: str) -> tuple[list[tuple[str, int]], list[Diagnostic]]:
    """The templates ``text`` includes, imports or extends (name, line), and a Y016 for each
    reference that is not a constant name (Jinja could then open anything it is handed)."""
    import jinja2
    from jinja2 import nodes

    try:
        tree = jinja2.Environment().parse(text, name, f"{FOLDER}/{name}")
    except jinja2.TemplateSyntaxError:
        return [], []  # the render reports it, with its line (emit/render.py)
    found: list[tuple[str, int]] = []
    bad: list[Diagnostic] = []
    for node in tree.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
        target = getattr(node, "template", None)  # each of the four node types has one
        if isinstance(target, nodes.Const) and isinstance(target.value, str):
            found.append((target.value, node.lineno))
        else:
            bad.append(_fail(f"{FOLDER}/{name}", "Y016", "an include, import or extends whose template name "
                             "is not a constant string: name the template file itself", node.lineno))
    return found, bad


def include_problems(templates: Templates) -> list[Diagnostic]:
    """Y016 for each reference that is not a constant name, each to a template the folder does
    not hold, each circular chain, and each chain deeper than :data:`MAX_INCLUDE_DEPTH`.

    Parses every template (jinja2): the fleet runs it once per set of texts (its answer is
    kept with the models' findings in the render cache, keyed by :attr:`Templates.digest`).
    """
    texts = templates.mapping()
    graph: dict[str, list[tuple[str, int]]] = {}
    out: list[Diagnostic] = []
    for name, text in texts.items():
        refs, bad = _references(name, text)
        out += bad
        graph[name] = []
        for target, line in refs:
            if target in texts:
                graph[name].append((target, line))
            else:
                out.append(_fail(f"{FOLDER}/{name}", "Y016", f"includes '{target}', which is not a template of "
                                 f"{FOLDER}/ (a name there, no folder, no path)", line))
    depth: dict[str, int] = {}

    def walk(name: str, chain: tuple[str, ...]) -> int:
        """How deep the chain below ``name`` goes; a Y016 at the reference that closes a cycle or overflows."""
        if name in depth:
            return depth[name]
        deepest = 1
        for target, line in graph[name]:
            if target in chain or target == name:
                loop = chain[chain.index(target):] if target in chain else ()
                cycle = " -> ".join((*loop, name, target))
                out.append(_fail(f"{FOLDER}/{name}", "Y016", f"includes '{target}' in a circle ({cycle})", line))
                continue
            below = walk(target, (*chain, name))
            if below + 1 > MAX_INCLUDE_DEPTH:
                out.append(_fail(f"{FOLDER}/{name}", "Y016", f"includes '{target}', which nests templates "
                                 f"{below} deep: at most {MAX_INCLUDE_DEPTH} in all", line))
                continue
            deepest = max(deepest, below + 1)
        depth[name] = deepest
        return deepest

    for name in sorted(graph):
        walk(name, ())
    return sorted(dict.fromkeys(out), key=Diagnostic.sort_key)


def read_templates(root: Path) -> Templates:
    """The texts of ``root/templates`` and the findings of the entries that could not be read.

    Reads only (no jinja2): every run does it, to key the render cache.
    """
    texts, problems = _read_folder(root)
    return Templates(tuple(sorted(texts.items())), tuple(problems))


def load_templates(root: Path) -> tuple[Templates | None, list[Diagnostic]]:
    """The templates of ``root``, or None with the findings that stop every render."""
    templates = read_templates(root)
    problems = [*templates.problems, *include_problems(templates)]
    return (None, problems) if problems else (templates, [])
