"""The system prompt: assembled once per session, then frozen (prompt-cache stable).

Sections, always in this order; empty ones are left out:

1. ``identity`` — the home's ``SOUL.md``, else ``DEFAULT_IDENTITY``;
2. ``tool_guidance`` — when the model has tools;
3. ``personality`` — ``agent.personality``;
4. ``memory_providers`` — blocks of external memory providers (``system_blocks()``,
   asked only of a memory service that has it);
5. ``memory`` — the frozen ``MEMORY.md`` / ``USER.md`` snapshot (``snapshot()``);
6. ``skills`` — an index of the skills (``skills/index.py``: grouped by category, capped),
   when the model can load them;
7. ``context_files`` — ``.hermes.md`` / ``AGENTS.md`` / ``CLAUDE.md`` (``context_files``);
8. ``session`` — the date and the session id;
9. ``platform`` — a hint for where the conversation happens.

The text is stored with the session and a resumed session gets it back verbatim,
so memory or ``SOUL.md`` edits made meanwhile apply to new sessions only.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from hermes.agent import context_files
from hermes.home import Home
from hermes.skills.index import render_index
from hermes.skills.model import Skill
from hermes.skills.state import SkillRecord

DEFAULT_IDENTITY = (
    "You are Hermes, a capable assistant that uses tools to get real work done. "
    "Be direct and accurate; say so when you are unsure."
)
TOOL_GUIDANCE = (
    "Use the tools when they help: read before you edit, check results before you "
    "report success, and prefer small verifiable steps. When you are done, answer "
    "without calling a tool."
)
CHARS_PER_TOKEN = 4
"""A rough, model-independent estimate (the same as ``agent/tokens.py``'s), good enough
to compare section sizes."""
PLATFORM_HINTS = {
    "cli": "You are talking to the user in a terminal; Markdown is rendered.",
    "cron": ("You are running as a scheduled job with nobody watching: do not ask "
             "questions; your final answer is delivered as the job's output."),
    "api": "You are answering through an API; the caller renders your reply.",
    "api_server": "You are answering through an API; the caller renders your reply.",
    "acp": ("You are working in the user's code editor, which shows your tool calls as "
            "they run; Markdown is rendered."),
    "dashboard": ("You are talking to the user in a web page (hermes dashboard) that shows "
                  "your tool calls as they run; your text is shown as written, Markdown "
                  "is not rendered."),
}
MESSAGING_HINT = ("You are talking to the user in a messaging app: keep replies short, "
                  "and avoid wide tables and long code blocks.")


class MemorySource(Protocol):
    """What the prompt asks of the memory service."""

    def snapshot(self) -> str: ...

    def system_blocks(self) -> list[str]: ...


@dataclass(frozen=True)
class PromptSection:
    """One named part of the system prompt."""

    name: str
    text: str

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


@dataclass(frozen=True)
class PromptInputs:
    """Everything one session's system prompt is built from."""

    home: Home
    memory: MemorySource
    skills: Sequence[Skill]
    """The skills store's listing (``SkillsStore.list()``); empty when the model has no
    ``skill_view`` to load them."""
    cwd: Path
    """Where context-file discovery starts (``context_files.working_directory``)."""
    session_id: str
    has_tools: bool
    personality: str | None = None
    platform: str = "cli"
    """The session's source: ``cli``, ``cron``, ``telegram``, ..."""
    now: float | None = None
    """The session's start time (epoch seconds); now when ``None``."""
    skills_index_max_chars: int = 6000
    """Cap of the skills index (``skills.index_max_chars``)."""
    skill_records: Mapping[str, SkillRecord] | None = None
    """Use counts: the most used skills stay in a capped index."""


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text``: characters / 4, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def build_sections(inputs: PromptInputs) -> list[PromptSection]:
    """The non-empty sections of the prompt, in the fixed order."""
    builders: list[tuple[str, Callable[[PromptInputs], str]]] = [
        ("identity", _identity), ("tool_guidance", _tool_guidance),
        ("personality", _personality), ("memory_providers", _provider_blocks),
        ("memory", _memory_snapshot), ("skills", _skills_index),
        ("context_files", _context_files), ("session", _session), ("platform", _platform),
    ]
    sections = [PromptSection(name, build(inputs).strip()) for name, build in builders]
    return [section for section in sections if section.text]


def render(sections: Sequence[PromptSection]) -> str:
    return "\n\n".join(section.text for section in sections)


def build_system_prompt(inputs: PromptInputs) -> str:
    """The system prompt of a new session."""
    return render(build_sections(inputs))


# -- sections ---------------------------------------------------------------------------

def _identity(inputs: PromptInputs) -> str:
    try:
        soul = inputs.home.soul_file.read_text(encoding="utf-8").strip()
    except OSError:
        soul = ""
    return soul or DEFAULT_IDENTITY


def _tool_guidance(inputs: PromptInputs) -> str:
    return TOOL_GUIDANCE if inputs.has_tools else ""


def _personality(inputs: PromptInputs) -> str:
    return inputs.personality or ""


def _provider_blocks(inputs: PromptInputs) -> str:
    blocks = inputs.memory.system_blocks()
    return "\n\n".join(block.strip() for block in blocks if block and block.strip())


def _memory_snapshot(inputs: PromptInputs) -> str:
    return inputs.memory.snapshot()


def _skills_index(inputs: PromptInputs) -> str:
    return render_index(inputs.skills, inputs.skills_index_max_chars, inputs.skill_records)


def _context_files(inputs: PromptInputs) -> str:
    return context_files.render(context_files.load_context_files(inputs.cwd))


def _session(inputs: PromptInputs) -> str:
    stamp = time.strftime("%Y-%m-%d", time.gmtime(inputs.now))
    return f"Today is {stamp} (UTC). Session: {inputs.session_id}."


def _platform(inputs: PromptInputs) -> str:
    hint = PLATFORM_HINTS.get(inputs.platform, MESSAGING_HINT)
    return f"Platform: {inputs.platform}. {hint}"
