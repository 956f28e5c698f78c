"""Dangerous commands of children, asked of the person through the parent's asker.

Children run at once but share one person: their questions are asked one at a time,
each naming the child that asks. A question still waiting for its turn when the child
is stopped is not asked (it is denied).
"""

from __future__ import annotations

import threading
from dataclasses import replace

from hermes.tools.context import ApprovalCallback, ApprovalChoice, ApprovalRequest, Cancelled

WAIT = 0.05


class ChildAsker:
    """The ``ApprovalCallback`` of one child: the parent's, naming the child."""

    def __init__(self, approve: ApprovalCallback, questions: threading.Lock, name: str):
        self.approve = approve
        self.questions = questions
        """Held while one child of the batch is asking."""
        self.name = name

    def __call__(self, request: ApprovalRequest, cancelled: Cancelled) -> ApprovalChoice:
        while not self.questions.acquire(timeout=WAIT):
            if cancelled():
                return "deny"
        try:
            if cancelled():
                return "deny"
            # A grandchild's request arrives already named: the chain reads parent first.
            who = f"{self.name} › {request.requester}" if request.requester else self.name
            return self.approve(replace(request, requester=who), cancelled)
        finally:
            self.questions.release()
