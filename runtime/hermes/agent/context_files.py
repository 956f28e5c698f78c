"""Project context files for the system prompt: found, capped and scanned.

Discovery, from the working directory up to the git root (the nearest parent holding
``.git``; without one, the working directory alone):

1. ``.hermes.md`` (or ``HERMES.md``) — Hermes' own instructions;
2. else ``AGENTS.md``;
3. else ``CLAUDE.md``.

The first kind found anywhere along the walk wins, and *every* file of that kind along
the way is loaded, outermost first and nearest last, so instructions closer to the
work come later and have the final say (a monorepo's root file, then the package's).
At most one file per directory: ``.hermes.md`` before ``HERMES.md``.

Each file is capped at ``MAX_CHARS`` (head and tail kept around a truncation marker)
and scanned for prompt injection first: a file with injected instructions is replaced
by a one-line BLOCKED notice naming the file and the reason. The scanner is the shared
``hermes.memory.scan.scan_text`` when it is installed, else the small fallback here.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

KINDS: tuple[tuple[str, ...], ...] = ((".hermes.md", "HERMES.md"), ("AGENTS.md",),
                                      ("CLAUDE.md",))
"""File names by precedence; names within one tuple are alternatives per directory."""
MAX_CHARS = 20_000
"""Cap of one context file in the prompt (about 5,000 tokens)."""
HEAD_SHARE = 0.7
TAIL_SHARE = 0.2
"""Shares of ``MAX_CHARS`` kept from the start and the end of an oversized file."""
HEADER = "# Project context\nInstructions from the project's context files, nearest last."

Scanner = Callable[[str], str | None]

# The fallback scanner's patterns: the common, unambiguous shapes of injected
# instructions. Deliberately few, so real project docs are not blocked.
_INJECTION_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+)?"
                r"(previous|prior|above|earlier|preceding|system)\s+"
                r"(instructions|rules|prompts?|directions)", re.IGNORECASE),
     "tries to override earlier instructions"),
    (re.compile(r"\b(do\s+not|don't|never)\s+(tell|inform|mention\s+(this\s+)?to|reveal\s+"
                r"(this\s+)?to)\s+the\s+user", re.IGNORECASE),
     "asks to hide actions from the user"),
    (re.compile(r"\b(reveal|print|output|repeat|leak)\s+(your|the)\s+system\s+prompt",
                re.IGNORECASE),
     "asks to reveal the system prompt"),
    (re.compile(r"\b(curl|wget)\b[^\n]*\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE),
     "sends secrets to a remote host"),
    # Zero-width, bidi-override and tag characters hide text from a human reviewer.
    (re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\U000e0000-\U000e007f]"),
     "contains invisible or direction-changing characters"),
)


@dataclass(frozen=True)
class ContextFile:
    """One discovered file as it goes into the prompt."""

    path: Path
    name: str
    """The path shown to the model: relative to the top of the walk."""
    text: str
    """The (possibly truncated) content, or the BLOCKED notice."""
    blocked: str | None = None
    """Why the file was blocked; ``None`` when it was loaded."""
    truncated: bool = False


def working_directory(kind: str, cwd: str | Path | None) -> Path:
    """Where discovery starts: a local environment's ``cwd``, else the process's.

    Only a local environment's directory is a path on this machine (a docker
    sandbox's ``/workspace`` is not), as for ``ToolContext.for_session``.
    """
    if kind == "local" and cwd:
        return Path(cwd).expanduser()
    return Path.cwd()


def git_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding ``.git`` (a dir or a file)."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


def walk(cwd: Path) -> list[Path]:
    """Directories from the git root (or ``cwd`` alone) down to ``cwd``, outermost first."""
    cwd = cwd.resolve()
    top = git_root(cwd)
    if top is None:
        return [cwd]
    return [*reversed([d for d in cwd.parents if d.is_relative_to(top)]), cwd]


def discover(cwd: Path) -> list[Path]:
    """The context files that apply in ``cwd`` (see the module docstring)."""
    directories = walk(cwd)
    for names in KINDS:
        found = [path for path in (_first(d, names) for d in directories) if path]
        if found:
            return found
    return []


def _first(directory: Path, names: tuple[str, ...]) -> Path | None:
    return next((directory / n for n in names if (directory / n).is_file()), None)


def shared_scanner() -> Scanner | None:
    """``hermes.memory.scan.scan_text`` if that module exists (it is optional here)."""
    try:
        module = importlib.import_module("hermes.memory.scan")
    except ImportError:
        return None
    scanner = getattr(module, "scan_text", None)
    return scanner if callable(scanner) else None


def fallback_scan(text: str) -> str | None:
    """Why ``text`` looks like injected instructions, or ``None``."""
    for pattern, reason in _INJECTION_PATTERNS:
        if pattern.search(text.removeprefix("\ufeff")):  # a leading BOM is just encoding
            return reason
    return None


def truncate(text: str, name: str, limit: int = MAX_CHARS) -> str:
    """``text`` if within ``limit``, else its head and tail around a marker."""
    if len(text) <= limit:
        return text
    head, tail = int(limit * HEAD_SHARE), int(limit * TAIL_SHARE)
    cut = len(text) - head - tail
    marker = (f"\n\n[... {cut} characters of {name} truncated; read the file for the "
              "full text ...]\n\n")
    return text[:head] + marker + text[-tail:]


def load(path: Path, name: str, scan: Scanner | None = None) -> ContextFile | None:
    """Read, scan and cap one file; ``None`` if it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    reason = (scan or shared_scanner() or fallback_scan)(text)
    if reason:
        notice = f"[BLOCKED: {name} was not loaded: {reason}]"
        return ContextFile(path, name, notice, blocked=reason)
    capped = truncate(text, name)
    return ContextFile(path, name, capped, truncated=capped != text)


def load_context_files(cwd: Path, scan: Scanner | None = None) -> list[ContextFile]:
    """The discovered files of ``cwd``, loaded; empty files are left out."""
    paths = discover(cwd)
    top = walk(cwd)[0]
    loaded = [load(path, path.relative_to(top).as_posix(), scan) for path in paths]
    return [f for f in loaded if f is not None and f.text]


def render(files: list[ContextFile]) -> str:
    """The prompt section for ``files``; empty when there are none."""
    if not files:
        return ""
    blocks = [f"## {f.name}\n{f.text}" for f in files]
    return "\n\n".join([HEADER, *blocks])
