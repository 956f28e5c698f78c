"""Scanning what goes into a skill: every write, every install, every audit.

Each text file is checked with the memory scan's patterns (``memory/scan.py``:
injected instructions, exfiltration, invisible characters) read as a person reviewing
a skill reads them (``scan_text.py``: prose is not a shell, a credential may go to its
own service, code may hold role markers); shell scripts go through the
terminal's danger detector (``detect_dangers``; a program whose name is computed,
``"$@"`` or ``$PYTHON x.py``, is only a note: see ``NOTE_CLASSES``) and Python
scripts through a static check for obvious exfiltration: a script that imports a
network module and reads a credential file or hands over the whole environment
(``dict(os.environ)``). Reading one variable (``os.environ["GITHUB_TOKEN"]``) to
call an API is not flagged, nor is the environment handed to a child process
(``subprocess.run(..., env=os.environ.copy())``): it stays on the machine. A binary
file under ``scripts/`` is refused when it is a program (ELF, Mach-O, PE, WebAssembly,
compiled Python); an archive or an image there is a file like any other. Sizes are
capped; a link leading out of the skill is a finding (``links.py``: it is never copied
nor followed).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hermes.pysource import parse_python
from hermes.skills.links import tree
from hermes.skills.model import SKILL_FILE

if TYPE_CHECKING:
    from hermes.memory.scan import Finding as ThreatFinding

MAX_SKILL_MD_CHARS = 100_000
"""``SKILL.md`` is loaded whole into a turn: keep it under ~25k tokens."""
MAX_FILE_BYTES = 1024 * 1024
"""One supporting file."""
MAX_SKILL_BYTES = 8 * 1024 * 1024
MAX_SKILL_FILES = 500
SHELLS = re.compile(r"^#!\s*\S*(?:/|\benv\s+)(?:ba|z|da|k)?sh\b")
NETWORK_MODULES = frozenset({"requests", "urllib", "urllib3", "http", "httpx", "aiohttp",
                             "socket", "smtplib", "ftplib", "paramiko", "websocket",
                             "websockets", "telnetlib", "pycurl"})
CREDENTIAL_PATHS = re.compile(r"\.ssh\b|id_(?:rsa|ed25519|ecdsa)|\.aws\b|\.netrc|"
                              r"\.git-credentials|(?:^|/)\.env\b|/etc/(?:passwd|shadow)|"
                              r"\.hermes\b|HERMES_HOME|\.gnupg|\.kube/config|\.docker/config")
ENVIRON_KEY_ACCESS = frozenset({"get", "setdefault", "pop"})
ENVIRON_COPY_USES = frozenset({"get", "setdefault", "pop", "update", "__setitem__"})
"""What may be done with a copy of the environment that is handed to a child process."""
PROGRAM_MAGIC = (b"\x7fELF", b"MZ", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf",
                 b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"\x00asm")
PROGRAM_SUFFIXES = (".pyc", ".pyo", ".so", ".dylib", ".dll", ".exe", ".class", ".jar")
NOTE_CLASSES = frozenset({"computed_command"})
"""Danger classes that alone keep no script out, reported by ``skills audit`` as notes.
A script is read, not run, when a skill is installed, and ``"$@"``, ``$PYTHON x.py`` or
``${EDITOR:-vi}`` are how scripts take a program from their caller; what such a name
is given that would be refused for any program (``$X -rf /``) is a finding of its own."""


@dataclass(frozen=True)
class Finding:
    """Something in a skill's file that keeps it out (or needs the user's consent)."""

    file: str
    """The file, relative to the skill's directory."""
    kind: str
    detail: str
    note: bool = False
    """Reported (``skills audit``) but keeps nothing out."""

    def __str__(self) -> str:
        return f"{self.file}: {self.kind}: {self.detail}"

    @classmethod
    def of(cls, file: str, threat: ThreatFinding) -> Finding:
        """The finding of a threat the text scan found in ``file``."""
        return cls(file, threat.kind, threat.reason()[len(threat.kind):].strip())


