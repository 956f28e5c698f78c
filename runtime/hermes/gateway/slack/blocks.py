"""What the app posts besides plain answers: an answer as a section block, the approve and
deny buttons under an approval question, and the App Home tab."""

from __future__ import annotations

from typing import Any

from hermes.gateway.slack.events import APPROVAL_ACTION

SECTION_CHARS = 3000
"""The most text one section block takes; answers are split to fit one."""
APPROVAL_MARK = "Reply /approve to run it once"
"""How an approval question (``hermes.gateway.messaging.approvals``) is told apart."""
BUTTONS = (("Approve once", "once", "primary"), ("Approve for this conversation", "session", ""),
           ("Always approve", "always", ""), ("Deny", "deny", "danger"))


def answer_blocks(mrkdwn: str, plain: str) -> list[dict[str, Any]]:
    """One section of ``mrkdwn``; with the buttons when ``plain`` is an approval question."""
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}]
    if APPROVAL_MARK in plain:
        blocks.append({"type": "actions", "block_id": "hermes_approval",
                       "elements": [_button(*button) for button in BUTTONS]})
    return blocks


def _button(label: str, value: str, style: str) -> dict[str, Any]:
    button: dict[str, Any] = {"type": "button", "action_id": f"{APPROVAL_ACTION}_{value}",
                              "value": value,
                              "text": {"type": "plain_text", "text": label}}
    if style:
        button["style"] = style
    return button


def home_view(bot_user: str, command: str) -> dict[str, Any]:
    """The App Home tab: how to talk to the agent."""
    lines = (f"*Hermes* is an AI agent. Talk to it here in *Messages*, mention <@{bot_user}> "
             f"in a channel it is in (it answers in a thread), or type `{command} your "
             f"question` anywhere.\n`{command} /help` lists its commands; `{command} /new` "
             "starts a new conversation. A command that needs approval shows buttons.")
    return {"type": "home", "blocks": [{"type": "section", "text": {"type": "mrkdwn",
                                                                      "text": lines}}]}
