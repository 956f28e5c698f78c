"""Toolset ``file``: ``read_file``, ``write_file`` and ``patch`` (``search_files`` is in search.py).

They act where the execution environment runs commands (``targets.file_target``):
locally as the session's sandbox policy allows commands (they read what commands may
read and write only where commands may write; never the Hermes root); in a sandbox
or on a remote host the paths are that file system's. Writes are atomic and keep the
file's permission bits.
"""

from __future__ import annotations

import difflib
import posixpath
from typing import Any

from hermes.errors import ToolError
from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.context import ToolContext
from hermes.tools.results import ok
from hermes.tools.targets import Target, environment_errors, file_target

MAX_READ_BYTES = 10 * 1024 * 1024
MAX_LINE_CHARS = 2000
DEFAULT_READ_LINES = 500
MAX_READ_LINES = 2000
MAX_DIFF_LINES = 80
BINARY_SNIFF_BYTES = 8192


def _existing_file(target: Target) -> Target:
    info = target.files.info(target.path)
    if info is not None and info.kind == "dir":
        raise ToolError(f"{target.shown} is a directory; use search_files to list its files")
    if info is None:
        raise ToolError(f"{target.shown} does not exist{_sibling_hint(target)}")
    return target


def _sibling_hint(target: Target) -> str:
    siblings = target.files.names(posixpath.dirname(target.path))
    close = difflib.get_close_matches(posixpath.basename(target.path), siblings, n=3,
                                      cutoff=0.6)
    return f" (similar files here: {', '.join(close)})" if close else ""


def read_text(target: Target) -> str:
    """A text file's content; refuses huge, binary and non-UTF-8 files with advice."""
    path, info = target.shown, target.files.info(target.path)
    size = info.size if info else 0
    if size > MAX_READ_BYTES:
        raise ToolError(f"{path} is too large to read ({size // 1024 // 1024} MB); use "
                        "search_files to find the relevant lines, or terminal with head/sed -n")
    data = target.files.read(target.path)
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        raise ToolError(f"{path} looks like a binary file; inspect it with terminal "
                        "(file, xxd | head) instead")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


@environment_errors
def read_file(args: dict[str, Any], *, ctx: ToolContext, **_: Any) -> str:
    target = file_target(args["path"], ctx)
    path = target.shown
    lines = read_text(_existing_file(target)).splitlines()
    offset = args.get("offset", 1)
    limit = min(args.get("limit", DEFAULT_READ_LINES), MAX_READ_LINES)
    if offset < 1 or limit < 1:
        raise ToolError("offset and limit must be at least 1 (offset is a 1-based line number)")
    if lines and offset > len(lines):
        raise ToolError(f"offset {offset} is past the end of {path} ({len(lines)} lines)")
    chosen = lines[offset - 1: offset - 1 + limit]
    numbered = [f"{offset + i:>6}|{_clip(line)}" for i, line in enumerate(chosen)]
    end = offset + len(chosen) - 1
    more = {"next_offset": end + 1} if end < len(lines) else {}
    return ok(path=path, content="\n".join(numbered), start_line=offset, end_line=end,
              total_lines=len(lines), **more)


def _clip(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return line[:MAX_LINE_CHARS] + f" ... [line cut, {len(line)} characters]"


def _write(target: Target, text: str) -> None:
    info = target.files.info(target.path)
    target.files.write(target.path, text.encode("utf-8"), info.mode if info else 0o644)


@environment_errors
def write_file(args: dict[str, Any], *, ctx: ToolContext, **_: Any) -> str:
    target = file_target(args["path"], ctx, write=True)
    info = target.files.info(target.path)
    if info is not None and info.kind == "dir":
        raise ToolError(f"{target.shown} is a directory; give a file path")
    content: str = args["content"]
    _write(target, content)
    return ok(path=target.shown, created=info is None, bytes_written=len(content.encode()),
              lines=content.count("\n") + (0 if content.endswith("\n") or not content else 1))


@environment_errors
def patch(args: dict[str, Any], *, ctx: ToolContext, **_: Any) -> str:
    target = file_target(args["path"], ctx, write=True)
    path = target.shown
    old, new = args["old_string"], args["new_string"]
    if not old:
        raise ToolError("old_string is empty; give the exact text to replace")
    if old == new:
        raise ToolError("old_string and new_string are the same; nothing to change")
    text = read_text(_existing_file(target))
    count = text.count(old)
    if count == 0:
        raise ToolError(f"old_string was not found in {path}{_closest_line(text, old)}; "
                        "read the file and copy the exact text, including indentation")
    if count > 1 and not args.get("replace_all", False):
        raise ToolError(f"old_string occurs {count} times in {path}; include more surrounding "
                        "lines to make it unique, or set replace_all=true")
    replace_all = bool(args.get("replace_all", False))
    updated = text.replace(old, new, -1 if replace_all else 1)
    _write(target, updated)
    return ok(path=path, replacements=count if replace_all else 1,
              diff=_diff(text, updated, posixpath.basename(path)))


def _closest_line(text: str, old: str) -> str:
    first = old.strip().splitlines()[0].strip() if old.strip() else ""
    lines = text.splitlines()
    close = difflib.get_close_matches(first, [line.strip() for line in lines], n=1, cutoff=0.6)
    if not close:
        return ""
    number = next(i for i, line in enumerate(lines, 1) if line.strip() == close[0])
    return f" (closest line {number}: {close[0]!r})"


def _diff(before: str, after: str, name: str) -> str:
    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(), f"a/{name}",
                                     f"b/{name}", lineterm="", n=2))
    cut = len(diff) > MAX_DIFF_LINES
    return "\n".join(diff[:MAX_DIFF_LINES]) + ("\n... (diff cut)" if cut else "")


PATH = {"type": "string", "description": "File path; relative paths start at the working "
        "directory."}


def file_tools() -> list[ToolSpec]:
    """``read_file``, ``write_file`` and ``patch``."""
    return [
        ToolSpec("read_file", "file", "Read a text file with line numbers (NNNNNN|line). "
                 "Use offset/limit to page through long files.",
                 object_schema(("path",), path=PATH,
                               offset={"type": "integer", "description": "First line, 1-based."},
                               limit={"type": "integer", "description": "Lines to read "
                                      f"(default {DEFAULT_READ_LINES}, max {MAX_READ_LINES})."}),
                 read_file, parallel_safe=True),
        ToolSpec("write_file", "file", "Create or overwrite a file with the given content.",
                 object_schema(("path", "content"), path=PATH, content={"type": "string"}),
                 write_file),
        ToolSpec("patch", "file", "Replace an exact string in a file. old_string must match "
                 "exactly once unless replace_all is true.",
                 object_schema(("path", "old_string", "new_string"), path=PATH,
                               old_string={"type": "string"}, new_string={"type": "string"},
                               replace_all={"type": "boolean"}),
                 patch),
    ]
