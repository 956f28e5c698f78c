"""``search_files`` in a sandbox or on a remote host: ``grep`` and ``find`` run there.

Both are in every POSIX base image, unlike ripgrep. Hidden entries and
``node_modules``/``__pycache__``/``venv`` are skipped, as in the local search.
"""

from __future__ import annotations

import shlex
from typing import Any

from hermes.environments.base import Environment
from hermes.errors import ToolError
from hermes.tools.results import ok
from hermes.tools.targets import Target

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
MAX_MATCH_CHARS = 300
SEARCH_TIMEOUT = 60.0
SKIPPED = (".*", "node_modules", "__pycache__", "venv")


def sandbox_search(args: dict[str, Any], target: Target, environment: Environment) -> str:
    if target.files.info(target.path) is None:
        raise ToolError(f"{target.path} does not exist")
    limit = max(1, min(args.get("limit", DEFAULT_LIMIT), MAX_LIMIT))
    ignore_case = bool(args.get("ignore_case", False))
    if args.get("target", "content") == "files":
        found = _files(args["pattern"], target.path, ignore_case, limit, environment)
        names = [_show(path, target.files.cwd) for path in found[:limit]]
        return ok(files=names, count=len(names), truncated=len(found) > limit, engine="find")
    matches = _content(args, target.path, ignore_case, limit, environment)
    shown = [{"path": _show(path, target.files.cwd), "line": number,
              "text": text[:MAX_MATCH_CHARS]} for path, number, text in matches[:limit]]
    return ok(matches=shown, count=len(shown), truncated=len(matches) > limit, engine="grep")


def _run(environment: Environment, command: str, limit: int) -> list[str]:
    # head bounds what crosses the wire; stderr is kept to explain an empty result.
    result = environment.run(f"{command} 2>&1 | head -n {limit + 1}", timeout=SEARCH_TIMEOUT)
    return result.output.splitlines()


def _files(pattern: str, root: str, ignore_case: bool, limit: int,
           environment: Environment) -> list[str]:
    prune = " -o ".join(f"-name {shlex.quote(name)}" for name in SKIPPED)
    name = "-iname" if ignore_case else "-name"
    command = (f"find {shlex.quote(root)} -mindepth 1 \\( {prune} \\) -prune -o -type f "
               f"{name} {shlex.quote(pattern)} -print | LC_ALL=C sort")
    lines = _run(environment, command, limit)
    found = [line for line in lines if line.startswith("/")]
    if not found and lines:
        raise ToolError(f"search failed: {lines[0][:500]}")
    return found


def _content(args: dict[str, Any], root: str, ignore_case: bool, limit: int,
             environment: Environment) -> list[tuple[str, int, str]]:
    options = ["-rnIHZE", "--color=never", *(f"--exclude-dir={name}" for name in SKIPPED)]
    options += ["-i"] if ignore_case else []
    options += [f"--include={args['file_glob']}"] if args.get("file_glob") else []
    command = shlex.join(["grep", *options, "-e", args["pattern"], "--", root])
    lines = _run(environment, command, limit)
    matches: list[tuple[str, int, str]] = []
    problems: list[str] = []
    for line in lines:
        path, sep, rest = line.partition("\0")
        number, _, text = rest.partition(":")
        if sep and number.isdigit():
            matches.append((path, int(number), text))
        else:
            problems.append(line)
    if problems and not matches:
        raise ToolError(f"search failed: {problems[0][:500]}")
    return matches


def _show(path: str, cwd: str) -> str:
    """Paths under the working directory are shown relative to it."""
    prefix = cwd.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else path
