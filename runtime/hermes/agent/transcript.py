"""Editing a session's transcript in place: take back the last turn (``/undo``,
``/retry``) and discard a session the model never answered.

Both edit the session itself, never a copy: the session keeps its id, and its usage
totals keep every token spent, including those of a turn taken back.
"""

from __future__ import annotations

from typing import Any

from hermes.agent.attachments import Attachment, VisionLimits, from_data_url
from hermes.agent.loop import GRACE_NOTE, Agent
from hermes.agent.summary import split_summary
from hermes.tools.results import shows_images


def last_turn_start(messages: list[dict[str, Any]]) -> int | None:
    """Index of the user message that began the last turn; None when there is none.

    The budget's grace note, a compression summary and the images tools returned are
    user messages that no user typed: they never begin a turn.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        content = message.get("content")
        if message.get("role") != "user" or content == GRACE_NOTE or shows_images(message):
            continue
        summary = split_summary(content)
        if summary is None or summary[1].strip():
            return index
    return None


def take_back_last_turn(agent: Agent) -> str | None:
    """Remove the last turn (the user's message and everything after it) from the
    agent's transcript and from its stored session. Returns what the user typed, for
    ``/retry``; None when there is no turn to take back."""
    cut = last_turn_start(agent.messages)
    if cut is None:
        return None
    # Every message is persisted as it is appended, so the transcript's tail is the
    # stored session's tail (the system prompt is stored on the session, not as a row).
    removed = len(agent.messages) - cut
    stored = agent.store.messages(agent.session_id)
    keep = max(len(stored) - removed, 0)
    agent.store.delete_messages_after(agent.session_id, stored[keep - 1]["id"] if keep else 0)
    content = agent.messages[cut].get("content")
    del agent.messages[cut:]
    if isinstance(content, list):  # a turn with images: its text part
        content = next((part.get("text") for part in content if part.get("type") == "text"), "")
    text = content if isinstance(content, str) else ""
    return agent.typed_text.get(text, text)


def last_turn_images(agent: Agent, limits: VisionLimits) -> list[Attachment]:
    """The images the user sent with the last turn (for ``/retry`` to send again)."""
    cut = last_turn_start(agent.messages)
    content = agent.messages[cut].get("content") if cut is not None else None
    if not isinstance(content, list):
        return []
    urls = [part["image_url"]["url"] for part in content
            if part.get("type") == "image_url" and isinstance(part.get("image_url"), dict)]
    return [from_data_url(url, limits, "the last message's image") for url in urls
            if url.startswith("data:")]


def discard_if_unanswered(agent: Agent) -> bool:
    """Delete the agent's session if the model never answered in it (no assistant
    message) and it cost nothing; True if it was deleted.

    One-shot and interactive chat call this when they end, so a session whose first
    turn failed before any reply (an unreachable endpoint, a bad key), or that was
    opened and left without a word, does not pile up as an orphan: there is nothing to
    resume, and what the user typed is still in their shell or prompt history. A
    session that spent tokens, or holds an interrupted turn, is kept.
    """
    store = agent.store
    if any(m.get("role") == "assistant" for m in store.messages(agent.session_id)):
        return False
    session = store.get_session(agent.session_id)
    if session.input_tokens or session.output_tokens:
        return False
    store.delete_session(agent.session_id)
    return True
