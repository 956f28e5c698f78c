"""The session store on real SQLite files: schema, migrations, writes, search, processes."""

from __future__ import annotations

import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes.sessions import (
    MATCH_CLOSE,
    MATCH_OPEN,
    AmbiguousSessionId,
    SessionError,
    SessionNotFound,
    SessionStore,
    Usage,
)
from hermes.sessions.connection import set_journal_mode
from hermes.sessions.migrations import MIGRATIONS
from hermes.sessions.search import parse_query
from hermes.sessions.snippets import substring_snippet, word_snippet

ALL_MIGRATIONS = [name for name, _ in MIGRATIONS]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "state.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[SessionStore]:
    with SessionStore(db_path) as opened:
        yield opened


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def assert_consistent(path: Path) -> None:
    """The file is intact, both indexes match their content and totals match the rows."""
    conn = raw(path)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    for table in ("messages_fts", "messages_trigram"):
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
    mismatched = conn.execute(
        "SELECT s.id FROM sessions s WHERE s.message_count != (SELECT count(*) FROM messages m "
        "WHERE m.session_id = s.id) OR s.input_tokens != (SELECT coalesce(sum(input_tokens), 0) "
        "FROM messages m WHERE m.session_id = s.id)").fetchall()
    assert mismatched == []
    conn.close()


# -- schema and migrations ---------------------------------------------------------------


def test_migrating_a_blank_database_creates_every_column(db_path: Path) -> None:
    store = SessionStore(db_path).open()
    assert store.migrate() == []  # open() already migrated; repeating is a no-op
    store.close()
    conn = raw(db_path)
    assert columns(conn, "sessions") == {
        "id", "source", "model", "system_prompt", "parent_id", "title", "started_at",
        "updated_at", "ended_at", "end_reason", "input_tokens", "output_tokens",
        "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "cost_usd",
        "message_count", "user"}
    assert columns(conn, "messages") == {
        "id", "session_id", "role", "content", "tool_calls", "tool_call_id", "tool_name",
        "reasoning", "input_tokens", "output_tokens", "finish_reason", "images",
        "created_at"}
    assert [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name")] \
        == ALL_MIGRATIONS
    fts = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE name IN "
                            "('messages_fts', 'messages_trigram')").fetchall())
    assert "unicode61" in fts["messages_fts"] and "trigram" in fts["messages_trigram"]
    triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master "
                                           "WHERE type = 'trigger'")}
    assert len(triggers) == 6


def test_a_database_made_by_the_first_migration_migrates_forward(db_path: Path) -> None:
    import sqlite_utils

    db_path.parent.mkdir()
    old = sqlite_utils.Database(db_path)
    MIGRATIONS[0][1](old)  # what the first release created
    old.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    old.execute("INSERT INTO _migrations VALUES ('0001_sessions', 1.0)")
    old["sessions"].insert({"id": "old1", "source": "cli", "model": "m", "started_at": 100.0})
    for i, text in enumerate(["deploy the old service", "我明天去北京出差"]):
        old["messages"].insert({"session_id": "old1", "role": "user", "content": text,
                                "created_at": 200.0 + i})
    old.conn.commit()
    old.close()

    with SessionStore(db_path) as store:
        assert store.migrate() == []
        session = store.get_session("old1")
        assert (session.message_count, session.updated_at) == (2, 201.0)
        assert session.cost_usd is None  # never recorded: unknown, not free
        assert [hit.session_id for hit in store.search("deploy")] == ["old1"]
        assert [hit.session_id for hit in store.search("北京")] == ["old1"]
        store.add_message("old1", "assistant", "done", usage=Usage(3, 4, cost_usd=0.5))
        assert store.get_session("old1").message_count == 3
    assert_consistent(db_path)
    names = [r[0] for r in raw(db_path).execute("SELECT name FROM _migrations ORDER BY name")]
    assert names == ALL_MIGRATIONS


