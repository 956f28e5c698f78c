"""Skills: reusable procedures the agent keeps in ``skills/<name>/SKILL.md``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Skill:
    name: str
    path: Path
    description: str


class SkillsStore:
    def __init__(self, directory: Path):
        self.directory = directory

    def list(self) -> list[Skill]:
        if not self.directory.is_dir():
            return []
        found = []
        for skill_file in sorted(self.directory.glob("*/SKILL.md")):
            first = next((line.strip("# ").strip() for line in
                          skill_file.read_text(encoding="utf-8").splitlines() if line.strip()), "")
            found.append(Skill(skill_file.parent.name, skill_file.parent, first))
        return found
