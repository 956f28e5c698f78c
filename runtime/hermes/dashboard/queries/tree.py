"""A session's lineage as a tree for the page: compressions and sub-agents, with the
tokens and cost of the whole conversation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from hermes.sessions import Session, SessionStore

Kind = Literal["root", "continuation", "subagent"]
"""How a session came to be: a conversation's first session, the continuation of one
ended by compression, or a sub-agent's session (``delegate_task``, ACP children)."""


@dataclass
class Node:
    session: Session
    kind: Kind
    children: list[Node] = field(default_factory=list)
    """Oldest first."""


@dataclass(frozen=True)
class Lineage:
    root: Node
    focus: str
    """The id asked for: the page marks it in the tree."""
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    """Of the whole tree; ``None`` when any session's cost is unknown."""
    size: int
    """Sessions in the tree."""


def lineage(db: SessionStore, session_id: str) -> Lineage:
    """The tree ``session_id`` (an id or unique prefix) belongs to, from its root;
    ``SessionNotFound`` if there is no such session."""
    full_id = db.resolve_id(session_id)
    members = [session for _, session in db.lineage(full_id)]
    nodes = {s.id: Node(s, "root") for s in members}
    for session in sorted(members, key=lambda s: (s.started_at, s.id)):
        parent = nodes.get(session.parent_id or "")
        if parent is not None:
            parent.children.append(nodes[session.id])
    for node in nodes.values():
        _mark_children(node)
    costs = [s.cost_usd for s in members]
    return Lineage(nodes[members[0].id], full_id, sum(s.input_tokens for s in members),
                   sum(s.output_tokens for s in members),
                   None if None in costs else sum(c or 0.0 for c in costs), len(members))


def _mark_children(node: Node) -> None:
    """A session ended by compression is continued by its newest child (created as it
    ended); every other child is a sub-agent's session."""
    for child in node.children:
        child.kind = "subagent"
    if node.session.end_reason == "compression" and node.children:
        node.children[-1].kind = "continuation"
