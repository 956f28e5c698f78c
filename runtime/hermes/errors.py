"""Every error the runtime raises on purpose, split by audience.

- ``UserError`` and its subclasses are mistakes the user can fix (bad config,
  bad arguments, a missing profile). The CLI prints them as one line and exits
  with code 2.
- ``ProviderError`` / ``SandboxError`` come from adapters (litellm, docker,
  ssh) and are translated at the adapter boundary with ``raise ... from exc``.
- ``ToolError`` is shown to the model as a tool result, never to the user as a
  crash.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


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


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ' (did you mean "x"?)' for the closest choice, or ''."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def one_of(choices: Iterable[str]) -> str:
    """Render a sorted list of valid options for an error message."""
    items = sorted(set(choices))
    return ", ".join(items) if items else "(none)"
