"""The sessions page's data layer (``hermes.dashboard.queries``) over a real ``state.db``
written through the real session store: pages, filters, search snippets, transcripts,
lineage, the actions and the index the pages walk."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes.agent.compress import Compressed, continue_in_child
from hermes.dashboard import queries
from hermes.dashboard.queries.pages import SessionPage
from hermes.sessions import (
    MATCH_CLOSE,
    MATCH_OPEN,
    SessionError,
    SessionNotFound,
    SessionStore,
    Usage,
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore(tmp_path / "home" / "state.db") as opened:
        yield opened


def ids(page: SessionPage) -> list[str]:
    return [row.session.id for row in page.rows]


def walk(store: SessionStore, **filters: object) -> list[str]:
    """Every id the pages show, following cursors 2 rows at a time."""
    seen, cursor = [], None
    while True:
        page = queries.session_page(store, cursor=cursor, limit=2, **filters)  # type: ignore[arg-type]
        seen += ids(page)
        if page.next_cursor is None:
            return seen
        cursor = page.next_cursor


def test_pages_show_every_session_once_newest_first_while_sessions_are_added(
        store: SessionStore) -> None:
    made = [store.create_session("cli", "m", title=f"s{i}") for i in range(7)]
    first = queries.session_page(store, limit=3)
    assert ids(first) == made[:3:-1] and first.next_cursor
    added = [store.create_session("cli", "m") for _ in range(3)]  # would shift an OFFSET
    second = queries.session_page(store, cursor=first.next_cursor, limit=3)
    third = queries.session_page(store, cursor=second.next_cursor, limit=3)
    assert ids(second) == made[3:0:-1] and ids(third) == made[:1]
    assert third.next_cursor is None
    assert ids(queries.session_page(store, limit=3))[0] == added[-1]


def test_sessions_started_at_the_same_instant_are_neither_lost_nor_repeated(
        store: SessionStore) -> None:
    made = [store.create_session("cli", "m") for _ in range(5)]
    # Imported sessions can share a start time; no API sets it, so set it directly.
    store.conn.execute("UPDATE sessions SET started_at = 1000.0")
    assert walk(store) == sorted(made, reverse=True)


def test_filters_by_source_and_start_time_and_rows_carry_the_totals(
        store: SessionStore) -> None:
    cli = store.create_session("cli", "m", title="on the terminal")
    telegram = store.create_session("telegram", "m")
    store.add_message(cli, "user", "hello")
    store.add_message(cli, "assistant", "hi", usage=Usage(100, 20, cost_usd=0.25))
    assert walk(store, source="telegram") == [telegram]
    split = store.get_session(telegram).started_at
    assert walk(store, since=split) == [telegram] and walk(store, until=split) == [cli]
    row = queries.session_page(store, source="cli").rows[0]
    assert (row.session.title, row.session.message_count, row.tokens,
            row.session.cost_usd) == ("on the terminal", 2, 120, 0.25)
    assert row.last_activity >= row.session.started_at and row.profile is None


def test_several_profiles_are_merged_or_picked_by_name(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "a" / "state.db") as a, \
            SessionStore(tmp_path / "b" / "state.db") as b:
        made = [(name, store.create_session("cli", "m"))
                for name, store in [("a", a), ("b", b), ("a", a), ("b", b)]]
        stores = {"a": a, "b": b}
        page = queries.session_page(stores, limit=3)
        assert [(r.profile, r.session.id) for r in page.rows] == made[:0:-1]
        rest = queries.session_page(stores, limit=3, cursor=page.next_cursor)
        assert [(r.profile, r.session.id) for r in rest.rows] == made[:1]
        assert ids(queries.session_page(stores, profile="b")) == [made[3][1], made[1][1]]
        with pytest.raises(SessionError, match='no profile "c" here; profiles: a, b'):
            queries.session_page(stores, profile="c")


@pytest.mark.parametrize("cursor", ["garbage", "nan_abc", "12.5_", "inf_x"])
def test_a_bad_cursor_or_page_size_is_one_clear_error(store: SessionStore, cursor: str) -> None:
    with pytest.raises(SessionError, match="invalid page cursor.*first page"):
        queries.session_page(store, cursor=cursor)
    with pytest.raises(SessionError, match="page size 0 is out of range"):
        queries.session_page(store, limit=0)


def test_search_snippets_are_plain_text_parts_never_markup(store: SessionStore) -> None:
    session = store.create_session("cli", "m")
    text = "<script>alert('x')</script> please deploy <b>now</b>"
    store.add_message(session, "user", text)
    store.add_message(session, "assistant", "the deployment is done")
    [found] = queries.search(store, "deploy")
    assert found.parts == [("<script>alert('x')</script> please ", False), ("deploy", True),
                           (" <b>now</b>", False)]
    assert "".join(part for part, _ in found.parts) == text
    assert not any(MATCH_OPEN in part or MATCH_CLOSE in part for part, _ in found.parts)
    assert found.hit.session_id == session
    # a substring no word matches: the trigram index, as `hermes sessions search` does
    [substring] = queries.search(store, "ploym")
    assert substring.parts == [("the de", False), ("ploym", True), ("ent is done", False)]
    assert queries.search(store, "<script>")[0].hit.message_id  # any text is a safe query
    with pytest.raises(SessionError, match="search limit 0 is out of range"):
        queries.search(store, "x", limit=0)


def test_a_common_word_lists_the_newest_hits_first_on_the_page(store: SessionStore) -> None:
    """Past 1,000 matches the page skips bm25 (it reads every match of a word to weigh
    it); ``hermes sessions search`` still ranks its window."""
    best = store.create_session("cli", "m")
    store.add_message(best, "user", "deploy deploy deploy")
    newer = store.create_session("cli", "m")
    store.add_messages(newer, [{"role": "user", "content": f"then deploy step {i} of the "
                                "release with a long explanation"} for i in range(1000)])
    assert [f.hit.session_id for f in queries.search(store, "deploy")] == [newer, best]
    assert [hit.session_id for hit in store.search("deploy")] == [best, newer]
    store.delete_messages_after(newer, 0)  # few matches: the page ranks them too
    store.add_message(newer, "user", "then deploy step 1 of the release")
    assert [f.hit.session_id for f in queries.search(store, "deploy")] == [best, newer]


def test_search_filters_by_source(store: SessionStore) -> None:
    for source in ("cli", "telegram"):
        store.add_message(store.create_session(source, "m"), "user", "deploy it")
    assert [f.hit.source for f in queries.search(store, "deploy", source="telegram")] == \
        ["telegram"]


def call(call_id: str, name: str) -> dict[str, object]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps({"path": call_id})}}


def test_a_transcript_groups_each_tool_result_under_its_call(store: SessionStore) -> None:
    session = store.create_session("cli", "m")
    store.add_messages(session, [
        {"role": "user", "content": "read two files"},
        {"role": "assistant", "content": None,
         "tool_calls": [call("c1", "read_file"), call("c2", "read_file")]},
        {"role": "tool", "content": "second", "tool_call_id": "c2", "name": "read_file"},
        {"role": "tool", "content": "first", "tool_call_id": "c1", "name": "read_file"},
        {"role": "tool", "content": "stray", "tool_call_id": "c9", "name": "terminal"},
        {"role": "assistant", "content": "done", "tool_calls": [call("c3", "terminal")]},
    ])
    found = queries.transcript(store, session[:10])
    assert [e.message["role"] for e in found.entries] == ["user", "assistant", "tool",
                                                          "assistant"]
    calls = found.entries[1].calls
    assert [(c.id, c.name, c.result and c.result["content"]) for c in calls] == \
        [("c1", "read_file", "first"), ("c2", "read_file", "second")]
    assert json.loads(calls[0].arguments) == {"path": "c1"}
    assert found.entries[2].message["content"] == "stray"
    assert found.entries[3].calls[0].result is None  # interrupted before the result
    assert found.session.id == session


def tool_turns(store: SessionStore) -> str:
    """A session of five turns: user, assistant calling a tool, the tool's result."""
    session = store.create_session("cli", "m")
    turn: list[dict[str, Any]] = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [call("c", "terminal")]},
            {"role": "tool", "content": "ok", "tool_call_id": "c", "name": "terminal"}]
    store.add_messages(session, [{**m, "content": f"{m['content']} {i}"}
                                 for i in range(5) for m in turn])
    return session


