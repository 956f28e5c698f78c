"""The judge of ``approvals.mode: smart``: a model weighs a flagged command against the
user's request and may approve it to run once.

It never sees hard-blocked commands (those are refused before it is asked), its
verdict only ever covers the one command, and anything but a clear ``APPROVE``
(a refusal, an error, a timeout, an answer it cannot read) leaves the decision
to the manual rules.
"""

from __future__ import annotations

import threading
from typing import Any

from hermes.models.base import ModelClient
from hermes.tools.context import ApprovalRequest, JudgeVerdict

INSTRUCTIONS = """\
You review shell commands that an AI agent wants to run on a user's machine. A \
safety check flagged the command below. Approve it only if it is clearly what the \
user asked for, its effects are limited to what that request needs, and it does not \
touch credentials, start-up files, other users' data or the system beyond that. When \
in doubt, deny. Answer with one line: `APPROVE: <short reason>` or `DENY: <short reason>`."""


class ModelJudge:
    """Asks ``client`` about each flagged command, waiting at most ``timeout`` seconds."""

    def __init__(self, client: ModelClient, timeout: float):
        self.client = client
        self.timeout = timeout

    def __call__(self, request: ApprovalRequest, user_request: str) -> JudgeVerdict:
        messages = [
            {"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": (
                f"The user's request:\n{user_request or '(none in this turn)'}\n\n"
                f"The command:\n{request.command}\n\nFlagged because: {request.reason}")},
        ]
        box: dict[str, Any] = {}

        def ask() -> None:
            try:
                box["text"] = self.client.complete(messages).content or ""
            except Exception as exc:  # noqa: BLE001 - any failure means "ask a person"
                box["error"] = exc

        worker = threading.Thread(target=ask, name="approval-judge", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            return JudgeVerdict(False, f"no verdict within {self.timeout:g} s")
        if "error" in box:
            return JudgeVerdict(False, f"the judge failed: {box['error']}")
        return parse_verdict(box["text"])


def parse_verdict(text: str) -> JudgeVerdict:
    """``APPROVE: why`` approves; anything else does not."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    word, _, reason = line.partition(":")
    verdict = word.strip().strip("`*").upper()
    reason = reason.strip() or "(no reason given)"
    if verdict == "APPROVE":
        return JudgeVerdict(True, reason)
    if verdict == "DENY":
        return JudgeVerdict(False, reason)
    return JudgeVerdict(False, f"unreadable verdict {line[:80]!r}")
