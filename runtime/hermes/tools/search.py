"""Tool ``search_files`` (toolset ``file``): regex search in file contents, or glob search
for file names. Uses ripgrep through the execution environment when it is
installed (fast, honours .gitignore), else a pure-Python walk that skips hidden
and dependency directories. In a sandbox or on a remote host it runs grep and
find there (``search_shell``).
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from hermes.environments.files import Files
from hermes.errors import ToolError
from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.context import ToolContext
from hermes.tools.results import ok
from hermes.tools.search_shell import sandbox_search
from hermes.tools.targets import environment_errors, file_target

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
MAX_MATCH_CHARS = 300
MAX_FILE_BYTES = 5 * 1024 * 1024
SEARCH_TIMEOUT = 60.0
# The Python fallback cannot read .gitignore; these are what it would most often list.
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "venv"})


@dataclass(frozen=True)
class Query:
    """One search, as the model asked for it."""

    pattern: str
    root: Path
    glob: str | None
    ignore_case: bool
    limit: int
    readable: Callable[[str], Path | None]
    """Where a path of the commands' view really is, or None when the session's sandbox
    policy does not let the tools read it (skipped)."""
    shown: Path
    """``root`` as the model sees it (differs under a private /tmp)."""
    read: Callable[[str], bytes]
    """A checked read (what was opened is judged again, so a link swapped in meanwhile
    gains nothing)."""


@environment_errors
def search_files(args: dict[str, Any], *, ctx: ToolContext, ripgrep: str | None,
                 **_: Any) -> str:
    target = file_target(args.get("path") or ".", ctx)
    if not target.files.is_local:
        return sandbox_search(args, target, ctx.environment)
    root = Path(target.path)
    if not root.exists():
        raise ToolError(f"{target.shown} does not exist")
    query = Query(args["pattern"], root, args.get("file_glob"), args.get("ignore_case", False),
                  max(1, min(args.get("limit", DEFAULT_LIMIT), MAX_LIMIT)),
                  partial(_readable, target.files), Path(target.shown), target.files.read)
    engine = "ripgrep" if ripgrep else "python"
    if args.get("target", "content") == "files":
        found = _rg_files(query, ripgrep, ctx) if ripgrep else list(_walk_files(query))
        names = [_show(Path(f), ctx.cwd) for f in found[: query.limit]]
        return ok(files=names, count=len(names), truncated=len(found) > query.limit,
                  engine=engine)
    matches = _rg_content(query, ripgrep, ctx) if ripgrep else _py_content(query)
    shown = [{"path": _show(Path(p), ctx.cwd), "line": n, "text": t[:MAX_MATCH_CHARS]}
             for p, n, t in matches[: query.limit]]
    return ok(matches=shown, count=len(shown), truncated=len(matches) > query.limit,
              engine=engine)


def _readable(files: Files, shown: str) -> Path | None:
    try:
        return Path(files.locate(shown)[0])
    except ToolError:
        return None


def _show(path: Path, cwd: Path) -> str:
    """Paths under the working directory are shown relative to it."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def _rg(ripgrep: str, ctx: ToolContext, *options: str) -> tuple[list[str], str | None]:
    """Output lines of one ``rg`` run, and its error text when it failed (exit code 2)."""
    command = shlex.join([ripgrep, "--color", "never", *options])
    result = ctx.environment.run(command, timeout=SEARCH_TIMEOUT)
    failure = result.output.strip()[:500] if result.exit_code == 2 else None
    return result.output.splitlines(), failure


def _rg_files(query: Query, ripgrep: str, ctx: ToolContext) -> list[str]:
    glob = "--iglob" if query.ignore_case else "--glob"
    lines, failure = _rg(ripgrep, ctx, "--files", "--sort", "path", glob, query.pattern, "--",
                         str(query.shown))
    # The root is absolute, so file lines are too; diagnostics ("rg: ...") are not.
    found = [line for line in lines if line.startswith("/") and query.readable(line)]
    if failure and not found:
        raise ToolError(f"search failed: {failure}")
    return found[: query.limit + 1]


