"""What the skills package hands out: ``Skill``, where it came from, who wrote it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hermes.errors import UserError
from hermes.skills.format import SkillMeta

Actor = Literal["user", "agent", "review", "curator", "install"]
"""Who made a write: the user (``hermes skills ...``), the agent (``skill_manage``), the
background review, the curator, or ``hermes skills install/update``."""
ACTORS: tuple[Actor, ...] = ("user", "agent", "review", "curator", "install")
SourceKind = Literal["home", "directory", "bundled", "plugin"]
SKILL_FILE = "SKILL.md"
SUPPORT_DIRS = ("references", "templates", "scripts", "assets")
"""Where supporting files live inside a skill (agentskills.io's layout)."""


class SkillError(UserError):
    """A skill operation that cannot be done: one line naming the skill and the fix.
    The CLI shows it (exit code 2); the skill tools return it to the model."""


class SkillNotFound(SkillError):
    """No skill of that name in any source."""


@dataclass(frozen=True)
class SkillSource:
    """One place skills are found, in the order the store searches them."""

    kind: SourceKind
    """``home`` (the profile's own, writable), ``directory`` (``skills.directories``,
    read-only), ``bundled`` (shipped in the package, read-only) or ``plugin`` (an enabled
    plugin's, read-only, loaded by its ``plugin:skill`` name only)."""
    root: Path

    @property
    def label(self) -> str:
        return str(self.root) if self.kind == "directory" else self.kind


@dataclass(frozen=True)
class Skill:
    """One loadable skill: a directory holding ``SKILL.md``."""

    name: str
    path: Path
    """The skill's directory."""
    description: str
    category: str | None = None
    """The directory between the source's root and the skill, if any."""
    source: SkillSource | None = None
    meta: SkillMeta | None = None

    @property
    def file(self) -> Path:
        return self.path / SKILL_FILE

    @property
    def writable(self) -> bool:
        """Only the home's own skills may be changed."""
        return self.source is not None and self.source.kind == "home"

    @property
    def origin(self) -> str:
        """``home``, ``bundled`` or the configured directory, for listings."""
        return self.source.label if self.source else "home"

    @property
    def tags(self) -> tuple[str, ...]:
        return self.meta.tags if self.meta else ()
