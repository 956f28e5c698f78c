"""The names of every built-in toolset and tool, declared without importing any tool.

Config validation checks ``toolsets.enabled`` and ``toolsets.disabled_tools``
against these names, and ``--toolsets``/``HERMES_TOOLSETS``/``toolsets=``
accept them, so this module must stay cheap: data only, no tool modules. A
test checks that the tools the runtime registers match it. A leaf of ``config``
(``hermes.tools`` declares its tools from it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToolsetSpec:
    """A declared toolset."""

    name: str
    description: str = ""
    includes: tuple[str, ...] = ()
    """Toolsets whose tools this one also brings in."""
    tools: tuple[str, ...] = ()
    """Names of the tools declared in this toolset (the catalogue of names)."""


TOOLSETS: tuple[ToolsetSpec, ...] = (
    ToolsetSpec("file", "Read, write, patch and search files.",
                tools=("read_file", "write_file", "patch", "search_files")),
    ToolsetSpec("terminal", "Run shell commands.", tools=("terminal",)),
    ToolsetSpec("process", "Manage background processes.", tools=("process",)),
    ToolsetSpec("todo", "A task list for the session.", tools=("todo",)),
    ToolsetSpec("clarify", "Ask the user questions.", tools=("clarify",)),
    ToolsetSpec("session_search", "Search this profile's earlier sessions.",
                tools=("session_search",)),
    ToolsetSpec("memory", "Notes about the user and the work (memory.backend, memory.providers).",
                tools=("memory", "fact_remember", "fact_recall", "fact_forget")),
    ToolsetSpec("skills", "Skills: list, load and write reusable procedures (SKILL.md).",
                tools=("skills_list", "skill_view", "skill_manage")),
    ToolsetSpec("cron", "Scheduled jobs: create, list, pause, resume and remove them.",
                tools=("cronjob",)),
    ToolsetSpec("delegation", "Hand independent work to focused sub-agents, several at once.",
                tools=("delegate_task",)),
    ToolsetSpec("browser", "A real Chromium: open pages, read them as accessibility trees, "
                "click, type, screenshot (browser.*).",
                tools=("browser_navigate", "browser_snapshot", "browser_click", "browser_type",
                       "browser_press", "browser_select", "browser_scroll", "browser_back",
                       "browser_screenshot", "browser_console")),
    ToolsetSpec("web", "Search the web and read pages (web.backend; web.allow_private).",
                tools=("web_search", "web_extract")),
    ToolsetSpec("vision", "Look at images: files, URLs, the browser's last screenshot "
                "(vision.model for a main model without vision).", tools=("vision_analyze",)),
    ToolsetSpec("voice", "Speak text aloud into an audio file, sent to the chat as a voice "
                "message (tts.*; hidden while tts is none).", tools=("text_to_speech",)),
    ToolsetSpec("messaging", "Send messages to this profile's chats on its messaging "
                "platforms (platforms.enabled).", tools=("send_message",)),
    ToolsetSpec("core", "Every built-in tool.",
                includes=("file", "terminal", "process", "todo", "clarify")),
)


def toolset_names() -> list[str]:
    """Every built-in toolset name, sorted."""
    return sorted(spec.name for spec in TOOLSETS)


def tool_names() -> list[str]:
    """Every built-in tool name, sorted."""
    return sorted(tool for spec in TOOLSETS for tool in spec.tools)