@pytest.mark.parametrize("query", ["deploy", "ploym", "北京"])  # words, trigrams, LIKE
def test_search_keeps_to_the_sessions_started_in_the_dates_given(store: SessionStore,
                                                                 query: str) -> None:
    store.add_message(store.create_session("cli", "m"), "user", "deployment to 北京 today")
    now = time.time()
    assert [len(queries.search(store, query, since=now - 3600, until=now + 3600,
                               source=source)) for source in (None, "cli", "telegram")] \
        == [1, 1, 0]
    assert queries.search(store, query, since=now + 3600) == []
    assert queries.search(store, query, until=now - 3600) == []


def test_a_long_transcript_comes_in_parts_that_keep_calls_with_their_results(
        store: SessionStore) -> None:
    session = tool_turns(store)
    parts, after = [], 0
    while True:
        part = queries.transcript(store, session, after=after, limit=2)
        parts.append([(e.message["role"], [c.result is not None for c in e.calls])
                      for e in part.entries])
        if part.next_after is None:
            break
        after = part.next_after
    assert parts == [[("user", []), ("assistant", [True])]] * 5
    assert len(queries.transcript(store, session).entries) == 10
    with pytest.raises(SessionError, match="transcript part size 0 is out of range"):
        queries.transcript(store, session, limit=0)