def check_size(file: str, size: int) -> Finding | None:
    """A finding when ``file`` (relative) is over its cap."""
    if file == SKILL_FILE and size > MAX_SKILL_MD_CHARS:
        return Finding(file, "too large", f"{size:,} characters, at most "
                       f"{MAX_SKILL_MD_CHARS:,}: move details into references/")
    if size > MAX_FILE_BYTES:
        return Finding(file, "too large", f"{size:,} bytes, at most {MAX_FILE_BYTES:,} bytes")
    return None


def scan_content(file: str, data: bytes, *, notes: bool = False) -> list[Finding]:
    """Findings in one file's content (``file`` is relative to the skill); the notes
    too with ``notes``."""
    from hermes.skills.scan_text import find_threats  # compiled patterns: only when writing

    if is_program(file, data):
        return [Finding(file, "binary script", "a program, not readable text: scripts must "
                        "be readable")]
    text = _text_of(data)
    if text is None:
        return []
    text = text.removeprefix("\ufeff")
    findings = [Finding.of(file, threat) for threat in find_threats(file, text)]
    if is_shell_script(file, text):
        findings.extend(f for f in _shell_findings(file, text) if notes or not f.note)
    elif file.endswith(".py") or text.startswith("#!") and "python" in text.split("\n", 1)[0]:
        findings.extend(python_findings(file, text))
    return findings


def scan_tree(directory: Path, *, notes: bool = False, unit: str = "skill",
              skip: Callable[[str], bool] = lambda _rel: False) -> list[Finding]:
    """Findings in every file of a skill's directory (or a plugin's: ``unit`` names it):
    content, sizes, links leading out of it (and the notes with ``notes``); what ``skip``
    names (a relative path that is not copied) is left out. A link staying inside is no
    finding: what it points at is scanned where it is."""
    findings: list[Finding] = []
    total = count = 0
    for entry in tree(directory):
        rel = entry.rel
        if skip(rel):
            continue
        if entry.kind == "outside":
            findings.append(Finding(rel, "symlink", f"leads outside the {unit}; not copied"))
        elif entry.kind == "file":
            data = entry.path.read_bytes()
            total, count = total + len(data), count + 1
            size = len(data.decode("utf-8", "replace")) if rel == SKILL_FILE else len(data)
            too_big = check_size(rel, size)
            findings.extend([too_big] if too_big else scan_content(rel, data, notes=notes))
    if total > MAX_SKILL_BYTES or count > MAX_SKILL_FILES:
        findings.append(Finding(".", "too large", f"{count} files, {total:,} bytes; at most "
                                f"{MAX_SKILL_FILES} files and {MAX_SKILL_BYTES:,} bytes"))
    return findings


def is_program(file: str, data: bytes) -> bool:
    """A binary under ``scripts/`` that a machine runs (not an archive, image or data)."""
    return file.startswith("scripts/") and (data.startswith(PROGRAM_MAGIC)
                                            or file.lower().endswith(PROGRAM_SUFFIXES))


def is_shell_script(file: str, text: str) -> bool:
    return file.endswith((".sh", ".bash", ".zsh")) or bool(SHELLS.match(text))


def _shell_findings(file: str, text: str) -> list[Finding]:
    from hermes.tools.danger import detect_dangers  # the shell parser, only when needed

    return [Finding(file, f"dangerous command ({danger.key})", danger.reason)
            if danger.key not in NOTE_CLASSES else
            Finding(file, danger.key, f"{danger.reason}; what it runs is checked as far as "
                    "the script tells", note=True)
            for danger in detect_dangers(text)]


def python_findings(file: str, text: str) -> list[Finding]:
    """Obvious exfiltration in a Python script (see the module docstring)."""
    try:
        tree = parse_python(text)
    except SyntaxError as exc:
        return [Finding(file, "unparseable python", f"cannot be checked ({exc.msg})")]
    except ValueError as exc:  # e.g. a NUL byte
        return [Finding(file, "unparseable python", f"cannot be checked ({exc})")]
    network = sorted(_imported(tree) & NETWORK_MODULES)
    if not network:
        return []
    leaks = _credential_strings(tree) + _whole_environment(tree)
    return [Finding(file, "exfiltration", f"{leak} in a script that imports {network[0]}")
            for leak in leaks[:1]]