def test_files_are_private_and_wal_is_used(db_path: Path, store: SessionStore) -> None:
    old_umask = os.umask(0o022)
    try:
        sid = store.create_session("cli", "m")
        store.add_message(sid, "user", "hello")
        other = SessionStore(db_path).open()  # a second process-like connection
        other.add_message(sid, "user", "again")
        other.close()
    finally:
        os.umask(old_umask)
    assert store.journal_mode == "wal"
    assert store.conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    files = [p for p in db_path.parent.iterdir() if p.name.startswith("state.db")]
    assert {p.name for p in files} >= {"state.db", "state.db-wal", "state.db-shm"}
    assert {oct(p.stat().st_mode & 0o777) for p in files} == {"0o600"}


def test_falls_back_to_a_rollback_journal_where_wal_cannot_work(db_path: Path) -> None:
    # unix-dotfile has no shared memory, like many network file systems: WAL is refused.
    with SessionStore(db_path, vfs="unix-dotfile") as store:
        assert store.journal_mode == "delete"
        assert store.conn.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
        sid = store.create_session("cli", "m")
        store.add_message(sid, "user", "works without WAL")
        assert store.search("without")[0].session_id == sid
    assert not db_path.with_name("state.db-wal").exists()


class RefusesWal:
    """A connection whose file system rejects WAL the way NFS does."""

    def __init__(self) -> None:
        self.executed: list[str] = []

    def execute(self, sql: str) -> sqlite3.Cursor:
        self.executed.append(sql)
        if sql == "PRAGMA journal_mode=WAL":
            raise sqlite3.OperationalError("locking protocol")
        return sqlite3.connect(":memory:").execute("SELECT 'delete'")


def test_a_failing_wal_switch_falls_back_to_delete() -> None:
    conn = RefusesWal()
    assert set_journal_mode(conn) == "delete"
    assert conn.executed[-1] == "PRAGMA journal_mode=DELETE"


# -- sessions and messages ---------------------------------------------------------------


def test_messages_keep_every_field_and_update_the_totals(store: SessionStore) -> None:
    sid = store.create_session("telegram", "gpt-x", system_prompt="be brief")
    calls = [{"id": "c1", "type": "function",
              "function": {"name": "terminal", "arguments": '{"cmd": "ls"}'}}]
    store.add_message(sid, "user", "list files")
    store.add_message(sid, "assistant", None, tool_calls=calls, reasoning="use ls",
                      finish_reason="tool_calls",
                      usage=Usage(100, 20, cache_read_tokens=50, cache_write_tokens=5,
                                  reasoning_tokens=7, cost_usd=0.25))
    store.add_message(sid, "tool", "a.txt\ud800", tool_call_id="c1", tool_name="terminal")
    first, second, third = store.messages(sid)
    assert (first["role"], first["content"], first["input_tokens"]) == ("user", "list files",
                                                                          None)
    assert second["tool_calls"] == calls and second["reasoning"] == "use ls"
    assert (second["input_tokens"], second["output_tokens"], second["finish_reason"]) \
        == (100, 20, "tool_calls")
    assert third["content"] == "a.txt?"  # a lone surrogate cannot be stored; it is replaced
    assert (third["tool_call_id"], third["tool_name"]) == ("c1", "terminal")
    session = store.get_session(sid)
    assert (session.message_count, session.input_tokens, session.output_tokens,
            session.cache_read_tokens, session.cache_write_tokens, session.reasoning_tokens,
            session.cost_usd, session.system_prompt) == (3, 100, 20, 50, 5, 7, 0.25, "be brief")
    assert session.updated_at == pytest.approx(third["created_at"])


