"""Where a file tool's path argument points: a path in the execution environment.

The environment's ``Files`` resolves and checks it (``Files.locate``): in ``local``
by the session's sandbox policy, the one commands run under (``environments/sandbox/
access.py``), so the file tools read what commands may read and write only where they
may write; in a sandbox or on a remote host it is that file system's path (relative to
its working directory), and only its credential files are refused for writing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from hermes.environments.files import Files
from hermes.errors import SandboxError, ToolError
from hermes.tools.context import ToolContext


@dataclass(frozen=True)
class Target:
    files: Files
    path: str
    """Where ``files`` reads and writes it."""
    shown: str
    """The path as the model sees it (the commands' view)."""


def file_target(raw: str, ctx: ToolContext, *, write: bool = False) -> Target:
    """The checked path ``raw`` names, with the file access that reaches it."""
    if not raw.strip():
        raise ToolError("path is empty; give a file path")
    files = ctx.files or ctx.environment.files()
    path, shown = files.locate(raw, write=write)
    return Target(files, path, shown)


Handler = Callable[..., str]


def environment_errors(handler: Handler) -> Handler:
    """A failing sandbox (daemon gone, connection lost) becomes a tool error."""

    @wraps(handler)
    def run(args: dict[str, Any], *, ctx: ToolContext, **options: Any) -> str:
        try:
            return handler(args, ctx=ctx, **options)
        except SandboxError as exc:
            raise ToolError(f"the {ctx.environment.kind} environment failed: {exc}") from exc

    return run
