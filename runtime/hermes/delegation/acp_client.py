"""Our side of the conversation with an external ACP agent: we are its client (its
"editor"). We offer no file system or terminal, collect the answer it streams, count
its tool calls against the child's budget, note the cost it reports, and answer its
permission requests by the parent's approval rules."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
)

from hermes.tools.context import ApprovalChoice

OPTION_KINDS: dict[str, tuple[str, ...]] = {
    "once": ("allow_once", "allow_always"), "session": ("allow_always", "allow_once"),
    "always": ("allow_always", "allow_once"), "deny": ("reject_once", "reject_always")}
"""Our approval choice as the ACP option kinds that express it, closest first."""


def permission_response(choice: ApprovalChoice,
                        options: Sequence[PermissionOption]) -> RequestPermissionResponse:
    """The option the agent offered that matches ``choice``; none that does: cancelled."""
    for kind in OPTION_KINDS.get(choice, ()):
        for option in options:
            if option.kind == kind:
                return RequestPermissionResponse(outcome=AllowedOutcome(
                    outcome="selected", option_id=option.option_id))
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


class ParentClient:
    """The ``acp.Client`` a child's external agent talks to."""

    def __init__(self, decide: Callable[[str], ApprovalChoice], budget: int):
        self._decide = decide
        """Blocking: the approval choice for a permission request, by its title."""
        self.budget = budget
        """Tool calls the agent may make; the turn is cancelled at the next one."""
        self.cancel: Callable[[], Awaitable[None]] | None = None
        """Cancels the running turn (set once it runs)."""
        self.answer: list[str] = []
        """Message text since the agent's last tool call: its final answer so far."""
        self.tool_calls = 0
        self.cost_usd: float | None = None

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        kind = update.session_update
        if kind == "agent_message_chunk" and isinstance(update.content, TextContentBlock):
            self.answer.append(update.content.text)
        elif kind == "tool_call":
            self.tool_calls += 1
            self.answer.clear()  # what it said before acting is not its summary
            if self.over_budget and self.cancel is not None:
                cancel, self.cancel = self.cancel, None
                await cancel()  # at once: the agent may be on its next model call already
        elif kind == "usage_update" and update.cost is not None \
                and update.cost.currency == "USD":
            self.cost_usd = update.cost.amount

    async def request_permission(self, options: list[PermissionOption], session_id: str,
                                 tool_call: Any, **_: Any) -> RequestPermissionResponse:
        title = getattr(tool_call, "title", None) or "a tool call"
        choice = await asyncio.to_thread(self._decide, title)
        return permission_response(choice, options)

    @property
    def over_budget(self) -> bool:
        return self.tool_calls > self.budget

    @property
    def summary(self) -> str:
        return "".join(self.answer).strip()