def test_unknown_pricing_makes_the_cost_unknown_for_good(store: SessionStore) -> None:
    sid = store.create_session("cli", "local-model")
    assert store.get_session(sid).cost_usd == 0.0  # no calls yet: free, and known
    store.add_message(sid, "assistant", "a", usage=Usage(10, 1, cost_usd=0.1))
    store.add_usage(sid, Usage(5, 5, cost_usd=None))  # e.g. a title call, pricing unknown
    store.add_message(sid, "assistant", "b", usage=Usage(10, 1, cost_usd=0.1))
    session = store.get_session(sid)
    assert session.cost_usd is None and session.input_tokens == 25
    assert session.message_count == 2  # add_usage adds no message
    bulk = store.create_session("cli", "m")
    store.add_messages(bulk, [{"role": "user", "content": "x"},
                              {"role": "assistant", "content": "y",
                               "usage": Usage(1, 2, cost_usd=0.5)}])
    assert store.get_session(bulk).cost_usd == 0.5
    assert store.get_session(bulk).message_count == 2


def test_end_rename_get_and_their_refusals(store: SessionStore) -> None:
    sid = store.create_session("cli", "m")
    store.end_session(sid, "interrupted")
    store.rename(sid, "  Trip\nto   Beijing ")
    session = store.get_session(sid)
    assert (session.end_reason, session.title) == ("interrupted", "Trip to Beijing")
    assert session.ended_at is not None
    with pytest.raises(SessionError, match="empty"):
        store.rename(sid, " \n ")
    with pytest.raises(SessionError, match="at most 200"):
        store.rename(sid, "x" * 201)
    for call in (lambda: store.get_session("nope"), lambda: store.rename("nope", "t"),
                 lambda: store.end_session("nope"), lambda: store.add_message("nope", "u", "x"),
                 lambda: store.add_usage("nope", Usage()), lambda: store.delete_session("nope"),
                 lambda: store.create_session("cli", "m", parent_id="nope")):
        with pytest.raises(SessionNotFound):
            call()
    with pytest.raises(SessionError, match="already exists"):
        store.create_session("cli", "m", session_id=sid)
    assert len(store.list_sessions()) == 1


def test_list_is_newest_first_with_filters(store: SessionStore) -> None:
    ids = [store.create_session(source, "m") for source in ("cli", "cron", "cli", "telegram")]
    assert [s.id for s in store.list_sessions()] == ids[::-1]
    assert [s.id for s in store.list_sessions(source="cli")] == [ids[2], ids[0]]
    assert [s.id for s in store.list_sessions(limit=2)] == [ids[3], ids[2]]


def test_ids_resolve_from_a_unique_prefix(store: SessionStore) -> None:
    for sid in ("abc123", "abd456", "abd789"):
        store.create_session("cli", "m", session_id=sid)
    assert store.resolve_id("abc") == "abc123"
    assert store.resolve_id("abd456") == "abd456"
    with pytest.raises(AmbiguousSessionId, match="abd456, abd789"):
        store.resolve_id("abd")
    with pytest.raises(SessionNotFound):
        store.resolve_id("zz")
    with pytest.raises(SessionNotFound):
        store.resolve_id("")


def test_delete_removes_messages_and_index_rows_and_keeps_lineage(db_path: Path,
                                                                  store: SessionStore) -> None:
    root = store.create_session("cli", "m")
    middle = store.create_session("cli", "m", parent_id=root)
    tip = store.create_session("cli", "m", parent_id=middle)
    store.add_message(middle, "user", "unique marmalade words")
    store.add_message(tip, "user", "tip text")
    assert store.delete_session(middle) == 1
    assert store.search("marmalade") == [] and store.search("armala") == []
    assert store.get_session(tip).parent_id == root
    assert store.search("tip")[0].root_id == root
    assert_consistent(db_path)


