"""``Delegation``: what ``delegate_task`` does for one session (``ToolContext.delegate``).

The agent factory builds one per session with the session's tools and interaction.
A call checks the depth and the tasks, gives each child what the parent has (narrowed
to the toolsets the task asks for, minus the tools children never get), and runs the
batch. Children follow the parent's approvals: its mode and ``--yolo`` apply, its
asker is asked (naming the child), and with nobody to ask they are refused.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes.agent.factory import AgentFactory, Interaction
from hermes.delegation.acp_child import AcpChild, ExternalAgent, program_of
from hermes.delegation.asker import ChildAsker
from hermes.delegation.batch import Batch, Child
from hermes.delegation.local import LocalChild
from hermes.delegation.prompt import child_prompt
from hermes.delegation.report import render
from hermes.delegation.tasks import ChildTask, parse_tasks
from hermes.errors import ToolError, one_of
from hermes.tools.context import ToolContext

if TYPE_CHECKING:
    from hermes.tools.registry import ToolRegistry

SOURCE = "delegate"
"""Children's sessions are stored with this source (``hermes sessions list``)."""
NEVER_FOR_CHILDREN = {
    "clarify": "sub-agents cannot ask the user questions; decide for yourself and say what "
               "you assumed in your summary",
    "memory": "sub-agents do not write the user's memory; put what is worth remembering "
              "in your summary",
    "fact_remember": "sub-agents do not write the user's memory; put what is worth "
                     "remembering in your summary",
    "fact_forget": "sub-agents do not change the user's memory",
    "send_message": "sub-agents do not send messages; put what you would say in your "
                    "summary",
    "cronjob": "sub-agents do not schedule jobs; say in your summary what should be "
               "scheduled",
}
"""Tools a child never gets (besides ``delegate_task`` at the depth limit), with what a
call to one is answered."""


class Delegation:
    """Runs ``delegate_task`` calls of one session as its children."""

    def __init__(self, factory: AgentFactory, how: Interaction, tools: ToolRegistry):
        self.factory = factory
        self.how = how
        self.tools = tools
        """The parent session's tools: a child's are never more than these."""
        self.settings = factory.deps.delegation

    def __call__(self, args: dict[str, Any], ctx: ToolContext) -> str:
        if self.how.depth >= self.settings.max_depth:
            raise ToolError(depth_limit(self.how.depth, self.settings.max_depth))
        tasks = parse_tasks(args)
        for task in tasks:
            if task.acp_command is not None:
                self._check_command(task)
        questions = threading.Lock()
        children = [self._child(task, ctx, questions) for task in tasks]
        reports = Batch(children, limit=self.settings.max_concurrency,
                        timeout=self.settings.timeout, cancelled=ctx.cancelled).run()
        for report in reports:
            ctx.observe("subagent_stop", parent_session_id=ctx.session_id, parent_turn_id="",
                        child_session_id=report.session_id, child_role=None,
                        child_summary=report.summary, child_status=report.status,
                        duration_ms=round(report.seconds * 1000))
        return render(reports, self._left_out(tasks))

    def _child(self, task: ChildTask, ctx: ToolContext, questions: threading.Lock) -> Child:
        asker = ChildAsker(ctx.approve, questions, task.name) if ctx.approve else None

        def started(child_session_id: str | None) -> None:
            ctx.observe("subagent_start", parent_session_id=ctx.session_id, parent_turn_id="",
                        parent_subagent_id=None, child_session_id=child_session_id,
                        child_subagent_id=f"{ctx.session_id}-{task.index}", child_role=None,
                        child_goal=task.goal)

        if task.acp_command is not None:
            started(None)  # its session is the external agent's
            return AcpChild(task, self._external(task, ctx), asker=asker)
        how = self._child_interaction(ctx, asker)
        tools = self._child_tools(task)
        budget = task.budget(self.settings.max_iterations)
        prompt = child_prompt(task, ctx.cwd)
        return LocalChild(task, lambda: self.factory.new_child(
            how, tools, parent_id=ctx.session_id, prompt=prompt, max_iterations=budget),
            started)

    def _child_interaction(self, ctx: ToolContext, asker: ChildAsker | None) -> Interaction:
        return Interaction(interactive=ctx.interactive, yolo=ctx.yolo, approve=asker,
                           stream=False, source=SOURCE, origin=ctx.origin,
                           cwd=str(ctx.cwd), files=ctx.files, depth=self.how.depth + 1)

    def _child_tools(self, task: ChildTask) -> ToolRegistry:
        tools = self.tools if task.toolsets is None else self.tools.narrowed(task.toolsets)
        return tools.blocking(blocked_for(self.how.depth + 1, self.settings.max_depth))

    def _left_out(self, tasks: list[ChildTask]) -> set[str]:
        """Toolsets tasks asked for that the parent does not have."""
        active = self.tools.active_toolsets()
        return {name for task in tasks for name in task.toolsets or () if name not in active}

    def _check_command(self, task: ChildTask) -> None:
        program = program_of(task.acp_command or "")
        allowed = self.settings.acp_commands
        if program is None or program not in allowed:
            raise ToolError(
                f"acp_command {task.acp_command!r}: only these programs may run as ACP "
                f"agents: {one_of(allowed) if allowed else 'none'} (the user lists them in "
                "delegation.acp_commands)")
        if shutil.which(program, path=self.factory.deps.environ.get("PATH")) is None:
            raise ToolError(f"acp_command {task.acp_command!r}: {program} is not installed "
                            "(not found on PATH)")

    def _external(self, task: ChildTask, ctx: ToolContext) -> ExternalAgent:
        d = self.factory.deps
        unattended = ctx.yolo or ctx.approval_mode == "off"
        return ExternalAgent(
            command=task.acp_command or "", cwd=Path(ctx.cwd),
            environ=d.home.child_env(d.environ), store=d.sessions,
            parent_id=ctx.session_id, source=SOURCE,
            budget=task.budget(self.settings.max_iterations),
            prompt=child_prompt(task, ctx.cwd), unattended=unattended,
            interactive=ctx.interactive, observe=ctx.observe)


def blocked_for(depth: int, max_depth: int) -> dict[str, str]:
    """The tools a child at ``depth`` does not get, with the reason a call is told."""
    if depth < max_depth:
        return dict(NEVER_FOR_CHILDREN)
    return {**NEVER_FOR_CHILDREN, "delegate_task": depth_limit(depth, max_depth)}


def depth_limit(depth: int, max_depth: int) -> str:
    return (f"a sub-agent at depth {depth} cannot delegate further (delegation.max_depth is "
            f"{max_depth}); do the work yourself")
