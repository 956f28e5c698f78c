"""Questions the agent asks the person at the terminal: approvals and clarifications.

The agent asks from its worker thread while the main thread waits for Ctrl-C.
Each question polls the turn's ``cancelled`` check: an interrupt ends a pending
question at once (an approval counts as ``deny``, a clarification as no answer),
and nothing typed afterwards is taken as the answer to it.
"""

from __future__ import annotations

import os
import select
import sys

from hermes.hints import command
from hermes.tools.context import ApprovalChoice, ApprovalRequest, Cancelled

APPROVAL_KEYS: dict[str, ApprovalChoice] = {"o": "once", "s": "session", "a": "always",
                                            "d": "deny"}
CANCELLED = "(the user cancelled the question)"


class TerminalQuestions:
    """The approval and clarify callbacks of an interactive chat."""

    def __init__(self, profile: str = "default") -> None:
        self.profile = profile

    def approve(self, request: ApprovalRequest, cancelled: Cancelled) -> ApprovalChoice:
        keys = " ".join(request.keys)
        why = "\n       ".join(danger.reason for danger in request.dangers)
        who = f"{request.requester} asks to run" if request.requester else \
            "This command needs your approval"
        text = (f"\n⚠ {who}:\n    {request.command}\n"
                f"  why: {why}\n"
                "  [o]nce     run it this time only\n"
                f"  [s]ession  run it, and allow for the rest of this session: {request.scope}\n"
                f"  [a]lways   run it, and allow from now on in profile {self.profile}: "
                f"{request.scope} (undo: `{command(self.profile, f'approvals revoke {keys}')}`)\n"
                "  [d]eny     do not run it (Ctrl-C denies too)\n"
                "allow? [o/s/a/d]: ")
        answer = _ask(text, cancelled)
        if answer is None:
            sys.stdout.write("(denied: cancelled)\n")
            return "deny"
        return APPROVAL_KEYS.get(answer.strip().lower()[:1], "deny")

    def clarify(self, question: str, choices: list[str] | None, cancelled: Cancelled) -> str:
        options = "".join(f"\n  {i}. {c}" for i, c in enumerate(choices or [], 1))
        answer = _ask(f"\n? {question}{options}\n> ", cancelled)
        if answer is None:
            sys.stdout.write("(cancelled)\n")
            return CANCELLED
        answer = answer.strip()
        if choices and answer.isdigit() and 1 <= int(answer) <= len(choices):
            return choices[int(answer) - 1]
        return answer


def _ask(question: str, cancelled: Cancelled) -> str | None:
    """One line from the terminal, or None once cancelled (or at end of input)."""
    if cancelled():
        return None
    sys.stdout.write(question)
    sys.stdout.flush()
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # not a real terminal (tests)
        return sys.stdin.readline() or None
    return _read_line(fd, cancelled)


def _read_line(fd: int, cancelled: Cancelled) -> str | None:
    """Read one line from ``fd`` without blocking past a cancellation."""
    chunks: list[bytes] = []
    while not cancelled():
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            continue
        chunk = os.read(fd, 1024)
        if not chunk:
            return None
        chunks.append(chunk)
        if b"\n" in chunk:
            return b"".join(chunks).decode("utf-8", "replace").split("\n", 1)[0]
    return None
