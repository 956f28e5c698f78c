"""Where a file tool's path argument points: a path in the execution environment.

In ``local`` it is this machine's path, fully resolved and checked by
``paths.check_readable``/``check_writable`` and against what the local sandbox
hides from commands (``Environment.read_refusal``); in a sandbox or on a remote host it
is that file system's path (relative to its working directory), and only its
credential files are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from hermes.environments.files import Files
from hermes.errors import SandboxError, ToolError
from hermes.tools.context import ToolContext
from hermes.tools.paths import (
    PathRefused,
    check_readable,
    check_sandbox_writable,
    check_writable,
    resolve_path,
)


@dataclass(frozen=True)
class Target:
    files: Files
    path: str


def file_target(raw: str, ctx: ToolContext, *, write: bool = False) -> Target:
    """The checked path ``raw`` names, with the file access that reaches it."""
    if not raw.strip():
        raise ToolError("path is empty; give a file path")
    files = ctx.files or ctx.environment.files()
    if files.is_local:
        path = resolve_path(raw, ctx.cwd, ctx.user_home)
        if write:
            check_writable(path, ctx.home, ctx.user_home)
        else:
            check_readable(path, ctx.home)
        refusal = ctx.environment.read_refusal(path)
        if refusal is not None:  # what the sandbox hides from commands is not read here
            raise PathRefused(refusal)
        return Target(files, str(path))
    resolved = files.resolve(raw)
    if write:
        check_sandbox_writable(resolved, files.home)
    return Target(files, resolved)


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