def test_the_latest_part_first_then_the_earlier_parts_calls_kept_with_results(
        store: SessionStore) -> None:
    session = tool_turns(store)
    parts, before = [], None
    while True:
        part = queries.latest(store, session[:8], limit=2, before=before)
        parts.append([(e.message["role"], e.message["content"],
                       [c.result is not None for c in e.calls]) for e in part.entries])
        if part.earlier_before is None:
            break
        before = part.earlier_before
    assert parts[0] == [("assistant", "None 4", [True])]  # its result came along
    assert parts[1] == [("assistant", "None 3", [True]), ("user", "go 4", [])]
    assert [m for part in reversed(parts) for m in part] == [
        (e.message["role"], e.message["content"], [c.result is not None for c in e.calls])
        for e in queries.transcript(store, session).entries]
    assert len(queries.latest(store, session, limit=100).entries) == 10
    assert queries.latest(store, session, limit=100).earlier_before is None
    with pytest.raises(SessionError, match="transcript part size 0 is out of range"):
        queries.latest(store, session, limit=0)


def test_lineage_of_a_compressed_session_with_a_sub_agent(store: SessionStore) -> None:
    root = store.create_session("cli", "m", title="long chat")
    store.add_message(root, "assistant", "a", usage=Usage(100, 10, cost_usd=1.0))
    helper = store.create_session("cli", "m", root, system_prompt="you are a sub-agent")
    store.add_message(helper, "assistant", "b", usage=Usage(50, 5, cost_usd=0.5))
    child = continue_in_child(store, root, Compressed(
        [{"role": "user", "content": "summary so far"}], "summarised", 3))
    store.add_message(child, "assistant", "c", usage=Usage(10, 1, cost_usd=0.25))
    tree = queries.lineage(store, child)
    assert (tree.root.session.id, tree.root.kind, tree.focus, tree.size) == \
        (root, "root", child, 3)
    assert [(n.session.id, n.kind) for n in tree.root.children] == \
        [(helper, "subagent"), (child, "continuation")]
    assert (tree.input_tokens, tree.output_tokens, tree.cost_usd) == (160, 16, 1.75)
    rows = {row.session.id: row for row in queries.session_page(store).rows}
    assert (rows[root].children, rows[root].compressed) == (2, True)
    assert (rows[child].children, rows[child].session.parent_id) == (0, root)
    store.add_message(helper, "assistant", "unpriced", usage=Usage(1, 1, cost_usd=None))
    assert queries.lineage(store, root).cost_usd is None  # unknown, not a smaller sum


@pytest.mark.parametrize("action", ["transcript", "lineage", "export", "delete", "rename"])
def test_a_missing_session_is_one_clear_error(store: SessionStore, action: str) -> None:
    run = {"transcript": lambda: queries.transcript(store, "nope"),
           "lineage": lambda: queries.lineage(store, "nope"),
           "export": lambda: queries.export(store, "nope"),
           "delete": lambda: queries.delete(store, "nope"),
           "rename": lambda: queries.rename(store, "nope", "title")}[action]
    with pytest.raises(SessionNotFound, match='^no session matches "nope"; '):
        run()


def test_rename_export_and_delete_act_on_the_store(store: SessionStore) -> None:
    parent = store.create_session("cli", "m")
    session = store.create_session("cli", "m", parent)
    continuation = store.create_session("cli", "m", session)
    store.add_message(session, "user", "hello there")
    assert queries.rename(store, session[:8], "  a   new\ttitle ") == "a new title"
    assert "# a new title" in queries.export(store, session, "md")
    assert json.loads(queries.export(store, session).splitlines()[1])["content"] == \
        "hello there"
    assert queries.delete(store, session) == 1
    assert store.get_session(continuation).parent_id == parent  # lineage stays connected
    with pytest.raises(SessionError, match="the title is empty"):
        queries.rename(store, parent, " ")


def test_pages_walk_an_index_without_sorting(store: SessionStore) -> None:
    """The migration's (source, started_at, id) indexes: no page sorts the table."""
    cursor = (1.0, "x")
    for source in (None, "cli"):
        where, params = ("WHERE source = ? AND (started_at, id) < (?, ?)", [source, *cursor]) \
            if source else ("WHERE (started_at, id) < (?, ?)", [*cursor])
        plan = " ".join(r[3] for r in store.conn.execute(
            f"EXPLAIN QUERY PLAN SELECT * FROM sessions {where} "
            "ORDER BY started_at DESC, id DESC LIMIT 51", params))
        assert "TEMP B-TREE" not in plan and "_started_at_id" in plan, plan