def _imported(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "__import__" and node.args \
                and isinstance(node.args[0], ast.Constant):
            names.add(str(node.args[0].value).split(".")[0])
    return names


def _credential_strings(tree: ast.AST) -> list[str]:
    return [f"reads {match.group(0)!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and (match := CREDENTIAL_PATHS.search(node.value))]


def _whole_environment(tree: ast.AST) -> list[str]:
    """``os.environ`` used as a whole (copied, iterated, passed on), not one key read nor
    handed to a child process (``env=``)."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    loads: dict[str, list[ast.Name]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads.setdefault(node.id, []).append(node)
    leaks = []
    for node in ast.walk(tree):
        if not _is_environ(node):
            continue
        parent = parents.get(node)
        if isinstance(parent, ast.Subscript) and parent.value is node:
            continue
        if isinstance(parent, ast.Attribute) and parent.attr in ENVIRON_KEY_ACCESS:
            continue
        if isinstance(parent, ast.Compare):
            continue
        if _to_child_process(_whole(node, parents), parents, loads, 0):
            continue
        leaks.append("uses the whole environment (os.environ)")
    return leaks


def _whole(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST:
    """The expression holding all of ``os.environ``: itself, ``os.environ.copy()`` or
    ``dict(os.environ)``."""
    parent = parents.get(node)
    if isinstance(parent, ast.Attribute) and parent.attr == "copy" \
            and isinstance(call := parents.get(parent), ast.Call) and call.func is parent:
        return call
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) \
            and parent.func.id == "dict" and parent.args == [node]:
        return parent
    return node


def _to_child_process(expr: ast.AST, parents: dict[ast.AST, ast.AST],
                      loads: dict[str, list[ast.Name]], depth: int) -> bool:
    """Whether ``expr`` (the environment) only ever becomes a child process's ``env=``:
    directly, spread into a dict (``{**os.environ, "A": "1"}``), or through a variable
    that is only read by key, updated, and handed on as ``env=``."""
    parent = parents.get(expr)
    if isinstance(parent, ast.keyword):
        return parent.arg == "env"
    if isinstance(parent, ast.Dict) and any(key is None and value is expr
                                            for key, value in zip(parent.keys, parent.values,
                                                                  strict=True)):
        return _to_child_process(parent, parents, loads, depth)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and depth < 3 \
            and isinstance(target := parent.targets[0], ast.Name):
        uses = loads.get(target.id, [])
        return bool(uses) and all(_copy_use(use, parents, loads, depth) for use in uses)
    return False


def _copy_use(use: ast.Name, parents: dict[ast.AST, ast.AST],
              loads: dict[str, list[ast.Name]], depth: int) -> bool:
    parent = parents.get(use)
    if isinstance(parent, ast.Subscript) and parent.value is use:
        return True
    if isinstance(parent, ast.Attribute) and parent.attr in ENVIRON_COPY_USES:
        return True
    return _to_child_process(use, parents, loads, depth + 1)


def _is_environ(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute) and node.attr in ("environ", "environb"):
        return isinstance(node.value, ast.Name) and node.value.id == "os"
    return False


def _text_of(data: bytes) -> str | None:
    """The text of ``data``, or None when it is not UTF-8 (a real binary file). NUL bytes
    do not make text binary: ``skill_view`` would still hand it to the model."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def relative_parts(path: str) -> tuple[str, ...] | None:
    """The parts of a relative path inside a skill, or None when it could escape."""
    if not path or path.startswith(("/", "\\")) or "\x00" in path:
        return None
    parts = tuple(p for p in re.split(r"[/\\]", path) if p not in ("", "."))
    if not parts or any(p == ".." for p in parts) or os.path.isabs(path):
        return None
    return parts
