"""The skills index of the system prompt: names and one-line descriptions, grouped by
category, under a size cap.

When not every skill fits, the home's own skills come first (then configured
directories, then bundled ones), the most used first within each; what is left out is
counted in the last line, and ``skills_list`` shows everything. The index is part of
the system prompt, so it is built once per session and frozen with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hermes.skills.model import Skill
from hermes.skills.state import SkillRecord

if TYPE_CHECKING:
    from hermes.skills.store import SkillsStore
    from hermes.tools.registry import ToolRegistry

HEADER = "# Skills"
INTRO = ("Reusable procedures saved from earlier work or shipped with Hermes. Before a task "
         "one of them covers, load it with skill_view(name) and follow it; when one was "
         "wrong or incomplete, fix it with skill_manage.")
DESCRIPTION_MAX_CHARS = 160
GENERAL = "general"
"""The heading of skills without a category."""
SOURCE_RANK = {"home": 0, "directory": 1, "bundled": 2}


def skills_inputs(skills: SkillsStore, tools: ToolRegistry) -> dict[str, Any]:
    """The system prompt's skills fields (``PromptInputs``): the index only when the
    model can load skills (``skill_view`` is among its tools)."""
    if tools.get("skill_view") is None:
        return {"skills": []}
    return {"skills": skills.list(), "skills_index_max_chars": skills.index_max_chars,
            "skill_records": skills.records()}


def render_index(skills: Sequence[Skill], max_chars: int,
                 records: Mapping[str, SkillRecord] | None = None) -> str:
    """The index text, or ``""`` when there are no skills or ``max_chars`` is 0: as many
    skills as fit, the last line counting the rest. Under a cap too small for the
    introduction it is left out; when not even one skill fits, the heading and that count
    alone remain (over a tiny cap: the model must know skills exist)."""
    if not skills or max_chars <= 0:
        return ""
    records = records or {}
    for head in (f"{HEADER}\n{INTRO}", HEADER):
        budget = max_chars - len(head) - len(_left_out(len(skills))) - 2
        chosen = _choose(skills, records, budget)
        if chosen:
            return "\n".join([head, *_grouped(chosen),
                              _left_out(len(skills) - len(chosen))]).rstrip()
    return f"{HEADER}{_left_out(len(skills))}"


def _choose(skills: Sequence[Skill], records: Mapping[str, SkillRecord],
            budget: int) -> list[tuple[Skill, str]]:
    """The skills whose lines (and category headings) fit ``budget``, by priority."""
    chosen: list[tuple[Skill, str]] = []
    headed: set[str | None] = set()
    for skill in sorted(skills, key=lambda s: _priority(s, records)):
        line = f"- {skill.name}: {one_line(skill.description)}"
        cost = len(line) + 1 + (0 if skill.category in headed else len(_heading(skill)) + 2)
        if cost > budget:
            continue
        budget -= cost
        headed.add(skill.category)
        chosen.append((skill, line))
    return chosen


def one_line(text: str) -> str:
    """``text`` on one line, cut to ``DESCRIPTION_MAX_CHARS``."""
    line = " ".join(text.split())
    if len(line) <= DESCRIPTION_MAX_CHARS:
        return line
    return line[:DESCRIPTION_MAX_CHARS - 1] + "…"


def _priority(skill: Skill, records: Mapping[str, SkillRecord]) -> tuple[int, int, str]:
    rank = SOURCE_RANK.get(skill.source.kind if skill.source else "home", 0)
    record = records.get(skill.name)
    return rank, -(record.uses if record else 0), skill.name


def _heading(skill: Skill) -> str:
    return f"## {skill.category or GENERAL}"


def _grouped(chosen: Sequence[tuple[Skill, str]]) -> list[str]:
    by_category: dict[str, list[str]] = {}
    for skill, line in chosen:
        by_category.setdefault(skill.category or GENERAL, []).append(line)
    lines: list[str] = []
    for category in sorted(by_category, key=lambda c: (c == GENERAL, c)):
        lines += ["", f"## {category}", *sorted(by_category[category])]
    return lines


def _left_out(count: int) -> str:
    if count <= 0:
        return ""
    return (f"\n({count} more skill{'s' if count != 1 else ''} not listed here; "
            "skills_list shows them all.)")
