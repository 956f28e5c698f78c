"""A child that is an external agent speaking ACP over stdio (``acp_command``): Claude
Code's adapter, another profile's ``hermes acp``, anything that speaks the protocol.

It runs on this machine in the parent's working directory, only if its program is
listed in ``delegation.acp_commands``. It gets the same budget (counted in tool calls,
as ACP shows no model calls), time and interrupt as a child of this runtime: any of
them sends ``session/cancel``, and an agent that does not stop within ``CANCEL_GRACE``
is ended with its process. Its work is recorded in this profile's store as a session
that is a child of the parent's (the prompt it got and the answer it gave).
"""

from __future__ import annotations

import asyncio
import shlex
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from hermes.delegation.batch import Child
from hermes.delegation.report import ChildReport, ended
from hermes.delegation.tasks import ChildTask
from hermes.models.types import Usage
from hermes.sessions.store import SessionStore
from hermes.tools.context import ApprovalCallback, ApprovalChoice, ApprovalRequest
from hermes.tools.danger import Danger

if TYPE_CHECKING:
    from acp.interfaces import Client

    from hermes.delegation.acp_client import ParentClient

POLL = 0.05
CANCEL_GRACE = 10.0
"""Seconds an agent has to end its turn after ``session/cancel``."""
STOP_REASONS = {"end_turn": "completed", "max_tokens": "budget_exhausted",
                "max_turn_requests": "budget_exhausted", "cancelled": "interrupted",
                "refusal": "error"}
"""ACP's stop reasons as our turns' exit reasons."""
STDERR_TAIL = 400


class Stopped(Exception):
    """The child was stopped before its turn began (or its agent would not stop)."""