def test_deleting_messages_after_one_keeps_the_usage_and_the_index_in_sync(
        db_path: Path, store: SessionStore) -> None:
    sid = store.create_session("cli", "m")
    other = store.create_session("cli", "m")
    first = store.add_message(sid, "user", "keep these apricots")
    store.add_message(sid, "assistant", "kept", usage=Usage(10, 5, cost_usd=0.5))
    store.add_message(sid, "user", "forget the quinces")
    store.add_message(sid, "assistant", "gone", usage=Usage(20, 7, cost_usd=0.25))
    store.add_message(other, "user", "other quinces")
    assert store.delete_messages_after(sid, first + 1) == 2
    assert [m["content"] for m in store.messages(sid)] == ["keep these apricots", "kept"]
    assert [hit.session_id for hit in store.search("quinces")] == [other]
    assert store.search("apricots")[0].session_id == sid
    session = store.get_session(sid)
    assert session.message_count == 2
    assert (session.input_tokens, session.output_tokens, session.cost_usd) == (30, 12, 0.75)
    assert store.delete_messages_after(sid, 0) == 2 and store.messages(sid) == []
    assert store.get_session(sid).message_count == 0
    assert store.delete_messages_after(sid, 0) == 0
    with pytest.raises(SessionNotFound):
        store.delete_messages_after("nope", 0)
    conn = raw(db_path)
    for table in ("messages_fts", "messages_trigram"):
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
    conn.close()


def test_prune_deletes_only_sessions_idle_for_longer(db_path: Path, store: SessionStore) -> None:
    old, recent = store.create_session("cli", "m"), store.create_session("cli", "m")
    store.add_message(old, "user", "ancient history")
    month_ago = time.time() - 40 * 86400
    raw(db_path).execute("UPDATE sessions SET started_at = ?, updated_at = ? WHERE id = ?",
                         [month_ago, month_ago, old])
    assert store.prune(timedelta(days=30), dry_run=True) == [old]
    assert store.get_session(old)  # a dry run deletes nothing
    assert store.prune(timedelta(days=30)) == [old]
    assert [s.id for s in store.list_sessions()] == [recent]
    assert store.search("ancient") == []
    assert_consistent(db_path)


def test_a_sessions_files_go_with_it_on_delete_and_prune(db_path: Path,
                                                         store: SessionStore) -> None:
    from hermes.sessions.files import session_files_dir

    deleted, pruned, kept = (store.create_session("cli", "m") for _ in range(3))
    for sid in (deleted, pruned, kept):
        (session_files_dir(db_path.parent, sid) / "web-originals").mkdir(parents=True)
        (session_files_dir(db_path.parent, sid) / "web-originals" / "page.json").write_text("{}")
    store.delete_session(deleted)
    month_ago = time.time() - 40 * 86400
    raw(db_path).execute("UPDATE sessions SET started_at = ?, updated_at = ? WHERE id = ?",
                         [month_ago, month_ago, pruned])
    assert store.prune(timedelta(days=30)) == [pruned]
    assert [path.name for path in (db_path.parent / "sessions" / "files").iterdir()] == [
        session_files_dir(db_path.parent, kept).name]


