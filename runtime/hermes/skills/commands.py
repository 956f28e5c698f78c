"""Skills as slash commands: ``/<name> [args]`` loads skill ``name`` into the turn.

Chat and every gateway platform call ``skill_turn``: when the text names a skill, the
turn the agent runs is the skill's instructions plus what the user asked, and the use
is counted. The front ends' own commands (``/new``, ``/help``, ...) and plugins' come
first (``hermes.agent.commands``); only a command they do not know is tried as a skill.
"""

from __future__ import annotations

from dataclasses import dataclass

from hermes.skills.model import Skill
from hermes.skills.store import SkillsStore


@dataclass(frozen=True)
class SkillTurn:
    """A slash command that names a skill, expanded into the turn's message."""

    skill: Skill
    request: str
    message: str


def skill_turn(store: SkillsStore, text: str) -> SkillTurn | None:
    """The turn for ``/<name> [request]`` when ``name`` is a skill, else None.
    Counts a use of the skill."""
    if not text.startswith("/") or text.startswith("//"):
        return None
    name, _, request = text[1:].strip().partition(" ")
    skill = store.find(name.strip().lower()) if name else None
    if skill is None:
        return None
    body = store.read(skill.name)
    store.record_use(skill.name, "slash")
    return SkillTurn(skill, request.strip(), invocation_message(skill, body, request.strip(),
                                                                store.files(skill.name)))


def invocation_message(skill: Skill, body: str, request: str, files: list[str]) -> str:
    """The user message of a turn that runs ``skill``: its instructions, its supporting
    files, then the user's request."""
    lines = [f'The user ran the skill command /{skill.name}. Follow the skill "{skill.name}" '
             f"below for this request.", "",
             f'<skill name="{skill.name}" directory="{skill.path}">', body.strip(), "</skill>"]
    if files:
        lines += ["", "Supporting files (load with skill_view(name, file)): " + ", ".join(files)]
    lines += ["", f"Request: {request}" if request else
              "Request: none given — apply the skill to the current situation, or ask what "
              "to do."]
    return "\n".join(lines)
