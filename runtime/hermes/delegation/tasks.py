"""What ``delegate_task`` was asked to do: its arguments as one ``ChildTask`` per child."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes.errors import ToolError

TASK_FIELDS = ("goal", "context", "toolsets", "max_iterations", "acp_command")
SHARED_FIELDS = TASK_FIELDS[1:]
"""Fields that, given beside ``tasks``, apply to every task that does not set its own."""
NAME_CHARS = 40


@dataclass(frozen=True)
class ChildTask:
    """One sub-agent's assignment."""

    index: int
    """Its place in the batch, from 1."""
    goal: str
    context: str = ""
    toolsets: tuple[str, ...] | None = None
    """The toolsets it asks for (within the parent's); None: all the parent's."""
    max_iterations: int | None = None
    """The budget it asks for; None: ``delegation.max_iterations``."""
    acp_command: str | None = None
    """An external ACP agent's command line that runs the task instead of a session of
    this runtime."""

    @property
    def name(self) -> str:
        """How the person is told which child asks: ``sub-agent 2 ("find the bug")``."""
        line = self.goal.strip().splitlines()[0] if self.goal.strip() else ""
        short = line if len(line) <= NAME_CHARS else line[: NAME_CHARS - 1].rstrip() + "…"
        return f'sub-agent {self.index} ("{short}")'

    def budget(self, most: int) -> int:
        """Model calls it may make: what it asked for, at most ``most``."""
        return min(self.max_iterations or most, most)


def parse_tasks(args: Mapping[str, Any]) -> list[ChildTask]:
    """The tasks of one call: ``goal`` (one task) or ``tasks`` (a batch), each checked."""
    batch = args.get("tasks")
    if batch is not None and args.get("goal") is not None:
        raise ToolError("give either goal (one task) or tasks (a batch), not both")
    if batch is None:
        if args.get("goal") is None:
            raise ToolError("nothing to delegate: give goal (one task) or tasks (a batch)")
        return [_task(1, args, "")]
    if not batch:
        raise ToolError("tasks is empty: give at least one task, each with a goal")
    shared = {key: args[key] for key in SHARED_FIELDS if args.get(key) is not None}
    return [_task(i, {**shared, **{k: v for k, v in item.items() if v is not None}},
                  f"tasks[{i - 1}].") for i, item in enumerate(batch, 1)]


def _task(index: int, fields: Mapping[str, Any], where: str) -> ChildTask:
    goal = str(fields.get("goal") or "")
    if not goal.strip():
        raise ToolError(f"{where}goal is empty: say what the sub-agent should achieve")
    toolsets = fields.get("toolsets")
    budget = fields.get("max_iterations")
    if budget is not None and budget < 1:
        raise ToolError(f"{where}max_iterations is {budget}: give at least 1, or leave it "
                        "out for the default")
    command = fields.get("acp_command")
    if command is not None and not str(command).strip():
        raise ToolError(f"{where}acp_command is empty: leave it out to use a sub-agent of "
                        "this runtime")
    return ChildTask(index=index, goal=goal, context=str(fields.get("context") or ""),
                     toolsets=tuple(toolsets) if toolsets is not None else None,
                     max_iterations=budget, acp_command=command)