def test_export_jsonl_and_markdown(store: SessionStore) -> None:
    sid = store.create_session("cli", "m", title="Deploy notes")
    store.add_message(sid, "user", "how do I deploy? ```bash``` inside")
    store.add_message(sid, "assistant", "like this", tool_calls=[{"name": "terminal"}],
                      usage=Usage(1, 2, cost_usd=None))
    lines = [json.loads(line) for line in store.export(sid, "jsonl").splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["title"] == "Deploy notes"
    assert [(m["type"], m["role"]) for m in lines[1:]] == [("message", "user"),
                                                           ("message", "assistant")]
    assert lines[2]["tool_calls"] == [{"name": "terminal"}]
    markdown = store.export(sid, "md")
    assert markdown.startswith("# Deploy notes\n") and "- **cost:** unknown" in markdown
    assert "## assistant" in markdown and '"name": "terminal"' in markdown


# -- search ------------------------------------------------------------------------------


@pytest.fixture
def corpus(store: SessionStore) -> dict[str, str]:
    ids = {name: store.create_session(source, "m") for name, source in
           (("trip", "telegram"), ("deploy", "cli"), ("other", "cli"))}
    ids["deploy2"] = store.create_session("cli", "m", parent_id=ids["deploy"])
    store.add_message(ids["trip"], "user", "我明天去北京出差")
    store.add_message(ids["trip"], "assistant", "東京の天気はどうですか and the café is naïve")
    store.add_message(ids["deploy"], "user", "deploy the service to kubernetes")
    store.add_message(ids["deploy2"], "user", "the deployment failed: connection refused")
    store.add_message(ids["other"], "user", "postgres migration done; no deploys today")
    store.add_message(ids["other"], "tool", "ok", tool_name="kubectl_apply")
    return ids


def test_search_ranks_words_marks_matches_and_dedups_lineage(store, corpus) -> None:
    hits = store.search("deploy")
    assert [h.root_id for h in hits] == [corpus["deploy"]]  # one hit for the lineage
    assert hits[0].snippet == f"{MATCH_OPEN}deploy{MATCH_CLOSE} the service to kubernetes"
    assert (hits[0].role, hits[0].source) == ("user", "cli")
    assert {h.session_id for h in store.search("deploy*")} == {corpus["deploy"],
                                                                corpus["other"]}
    assert [h.session_id for h in store.search('"connection refused"')] == [corpus["deploy2"]]
    assert {h.root_id for h in store.search("postgres OR failed")} == {corpus["other"],
                                                                       corpus["deploy"]}
    assert store.search("naive cafe")[0].session_id == corpus["trip"]  # diacritics folded
    assert store.search("kubectl_apply")[0].session_id == corpus["other"]  # tool names
    assert store.search("deploy", source="telegram") == []
    assert len(store.search("the", limit=1)) == 1


def test_search_finds_cjk_and_substrings(store, corpus) -> None:
    for query in ("北京", "北京出差", "天気", "東京の"):
        hits = store.search(query)
        assert [h.session_id for h in hits] == [corpus["trip"]], query
    assert MATCH_OPEN + "北京" + MATCH_CLOSE in store.search("北京")[0].snippet
    assert store.search("上海") == []
    assert [h.root_id for h in store.search("ploym")] == [corpus["deploy"]]  # inside a word
    assert store.search("ub") == []  # too short for a substring, not a word


def mark(text: str) -> str:
    return MATCH_OPEN + text + MATCH_CLOSE


def test_snippets_mark_what_the_index_matched() -> None:
    text = "Naïve users said: connection refused, then Deployment_v2 redeployed."
    assert word_snippet([text], [("naive", False)]).startswith(mark("Naïve") + " users")
    assert mark("connection refused") in word_snippet([text], [("connection refused", False)])
    prefixed = word_snippet([text], [("deploy", True)])
    assert mark("Deployment") + "_v2" in prefixed and "re" + mark("deployed") not in prefixed
    assert word_snippet([None, "tool: kubectl"], [("kubectl", False)]) == "tool: " + \
        mark("kubectl")
    long = "x " * 100 + "needle" + " y" * 100
    snippet = word_snippet([long], [("needle", False)])
    assert snippet.startswith("…") and snippet.endswith("…") and len(snippet) < 140
    assert substring_snippet(["我明天去北京出差"], ["北京"]) == "我明天去" + mark("北京") + "出差"
    assert substring_snippet(["Deployment"], ["PLOYM"]) == "De" + mark("ploym") + "ent"
    assert word_snippet(["no match here"], [("absent", False)]) == "no match here"


def test_one_long_conversation_is_one_hit(store: SessionStore) -> None:
    parent = None
    for part in range(4):  # a conversation compressed three times
        sid = store.create_session("gateway", "m", parent)
        store.add_messages(sid, [{"role": "user", "content": f"deploy step {part} {i}"}
                                 for i in range(300)])
        parent = sid
    root = store.list_sessions()[-1].id
    hits = store.search("deploy", limit=5)
    assert [h.root_id for h in hits] == [root]


def test_add_messages_takes_the_openai_wire_format(store: SessionStore) -> None:
    sid = store.create_session("cli", "m")
    store.add_messages(sid, [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "content": "ok", "tool_call_id": "c1", "name": "terminal"}])
    assert [(m["tool_call_id"], m["tool_name"]) for m in store.messages(sid)] \
        == [(None, None), ("c1", "terminal")]


