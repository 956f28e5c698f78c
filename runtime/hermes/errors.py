"""Every error the runtime raises on purpose, split by audience.

- ``UserError`` and its subclasses are mistakes the user can fix (bad config,
  bad arguments, a missing profile). The CLI prints them as one line and exits
  with code 2.
- ``ProviderError`` / ``SandboxError`` come from adapters (litellm, docker,
  ssh) and are translated at the adapter boundary with ``raise ... from exc``.
- ``ToolError`` is shown to the model as a tool result, never to the user as a
  crash.
- ``DiskFull``: a write found no space left; one line naming the file, exit code 1.
"""

from __future__ import annotations

import difflib
import errno
import os
from collections.abc import Iterable

FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
SQLITE_FULL = 13
"""SQLite's primary result code for "database or disk is full"."""
SQLITE_IO = (10, 14)
"""SQLite's ``disk I/O error`` and ``unable to open``: what opening a WAL database says
when its shared-memory file finds no room; a full disk when its file system is full."""
ROOM_BYTES = 1 << 20
"""Free space under which a file system counts as full (SQLite grows files by pages)."""


class HermesError(Exception):
    """Base class for every error raised on purpose."""

    exit_code = 1


class UserError(HermesError):
    """A mistake the user can fix; shown as one line, exit code 2."""

    exit_code = 2


class ConfigError(UserError):
    """A problem in a config file or override: names the file, the key and the fix."""

    def __init__(self, message: str, *, source: str | None = None, key: str | None = None):
        self.source = source
        self.key = key
        self.detail = message
        prefix = ": ".join(part for part in (source, key) if part)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class MissingValueError(ConfigError):
    """A required config value (``???``) is not set anywhere."""


class ProfileError(UserError):
    """A profile name or profile operation the user asked for cannot be done."""


class ManifestError(ConfigError):
    """A plugin's ``plugin.yaml`` that cannot be used: names the file, the key and the fix."""


class PluginError(UserError):
    """A plugin that cannot be found, installed, enabled or run: one line naming the
    plugin and the fix, exit code 2. A plugin whose code fails while a runtime loads it
    is not this: it is skipped with a warning and the runtime keeps working."""


class ProviderError(HermesError):
    """A model provider failed (translated from litellm at the adapter boundary)."""


class SandboxError(HermesError):
    """An execution environment (local, docker, ssh) failed."""


class SandboxUnavailable(SandboxError, UserError):
    """The environment cannot start for a reason the user fixes (no daemon, no image,
    unknown host key): one line naming the fix, exit code 2."""


class McpError(HermesError):
    """An MCP server could not be started, reached or listed (translated from the mcp
    SDK at the client's boundary); names the server and what failed."""


class ToolError(HermesError):
    """A tool failed; the message goes back to the model as the tool result."""


class DiskFull(HermesError, OSError):
    """A write found no space (or quota) left: one line naming what could not be written,
    exit code 1. What was written before is untouched: files are replaced atomically and
    SQLite rolls the failed transaction back. Still an ``OSError`` (``ENOSPC``), so code
    that makes do without a write (a cache) goes on doing so."""

    def __init__(self, where: object, reason: str):
        super().__init__(errno.ENOSPC, reason, str(where))
        self.where = where
        self.message = (f"disk full: cannot write {where} ({reason}); free some space and "
                        "run it again")

    def __str__(self) -> str:
        return self.message


def disk_full(exc: BaseException, where: object = None) -> DiskFull | None:
    """``exc``, or an exception it was raised from, as ``DiskFull`` when it means no space was
    left (``ENOSPC``, ``EDQUOT``, SQLite's ``SQLITE_FULL``); None otherwise. ``where``
    names the file when the exception does not."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, DiskFull):
            return cause
        if isinstance(cause, OSError) and cause.errno in FULL_ERRNOS:
            return DiskFull(cause.filename or where or "a file", os.strerror(cause.errno))
        code = (getattr(cause, "sqlite_errorcode", 0) or 0) & 0xFF
        if code == SQLITE_FULL or (code in SQLITE_IO and _no_room(where)):
            return DiskFull(where or "the sessions database", os.strerror(errno.ENOSPC))
        cause = cause.__cause__  # what it was raised from, not what it interrupted
    return None


def _no_room(where: object) -> bool:
    """Whether the file system holding ``where`` (a path) is full."""
    if not isinstance(where, str | os.PathLike):
        return False
    try:
        found = os.statvfs(os.path.dirname(os.fspath(where)) or ".")
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < ROOM_BYTES


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ' (did you mean "x"?)' for the closest choice, or ''."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def one_of(choices: Iterable[str]) -> str:
    """Render a sorted list of valid options for an error message."""
    items = sorted(set(choices))
    return ", ".join(items) if items else "(none)"
