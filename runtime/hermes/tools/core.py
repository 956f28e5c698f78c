"""The built-in toolsets and tools every runtime registers."""

from __future__ import annotations

import shutil

from hermes.config.tool_catalog import TOOLSETS
from hermes.tools.base import ToolSpec
from hermes.tools.clarify import clarify_tool
from hermes.tools.file import file_tools
from hermes.tools.process import process_tool
from hermes.tools.search import search_tool
from hermes.tools.session_search import session_search_tool
from hermes.tools.terminal import terminal_tool
from hermes.tools.todo import todo_tool
from hermes.tools.toolsets import ToolsetSpec

CORE_TOOLSETS: tuple[ToolsetSpec, ...] = TOOLSETS


def core_tools(*, ripgrep: str | None = "auto", background: bool = True) -> list[ToolSpec]:
    """Specs of the built-in tools. ``ripgrep="auto"`` finds ``rg`` on PATH."""
    rg = shutil.which("rg") if ripgrep == "auto" else ripgrep
    return [*file_tools(), search_tool(rg), terminal_tool(background), process_tool(),
            todo_tool(), clarify_tool(), session_search_tool()]
