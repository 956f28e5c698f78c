"""Questions the agent asks the person at the terminal: approvals and clarifications."""

from __future__ import annotations

import sys

from hermes.tools.context import ApprovalChoice


def _ask(question: str) -> str:
    sys.stdout.write(question)
    sys.stdout.flush()
    return sys.stdin.readline().strip()


def approve(command: str, reason: str) -> ApprovalChoice:
    answer = _ask(f"\n⚠ {reason}:\n    {command}\n  allow? [o]nce / [s]ession / [a]lways / "
                  "[d]eny: ").lower()
    return {"o": "once", "s": "session", "a": "always"}.get(answer[:1], "deny")  # type: ignore[return-value]


def clarify(question: str, choices: list[str] | None) -> str:
    options = "".join(f"\n  {i}. {c}" for i, c in enumerate(choices or [], 1))
    answer = _ask(f"\n? {question}{options}\n> ")
    if choices and answer.isdigit() and 1 <= int(answer) <= len(choices):
        return choices[int(answer) - 1]
    return answer