@pytest.mark.parametrize("query", ['"', '""', "AND", "OR OR", "NOT", "a AND", "(", ")",
                                   "*", "**x", "col:term", "NEAR(a b)", "^x", "-x", "+",
                                   "\x00", "\ud800", "'; DROP TABLE messages; --", "a" * 5000])
def test_fts_syntax_in_user_text_is_harmless(store, corpus, query: str) -> None:
    assert isinstance(store.search(query), list)
    assert store.get_session(corpus["trip"])  # and nothing happened to the data


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=80))
def test_arbitrary_text_never_raises(store, corpus, text: str) -> None:
    parse_query(text)
    assert isinstance(store.search(text), list)


# -- processes ---------------------------------------------------------------------------

WRITER = r"""
import json, sys
from pathlib import Path
from hermes.sessions import SessionStore, Usage
store = SessionStore(Path(sys.argv[1])).open()
session, shared, count = store.create_session("cron", "m"), sys.argv[2], int(sys.argv[3])
print(json.dumps({"session": session}), flush=True)
sys.stdin.readline()
for i in range(count):
    store.add_message(session, "assistant", f"own {i}", usage=Usage(2, 1, cost_usd=0.01))
    if i % 3 == 0:
        store.add_message(shared, "user", f"shared {session} {i}", usage=Usage(1, 1))
print(json.dumps({"done": count}), flush=True)
"""


class Child:
    """A child process whose stdout lines are read with a timeout (no blind sleeps)."""

    def __init__(self, code: str, *args: str):
        self.proc = subprocess.Popen([sys.executable, "-c", code, *args], text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.lines: queue.Queue[str] = queue.Queue()
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def read(self, timeout: float = 60) -> dict:
        try:
            return dict(json.loads(self.lines.get(timeout=timeout)))
        except queue.Empty:
            self.proc.kill()
            raise AssertionError(f"child said nothing for {timeout} s: "
                                 f"{self.proc.stderr.read() if self.proc.stderr else ''}"
                                 ) from None

    def rest(self) -> list[dict]:
        """Everything it printed that was not read yet; call once it has exited."""
        self.pump.join(timeout=30)
        items = []
        while not self.lines.empty():
            items.append(json.loads(self.lines.get_nowait()))
        return items

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text)
        self.proc.stdin.flush()


def test_several_processes_write_at_once_without_losing_a_row(db_path: Path,
                                                              store: SessionStore) -> None:
    shared = store.create_session("gateway", "m")
    count, procs = 120, 4
    children = [Child(WRITER, str(db_path), shared, str(count)) for _ in range(procs)]
    sessions = [child.read()["session"] for child in children]
    for child in children:  # all are ready: start them together
        child.send("go\n")
    for child in children:
        assert child.read() == {"done": count}
        assert child.proc.wait(timeout=60) == 0
        assert child.proc.stderr is not None and child.proc.stderr.read() == ""
    for session in sessions:
        assert store.get_session(session).message_count == count
        assert store.get_session(session).cost_usd == pytest.approx(count * 0.01)
    assert store.get_session(shared).message_count == procs * len(range(0, count, 3))
    assert_consistent(db_path)


FIRST_OPENER = r"""
import sys
from pathlib import Path
from hermes.sessions import SessionStore
store = SessionStore(Path(sys.argv[1])).open()
session = store.create_session("cli", "m")
for i in range(20):
    store.add_message(session, "user", f"early {i}")
print('{"ok": 1}', flush=True)
"""


