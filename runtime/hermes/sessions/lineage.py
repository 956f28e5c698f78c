"""A session's lineage as a tree: the root it descends from and every session below it
(continuations after compression, sub-agents' sessions)."""

from __future__ import annotations

import sqlite3

from hermes.sessions.models import Session

ROOT = ("WITH RECURSIVE up(id, parent_id, depth) AS ("
        " SELECT id, parent_id, 0 FROM sessions WHERE id = ?"
        " UNION ALL SELECT s.id, s.parent_id, up.depth + 1 FROM sessions s"
        " JOIN up ON s.id = up.parent_id WHERE up.depth < 1000)"
        " SELECT id FROM up ORDER BY depth DESC LIMIT 1")
"""The root of a session's lineage (the depth bound stops a corrupt cycle)."""


def lineage(conn: sqlite3.Connection, session_id: str, columns: str) -> list[tuple[int, Session]]:
    """``(depth, session)`` of the whole tree ``session_id`` belongs to, depth first from
    its root, children oldest first."""
    found = conn.execute(ROOT, [session_id]).fetchone()
    if found is None:
        return []
    tree: list[tuple[int, Session]] = []
    stack = [(0, found[0])]
    seen: set[str] = set()
    while stack:
        depth, current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        row = conn.execute(f"SELECT {columns} FROM sessions WHERE id = ?", [current])
        tree.append((depth, _session(row)))
        children = conn.execute("SELECT id FROM sessions WHERE parent_id = ? "
                                "ORDER BY started_at DESC, id DESC", [current]).fetchall()
        stack.extend((depth + 1, child) for (child,) in children)
    return tree


def _session(cursor: sqlite3.Cursor) -> Session:
    names = [d[0] for d in cursor.description]
    return Session.from_row(dict(zip(names, cursor.fetchone(), strict=True)))
