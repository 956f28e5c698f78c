"""A child's focused system prompt: its task and context, nothing of the parent's
persona, memories or conversation."""

from __future__ import annotations

from pathlib import Path

from hermes.delegation.tasks import ChildTask

ROLE = ("You are a sub-agent: another agent handed you one task. Work on it on your own "
        "with the tools you have. Nobody can answer questions, so decide for yourself and "
        "say what you assumed.")
FINISH = ("When you are done, answer with a short summary for the agent that delegated: "
          "the outcome first, then what you did and found, the files you changed, and "
          "anything left undone or uncertain. It reads only this summary.")


def child_prompt(task: ChildTask, cwd: Path | None = None) -> str:
    """The whole system prompt of the child working on ``task`` in ``cwd``."""
    parts = [ROLE, f"## Your task\n\n{task.goal.strip()}"]
    if task.context.strip():
        parts.append(f"## Context\n\n{task.context.strip()}")
    if cwd is not None:
        parts.append(f"## Working directory\n\n{cwd} (relative paths start here)")
    parts.append(f"## When you finish\n\n{FINISH}")
    return "\n\n".join(parts)
