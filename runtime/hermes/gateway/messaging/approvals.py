"""Dangerous-command approvals asked in the chat the turn came from.

The turn runs in a worker thread; when a command needs approval
(``hermes.tools.approval``) the question, with the command and the reason, is sent
to the chat, and the thread waits for ``/approve`` (once), ``/approve session``,
``/approve always`` or ``/deny`` in that chat (and thread). Only messages that
passed the platform's gate reach here, so only allowed users can answer. With no
answer within ``timeout`` seconds (``approvals.chat_timeout``), or when the turn is
interrupted, the command is refused.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from hermes.gateway.base import MessageSource
from hermes.tools.context import ApprovalCallback, ApprovalChoice, ApprovalRequest, Cancelled

Reply = Callable[[MessageSource, str], Coroutine[Any, Any, None]]
ANSWERS: dict[str, ApprovalChoice] = {"": "once", "once": "once", "session": "session",
                                      "always": "always"}
POLL = 0.25
"""Seconds between checks for an interrupt while waiting for the answer."""


@dataclass
class _Question:
    request: ApprovalRequest
    answered: threading.Event = field(default_factory=threading.Event)
    choice: ApprovalChoice = "deny"


class ChatApprovals:
    """The open approval questions of one profile's chats, by conversation."""

    def __init__(self, reply: Reply, timeout: float, log: logging.Logger):
        self.reply = reply
        self.timeout = timeout
        self.log = log
        self._open: dict[str, _Question] = {}
        self._lock = threading.Lock()

    def callback(self, source: MessageSource, loop: asyncio.AbstractEventLoop
                 ) -> ApprovalCallback:
        """The approval callback of a turn from ``source`` (called in its worker thread)."""

        def approve(request: ApprovalRequest, cancelled: Cancelled) -> ApprovalChoice:
            return self._ask(source, loop, request, cancelled)

        return approve

    def waiting(self, source: MessageSource) -> ApprovalRequest | None:
        """The question open in ``source``'s conversation, if any."""
        with self._lock:
            question = self._open.get(source.session_key)
        return question.request if question else None

    def answer(self, source: MessageSource, text: str) -> str:
        """Take ``/approve [once|session|always]`` or ``/deny``; the reply to send. Only
        the first line is the answer: below it may come a mail's signature and quote."""
        word, *rest = text.strip().splitlines()[0][1:].split()
        choice: ApprovalChoice | None = "deny" if word.lower() == "deny" else \
            ANSWERS.get(" ".join(rest).lower())
        if choice is None:
            return "usage: /approve, /approve session, /approve always or /deny"
        with self._lock:
            question = self._open.pop(source.session_key, None)
        if question is None:
            return "nothing is waiting for approval here"
        question.choice = choice
        question.answered.set()
        self.log.info("chat approval", extra={"fields": {
            "platform": source.platform, "chat": source.chat_id, "user": source.user_id,
            "choice": choice, "classes": question.request.keys}})
        return "denied: the command will not run" if choice == "deny" else \
            f"approved ({choice}): running it"

    def _ask(self, source: MessageSource, loop: asyncio.AbstractEventLoop,
             request: ApprovalRequest, cancelled: Cancelled) -> ApprovalChoice:
        question = _Question(request)
        with self._lock:
            self._open[source.session_key] = question
        try:
            self._say(source, loop, _question_text(request, self.timeout))
            if self._wait(question, cancelled):
                return question.choice
            if not cancelled():
                self._say(source, loop, f"No answer within {self.timeout:g} s: the command "
                                        "was refused.")
            return "deny"
        finally:
            with self._lock:
                if self._open.get(source.session_key) is question:
                    del self._open[source.session_key]

    def _wait(self, question: _Question, cancelled: Cancelled) -> bool:
        deadline = time.monotonic() + self.timeout
        while not question.answered.wait(min(POLL, max(deadline - time.monotonic(), 0))):
            if cancelled() or time.monotonic() >= deadline:
                return question.answered.is_set()
        return True

    def _say(self, source: MessageSource, loop: asyncio.AbstractEventLoop, text: str) -> None:
        """Send from the worker thread; a failed send is logged (the wait goes on)."""
        sent = asyncio.run_coroutine_threadsafe(self.reply(source, text), loop)
        try:
            sent.result(timeout=30)
        except Exception as exc:  # noqa: BLE001 - the question may still be answered
            self.log.error("approval message not sent", extra={"fields": {
                "platform": source.platform, "chat": source.chat_id, "error": str(exc)}})


def _question_text(request: ApprovalRequest, timeout: float) -> str:
    who = request.requester or "The agent"
    return (f"{who} wants to run a command that needs your approval:\n\n"
            f"{request.command}\n\nWhy it is flagged: {request.reason}\n\n"
            f"Reply /approve to run it once, /approve session to allow this kind of command "
            f"for the rest of the conversation, /approve always to allow it from now on, or "
            f"/deny. Without an answer within {timeout:g} s it is refused.")
