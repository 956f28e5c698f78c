"""Toolset ``session_search``: find what was said in this profile's earlier sessions.

A thin layer over ``SessionStore.search`` (safe FTS5 queries, trigram and substring
fallbacks for CJK and word parts, one hit per lineage, snippets with every match
marked): this module adds one message of context per hit, leaves out the current
session, and caps the results. The store is this home's ``state.db``, opened per call
(no session store is shared through ``ToolContext``), so a profile only ever searches
its own sessions, and a profile without a database gets no results rather than a new
file.

In a direct chat, the sessions of other people are left out: only the chat's person's
(their linked addresses too, ``hermes identity link``) and those that belong to no one
person (the CLI, groups, cron) are found.
"""

from __future__ import annotations

import time
from typing import Any

from hermes.errors import ToolError
from hermes.identities import IdentityStore
from hermes.sessions.models import MATCH_CLOSE, MATCH_OPEN, SearchHit
from hermes.sessions.store import SessionStore
from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.context import ToolContext
from hermes.tools.results import ok

DEFAULT_RESULTS = 5
MAX_RESULTS = 10
CONTEXT_CHARS = 300
"""Characters kept of the context message shown with each hit."""
_USER = ("WITH RECURSIVE up(id, parent_id, user) AS ("
         "SELECT id, parent_id, user FROM sessions WHERE id = ? UNION ALL "
         "SELECT s.id, s.parent_id, s.user FROM sessions s JOIN up ON s.id = up.parent_id) "
         "SELECT user FROM up WHERE user IS NOT NULL LIMIT 1")
"""The person a session (or the one it continues) talks to, if any."""
_NEIGHBOUR = ("SELECT role, content FROM messages WHERE session_id = ? AND id {op} ? "
              "AND role IN ('user', 'assistant') AND coalesce(content, '') != '' "
              "ORDER BY id {order} LIMIT 1")


def session_search(args: dict[str, Any], *, ctx: ToolContext, **_: Any) -> str:
    query = str(args.get("query", "")).strip()
    if not query:
        raise ToolError("give a query: words, \"an exact phrase\", prefix*, or a part of a "
                        "word (any language)")
    limit = max(1, min(int(args.get("limit", DEFAULT_RESULTS)), MAX_RESULTS))
    include_current = bool(args.get("include_current", False))
    path = ctx.home.sessions_db
    if not path.exists():
        return ok(query=query, count=0, results=[], note="this profile has no sessions yet")
    person = _person(ctx)
    with SessionStore(path) as store:
        # spares in case the current session or other people's hit
        hits = store.search(query, limit + 1 if person is None else 4 * limit + 1)
        kept = [h for h in hits if (include_current or h.session_id != ctx.session_id)
                and _belongs(store, h.session_id, person)][:limit]
        results = [describe(store, hit) for hit in kept]
    return ok(query=query, count=len(results), results=results,
              note=f"matches are marked {MATCH_OPEN}like this{MATCH_CLOSE}; best first, "
                   "one hit per conversation")


def _person(ctx: ToolContext) -> frozenset[str] | None:
    """The addresses of the person a direct chat talks to (linked ones too); None
    elsewhere (every session may be found)."""
    origin = ctx.origin
    if origin is None or origin.chat_type != "direct" or not origin.user_id:
        return None
    return IdentityStore(ctx.home.path).same_person(f"{origin.platform}:{origin.user_id}")


def _belongs(store: SessionStore, session_id: str, person: frozenset[str] | None) -> bool:
    if person is None:
        return True
    row = store.conn.execute(_USER, [session_id]).fetchone()
    return row is None or row[0] in person


def describe(store: SessionStore, hit: SearchHit) -> dict[str, Any]:
    """One result: where and when, the marked snippet and one message of context."""
    result: dict[str, Any] = {
        "session_id": hit.session_id, "title": hit.title, "source": hit.source,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(hit.created_at)),
        "role": hit.role, "snippet": hit.snippet,
    }
    context = neighbour(store, hit)
    if context is not None:
        result["context"] = context
    return result


def neighbour(store: SessionStore, hit: SearchHit) -> dict[str, str] | None:
    """The message that explains a hit: the reply to a user message, else the message
    before (usually the question that led to it). Tool messages are skipped."""
    after = hit.role == "user"
    sql = _NEIGHBOUR.format(op=">" if after else "<", order="ASC" if after else "DESC")
    # The store is private to this call, so its connection is used directly.
    row = store.conn.execute(sql, [hit.session_id, hit.message_id]).fetchone()
    if row is None:
        return None
    role, content = row
    text = " ".join(str(content).split())
    if len(text) > CONTEXT_CHARS:
        text = text[:CONTEXT_CHARS - 1] + "…"
    return {"position": "after" if after else "before", "role": role, "text": text}


def session_search_tool() -> ToolSpec:
    """``session_search``: ranked hits from this profile's earlier sessions."""
    schema = object_schema(
        ("query",),
        query={"type": "string", "description": (
            'Words (all must match), "an exact phrase", prefix*, alternatives with OR; '
            "a part of a word or Chinese/Japanese/Korean text also works.")},
        limit={"type": "integer", "minimum": 1, "maximum": MAX_RESULTS,
               "description": f"Most results to return (default {DEFAULT_RESULTS})."},
        include_current={"type": "boolean",
                         "description": "Also search this session (default false)."},
    )
    return ToolSpec(
        "session_search", "session_search",
        "Search the user's earlier conversations with you (this profile only). Use it when "
        "the user refers to something discussed before, or to recall past decisions and "
        "facts. Returns the best match of each conversation with a snippet and one message "
        "of context.", schema, session_search, parallel_safe=True)
