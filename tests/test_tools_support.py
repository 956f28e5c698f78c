"""Shared helpers for the tool and safety tests: a real profile home, a real
LocalEnvironment and a ToolContext, all inside the test's temporary directory.
(Plain functions rather than conftest fixtures, so these tests stay self-contained.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes.config.schema import SandboxSettings
from hermes.environments.local import LocalEnvironment
from hermes.home import Home, home_for
from hermes.tools.context import ToolContext
from hermes.tools.registry import ToolRegistry, build_tool_registry

ALL_CORE = ["file", "terminal", "process", "todo", "clarify"]


def make_context(tmp_path: Path, *, profile: str = "work", cwd: Path | None = None,
                 sandbox: SandboxSettings | None = None, **options: Any) -> ToolContext:
    """A context for profile ``profile`` under ``<tmp>/user/.hermes``, cwd ``cwd`` (by
    default ``<tmp>/project``), its local sandbox set by ``sandbox`` (default settings)."""
    user_home = tmp_path / "user"
    home = home_for(user_home / ".hermes", profile)
    home.path.mkdir(parents=True, exist_ok=True)
    project = cwd or tmp_path / "project"
    project.mkdir(exist_ok=True)
    environ = {"HOME": str(user_home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    environment = LocalEnvironment(home, str(project), 20, environ, sandbox)
    return ToolContext.for_session(home, environment, "session-1", environ=environ, **options)


def make_registry(enabled: list[str] | None = None, **options: Any) -> ToolRegistry:
    return build_tool_registry(ALL_CORE if enabled is None else enabled, environ={}, **options)


def call(registry: ToolRegistry, ctx: ToolContext, name: str, args: Any) -> dict[str, Any]:
    """Dispatch and decode the JSON result."""
    result = registry.dispatch(name, args, ctx)
    decoded: dict[str, Any] = json.loads(result.content)
    assert result.is_error == ("error" in decoded)
    return decoded


def other_home(ctx: ToolContext, name: str) -> Home:
    home = home_for(ctx.home.root, name)
    home.path.mkdir(parents=True, exist_ok=True)
    return home
