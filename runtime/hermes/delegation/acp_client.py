"""Our side of the conversation with an external ACP agent: we are its client (its
"editor"). We offer no file system or terminal, collect the answer it streams, count
its tool calls against the child's budget, show each of them as progress in the
parent's UI while it runs, note the cost it reports, and answer its permission requests
by the parent's approval rules."""

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

Progress = Callable[[str, str, str | None, bool], None]
"""``progress(tool_call_id, title, result, failed)``: a tool call of the agent started
(``result`` None) or ended (its result as text, and whether it failed)."""

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

    def __init__(self, decide: Callable[[str], ApprovalChoice], budget: int,
                 progress: Progress | None = None):
        self._decide = decide
        self._progress = progress
        self._titles: dict[str, str] = {}
        """Titles of the agent's tool calls shown as started, by id (shown once ended)."""
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
            self._started(update)
            if self.over_budget and self.cancel is not None:
                cancel, self.cancel = self.cancel, None
                await cancel()  # at once: the agent may be on its next model call already
        elif kind == "tool_call_update" and update.status in ("completed", "failed"):
            self._ended(update)
        elif kind == "usage_update" and update.cost is not None \
                and update.cost.currency == "USD":
            self.cost_usd = update.cost.amount

    def _started(self, update: Any) -> None:
        title = str(update.title or "a tool call")
        self._titles[update.tool_call_id] = title
        if self._progress is not None:
            self._progress(update.tool_call_id, title, None, False)
        if update.status in ("completed", "failed"):  # reported already done
            self._ended(update)

    def _ended(self, update: Any) -> None:
        title = self._titles.pop(update.tool_call_id, None)
        if title is not None and self._progress is not None:
            text = "".join(getattr(getattr(item, "content", None), "text", "") or ""
                           for item in update.content or ())
            failed = update.status == "failed"
            self._progress(update.tool_call_id, title, text, failed)

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