def _rg_content(query: Query, ripgrep: str, ctx: ToolContext) -> list[tuple[str, int, str]]:
    options = ["--line-number", "--no-heading", "--null", "--sort", "path",
               "--max-count", str(query.limit + 1), "--max-columns", str(MAX_MATCH_CHARS)]
    options += ["--ignore-case"] if query.ignore_case else []
    options += ["--glob", query.glob] if query.glob else []
    lines, failure = _rg(ripgrep, ctx, *options, "-e", query.pattern, "--", str(query.shown))
    matches = []
    for line in lines:
        path, sep, rest = line.partition("\0")
        number, _, text = rest.partition(":")
        if sep and number.isdigit() and query.readable(path):
            matches.append((path, int(number), text))
    if failure and not matches:
        raise ToolError(f"search failed: {failure}")
    return matches[: query.limit + 1]


def _walk_files(query: Query) -> Iterator[str]:
    """Files under the root (sorted, hidden and dependency directories skipped)
    whose name matches the glob; stops after ``limit + 1``."""
    count = 0
    for path, _ in _walk(query.shown, query.root, query.readable):
        name = path.name.lower() if query.ignore_case else path.name
        pattern = query.pattern.lower() if query.ignore_case else query.pattern
        if fnmatch.fnmatchcase(name, pattern):
            yield str(path)
            count += 1
            if count > query.limit:
                return


def _walk(shown: Path, root: Path, readable: Callable[[str], Path | None]
          ) -> Iterator[tuple[Path, Path]]:
    """``(shown path, real path)`` of the files under ``root`` (shown as ``shown``) in
    ripgrep's ``--sort path`` order (entries by name, depth first), skipping hidden
    entries, dependency directories and what the sandbox policy does not let be read
    (a link is judged by where it leads in the commands' view)."""
    if root.is_file():
        yield shown, root
        return
    try:
        entries = sorted(os.scandir(root), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            if entry.name not in SKIPPED_DIRS and readable(str(shown / entry.name)):
                yield from _walk(shown / entry.name, Path(entry.path), readable)
        elif (found := readable(str(shown / entry.name))) is not None and found.is_file():
            yield shown / entry.name, found


def _py_content(query: Query) -> list[tuple[str, int, str]]:
    try:
        regex = re.compile(query.pattern, re.IGNORECASE if query.ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {query.pattern!r}: {exc}") from exc
    matches: list[tuple[str, int, str]] = []
    for path, found in _walk(query.shown, query.root, query.readable):
        if query.glob and not fnmatch.fnmatchcase(path.name, query.glob):
            continue
        for number, line in _text_lines(found, query.read):
            if regex.search(line):
                matches.append((str(path), number, line))
                if len(matches) > query.limit:
                    return matches
    return matches


def _text_lines(path: Path, read: Callable[[str], bytes]) -> Iterator[tuple[int, str]]:
    """Numbered lines of a text file; binary, huge and unreadable files yield nothing."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return
        data = read(str(path))
    except (OSError, ToolError):
        return
    if b"\0" in data[:8192]:
        return
    yield from enumerate(data.decode("utf-8", errors="replace").splitlines(), 1)


def search_tool(ripgrep: str | None) -> ToolSpec:
    """``search_files``; ``ripgrep`` is the ``rg`` executable, or None for the Python search."""
    schema = object_schema(
        ("pattern",),
        pattern={"type": "string", "description": "Regex for content search; glob such as "
                 "'*.py' for target=files."},
        target={"type": "string", "enum": ["content", "files"],
                "description": "content (default): search inside files; files: match names."},
        path={"type": "string", "description": "Directory or file to search (default: cwd)."},
        file_glob={"type": "string", "description": "Only search files matching this glob."},
        ignore_case={"type": "boolean"},
        limit={"type": "integer", "description": f"Most results (default {DEFAULT_LIMIT})."},
    )
    return ToolSpec("search_files", "file", "Search file contents with a regex, or find files "
                    "by name with a glob.", schema, partial(search_files, ripgrep=ripgrep),
                    parallel_safe=True)