def test_processes_racing_to_create_the_database_all_succeed(db_path: Path) -> None:
    children = [Child(FIRST_OPENER, str(db_path)) for _ in range(4)]
    for child in children:
        assert child.read() == {"ok": 1}
        assert child.proc.wait(timeout=60) == 0
    with SessionStore(db_path) as store:
        assert [s.message_count for s in store.list_sessions()] == [20] * 4
        assert store.migrate() == []
    assert_consistent(db_path)


KILLED_WRITER = r"""
import sys
from pathlib import Path
from hermes.sessions import SessionStore, Usage
store = SessionStore(Path(sys.argv[1])).open()
session, start = sys.argv[2], int(sys.argv[3])
for i in range(start, start + 100_000):
    # Large messages: transactions are long enough to be cut in the middle.
    store.add_message(session, "user", f"message {i} " + "lorem ipsum " * (i % 7 * 400),
                      usage=Usage(i, 1))
    print('{"written": %d}' % (i + 1), flush=True)
"""


def test_kill_9_mid_write_loses_nothing_committed_and_resumes(db_path: Path,
                                                              store: SessionStore) -> None:
    session = store.create_session("cli", "m")
    committed = 0
    for _round in range(3):
        child = Child(KILLED_WRITER, str(db_path), session, str(committed))
        reported = committed
        while reported < committed + 25:  # wait until it reports 25 more rows
            reported = child.read()["written"]
        child.proc.send_signal(signal.SIGKILL)
        child.proc.wait(timeout=30)
        reported = max([reported, *(line["written"] for line in child.rest())])
        with SessionStore(db_path) as reopened:  # recovery, as the next process sees it
            rows = [int(m["content"].split()[1]) for m in reopened.messages(session)]
            # Every reported row is there, in order, with at most one more (committed,
            # then killed before it could report).
            assert rows == list(range(len(rows))) and reported <= len(rows) <= reported + 1
            committed = len(rows)
        assert_consistent(db_path)
    store.add_message(session, "user", "resumed after the crash")
    assert store.get_session(session).message_count == committed + 1
    assert store.search("resumed")[0].session_id == session


HALF_WRITER = r"""
import sys
from pathlib import Path
from hermes.sessions import SessionStore, Usage, rows
store = SessionStore(Path(sys.argv[1])).open()
session, conn = sys.argv[2], store.conn
# What add_message does, stopped between its two statements and its COMMIT.
conn.execute("BEGIN IMMEDIATE")
row = rows.message_row(session, "user", "never committed", usage=Usage(9, 9))
conn.execute(rows.INSERT_MESSAGE, row)
conn.execute(rows.ADD_TOTALS, rows.Totals().add(Usage(9, 9)).params(session, row[-1]))
print('{"holding": 1}', flush=True)
sys.stdin.readline()
"""


def test_kill_9_inside_a_transaction_rolls_it_back(db_path: Path, store: SessionStore) -> None:
    session = store.create_session("cli", "m")
    store.add_message(session, "user", "committed before")
    child = Child(HALF_WRITER, str(db_path), session)
    assert child.read() == {"holding": 1}  # it holds the write lock, mid-transaction
    child.proc.send_signal(signal.SIGKILL)
    child.proc.wait(timeout=30)
    store.add_message(session, "user", "written right after")  # the lock died with it
    assert [m["content"] for m in store.messages(session)] == ["committed before",
                                                               "written right after"]
    assert store.get_session(session).input_tokens == 0
    assert store.search("never committed") == []
    assert_consistent(db_path)


def test_threads_can_share_one_store(store: SessionStore) -> None:
    sid = store.create_session("gateway", "m")
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(50):
                store.add_message(sid, "user", f"thread {n} message {i}")
                store.search(f"thread {n}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == [] and store.get_session(sid).message_count == 200