def program_of(command: str) -> str | None:
    """The program an ``acp_command`` starts (its first word); None if it does not parse
    as a command line."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words[0] if words else None


@dataclass(frozen=True)
class ExternalAgent:
    """How to start one external agent, and where its work is recorded."""

    command: str
    cwd: Path
    environ: dict[str, str]
    store: SessionStore
    parent_id: str
    source: str
    budget: int
    """Tool calls it may make before it is cancelled."""
    prompt: str
    """Its first message: the task, as a child of ours gets it in its system prompt."""
    unattended: bool
    """Approvals are off (``--yolo``, ``approvals.mode: off``): its permission requests
    are allowed once without asking."""
    interactive: bool
    observe: Callable[..., Any] = lambda event, **fields: []
    """The parent session's observers (``ToolContext.observe``): its UI is shown each
    tool call of the agent as it starts and ends (``tool_start``, ``tool_end``)."""


class AcpChild(Child):
    """Runs its task as one prompt turn of a new session of an external agent."""

    def __init__(self, task: ChildTask, agent: ExternalAgent,
                 asker: ApprovalCallback | None):
        super().__init__(task)
        self.agent = agent
        self.asker = asker
        self._stop = threading.Event()

    def interrupt(self) -> None:
        self._stop.set()

    def run(self) -> ChildReport:
        from hermes.delegation.acp_client import ParentClient

        started = time.monotonic()
        session_id = self._record_start()
        client = ParentClient(self._decide, self.agent.budget, self._progress)
        with tempfile.TemporaryFile() as stderr:
            try:
                reason = asyncio.run(self._talk(client, stderr))
                error = "the agent refused the task" if reason == "refusal" else None
            except Stopped as exc:
                reason, error = "cancelled", str(exc)
            except Exception as exc:  # it could not start, broke the protocol, or died
                reason, error = "error", _failure(exc, stderr)
        exit_reason = STOP_REASONS.get(reason, "error")
        if exit_reason == "interrupted" and client.over_budget:
            exit_reason = "budget_exhausted"
        status, error = ended(exit_reason, client.summary, error, self.timed_out)
        usage = Usage(cost_usd=client.cost_usd)
        self._record_end(session_id, client.summary, exit_reason, usage)
        return ChildReport(self.task, status, summary=client.summary, error=error,
                           session_id=session_id, iterations=client.tool_calls, usage=usage,
                           seconds=time.monotonic() - started, agent=self.agent.command)

    async def _talk(self, client: ParentClient, stderr: IO[bytes]) -> str:
        from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
        from acp.schema import ClientCapabilities

        words = shlex.split(self.agent.command)
        # ParentClient implements only what an agent may call on a client that offers no
        # file system or terminal; the SDK answers anything else "method not found".
        async with spawn_agent_process(cast("Client", client), words[0], *words[1:],
                                       env=self.agent.environ, cwd=self.agent.cwd,
                                       transport_kwargs={"stderr": stderr}) as (conn, _):
            await self._until_stopped(conn.initialize(
                protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()))
            session = await self._until_stopped(conn.new_session(cwd=str(self.agent.cwd)))
            client.cancel = lambda: conn.cancel(session_id=session.session_id)
            turn = asyncio.ensure_future(conn.prompt(
                session_id=session.session_id, prompt=[text_block(self.agent.prompt)]))
            await self._watch(turn, client)
            return str((await turn).stop_reason)

    async def _until_stopped(self, step: Any) -> Any:
        """Await ``step`` unless the child is stopped first."""
        task = asyncio.ensure_future(step)
        while not task.done():
            await asyncio.wait({task}, timeout=POLL)
            if self._stop.is_set() and not task.done():
                task.cancel()
                raise Stopped("stopped before the agent started working")
        return task.result()

    async def _watch(self, turn: asyncio.Future[Any], client: ParentClient) -> None:
        """Wait for the turn; on a stop or a spent budget cancel it, and give up on an
        agent that does not end its turn within the grace time."""
        deadline: float | None = None
        cancel = client.cancel
        while not turn.done():
            await asyncio.wait({turn}, timeout=POLL)
            if deadline is None and (self._stop.is_set() or client.over_budget):
                deadline = time.monotonic() + CANCEL_GRACE
                if cancel is not None and client.cancel is not None:  # not sent yet
                    client.cancel = None
                    await cancel()
            if deadline is not None and time.monotonic() > deadline and not turn.done():
                turn.cancel()
                raise Stopped(f"the agent did not stop within {CANCEL_GRACE:g} s of "
                              "session/cancel; its process was ended")

    def _progress(self, call_id: str, title: str, result: str | None, failed: bool) -> None:
        """One of the agent's tool calls, shown in the parent's UI as a call of its own
        (``sub-agent N: <title>``) while the parent's delegate_task runs."""
        from hermes.agent.dispatch import CallOutcome
        from hermes.models.types import ToolCall

        call = ToolCall(f"{self.task.index}-{call_id}", f"{self.task.name}: {title}", "{}")
        if result is None:
            self.agent.observe("tool_start", call=call)
        else:
            self.agent.observe("tool_end", outcome=CallOutcome(call, result, failed))

    def _decide(self, title: str) -> ApprovalChoice:
        """A permission request of the agent, by the parent's approval rules."""
        if self.agent.unattended:
            return "once"
        if self.asker is None or not self.agent.interactive:
            return "deny"
        danger = Danger("acp_permission", f"the external agent asks permission for: {title}")
        return self.asker(ApprovalRequest(title, (danger,)), self._stop.is_set)

    def _record_start(self) -> str:
        a = self.agent
        session_id = a.store.create_session(a.source, f"acp: {a.command}", a.parent_id,
                                            title=self.task.goal.strip().splitlines()[0])
        a.store.add_message(session_id, "user", a.prompt)
        return session_id

    def _record_end(self, session_id: str, summary: str, exit_reason: str,
                    usage: Usage) -> None:
        store = self.agent.store
        store.add_message(session_id, "assistant", summary or None, usage=usage)
        store.end_session(session_id, exit_reason)


def _failure(exc: BaseException, stderr: IO[bytes]) -> str:
    """Why the talk failed: the exception, and the end of what the agent wrote to
    stderr (where agents say why they stopped)."""
    stderr.seek(0)
    tail = stderr.read().decode("utf-8", "replace").strip()[-STDERR_TAIL:]
    message = str(exc) or type(exc).__name__
    return f"{message}; its stderr ends: {tail}" if tail else message
