"""The system prompt: assembled once per session, then frozen (prompt-cache stable).

The memory issue extends this with memory-provider blocks, the skills index
and context files; the order of sections is fixed.
"""

from __future__ import annotations

import time

from hermes.home import Home

DEFAULT_IDENTITY = (
    "You are Hermes, a capable assistant that uses tools to get real work done. "
    "Be direct and accurate; say so when you are unsure."
)
TOOL_GUIDANCE = (
    "Use the tools when they help: read before you edit, check results before you "
    "report success, and prefer small verifiable steps. When you are done, answer "
    "without calling a tool."
)


def build_system_prompt(home: Home, *, memory_snapshot: str, personality: str | None,
                        session_id: str, has_tools: bool, platform: str = "cli",
                        now: float | None = None) -> str:
    identity = _read(home.soul_file) or DEFAULT_IDENTITY
    sections = [identity]
    if has_tools:
        sections.append(TOOL_GUIDANCE)
    if personality:
        sections.append(personality.strip())
    if memory_snapshot:
        sections.append(memory_snapshot)
    stamp = time.strftime("%Y-%m-%d", time.gmtime(now))
    sections.append(f"Today is {stamp} (UTC). Session: {session_id}. Platform: {platform}.")
    return "\n\n".join(sections)


def _read(path: object) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()  # type: ignore[attr-defined]
    except OSError:
        return ""
