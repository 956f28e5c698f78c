"""``hermes sessions ...``: list, show, search, export, rename, delete and prune sessions.

Thin: parse, call ``SessionStore``, render. Imports neither litellm nor docker, and
never creates ``state.db``: a profile without one simply has no sessions yet.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from hermes.cli.app import confirm, console, new_app, out, state
from hermes.hints import command
from hermes.home import Home
from hermes.sessions import (
    Session,
    SessionError,
    SessionNotFound,
    SessionStore,
)
from hermes.sessions.durations import parse_duration
from hermes.sessions.export import cost, timestamp
from hermes.sessions.images import ImageFiles
from hermes.sessions.snippets import marked_parts

app = new_app("Browse, search, export and clean up this profile's sessions (state.db).")
SHORT_ID = 12


class Format(StrEnum):
    jsonl = "jsonl"
    md = "md"


@contextmanager
def _opened(ctx: typer.Context) -> Iterator[SessionStore | None]:
    """The profile's open store, or ``None`` if it has no ``state.db`` yet."""
    path = state(ctx).home().sessions_db
    if not path.exists():
        yield None
        return
    with SessionStore(path) as store:
        yield store


def _resolve(store: SessionStore | None, session_id: str) -> tuple[SessionStore, str]:
    if store is None:
        raise SessionNotFound(session_id, hint="this profile has no sessions yet")
    return store, store.resolve_id(session_id)


def _text(value: object, style: str = "") -> Any:
    """Literal text for rich: user data must never be parsed as console markup."""
    from rich.text import Text

    return Text("" if value is None else str(value), style=style)


def _table(*columns: str) -> Any:
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for column in columns:
        table.add_column(column)
    return table


def _confirm(question: str, yes: bool) -> None:
    if not yes and not confirm(question, refusal="nothing deleted"):
        raise SessionError("not confirmed; nothing deleted")


@app.command("list")
def list_(
    ctx: typer.Context,
    source: str | None = typer.Option(None, "--source", "-s", help="Only sessions from this "
                                      "source (cli, telegram, cron, ...)."),
    limit: int = typer.Option(50, "--limit", "-n", min=1, help="How many, newest first."),
) -> None:
    """List sessions, newest first."""
    with _opened(ctx) as store:
        sessions = store.list_sessions(source=source, limit=limit) if store else []
    if not sessions:
        out("no sessions yet")
        return
    table = _table("ID", "STARTED", "SOURCE", "MODEL", "MSGS", "TOKENS", "COST", "TITLE")
    for s in sessions:
        table.add_row(s.id[:SHORT_ID], timestamp(s.started_at)[:16], _text(s.source),
                      _text(s.model or "-"), str(s.message_count),
                      str(s.input_tokens + s.output_tokens), cost(s.cost_usd),
                      _text(s.title or ""))
    console().print(table)


@app.command()
def show(ctx: typer.Context, session_id: str = typer.Argument(..., metavar="ID",
                                                               help="Session id or prefix.")
         ) -> None:
    """Show a session's details and its messages (also a run of an A/B experiment)."""
    experiment, tree = None, []
    try:
        with _opened(ctx) as opened:
            store, full_id = _resolve(opened, session_id)
            session, messages = store.get_session(full_id), store.messages(full_id)
            tree, files = store.lineage(full_id), store.images
    except SessionNotFound:
        found = _in_experiments(state(ctx).home(), session_id)
        if found is None:
            raise
        experiment, session, messages = found
        files = SessionStore(state(ctx).home().path / "experiments" / experiment
                             / "state.db").images
    rich = console()
    for key, value in _details(session):
        rich.print(_text(f"{key:9} {value}"))
    if experiment is not None:
        again = command(state(ctx).hint_profile(), f"ab show {experiment}")
        rich.print(_text(f"{'run of':9} experiment {experiment} (`{again}`)"))
    if len(tree) > 1:
        rich.print(_text("tree"))
        for depth, member in tree:
            rich.print(_text(_tree_line(depth, member, member.id == session.id)))
    for message in messages:
        rich.print()
        _print_message(rich, message, files)


def _in_experiments(home: Home, session_id: str
                    ) -> tuple[str, Session, list[dict[str, Any]]] | None:
    """A run's session, kept in its experiment's own ``state.db`` (``hermes ab``): the
    experiment's id, the session and its messages; None when no experiment has it."""
    for db in sorted(home.path.glob("experiments/*/state.db")):
        with SessionStore(db) as store:
            try:
                full_id = store.resolve_id(session_id)
            except SessionNotFound:
                continue
            return db.parent.name, store.get_session(full_id), store.messages(full_id)
    return None


def _details(session: Session) -> list[tuple[str, object]]:
    ended = timestamp(session.ended_at) + (f" ({session.end_reason})" if session.end_reason
                                           else "")
    return [("id", session.id), ("title", session.title or "-"), ("source", session.source),
            ("model", session.model or "-"), ("parent", session.parent_id or "-"),
            ("started", timestamp(session.started_at)), ("ended", ended),
            ("messages", session.message_count),
            ("tokens", f"{session.input_tokens} in, {session.output_tokens} out, "
                       f"{session.cache_read_tokens} cache read, "
                       f"{session.reasoning_tokens} reasoning"),
            ("cost", cost(session.cost_usd))]


def _tree_line(depth: int, session: Session, this: bool) -> str:
    """One session of a lineage tree: indented under its parent, with how it ended."""
    branch = "  " * depth + ("└─ " if depth else "")
    ended = session.end_reason or "running"
    here = "   ← this session" if this else ""
    return (f"  {branch}{session.id[:SHORT_ID]}  {session.source}  {session.title or '-'}"
            f"  · {ended} · {cost(session.cost_usd)}{here}")


def _print_message(rich: Any, message: dict[str, Any], files: ImageFiles) -> None:
    tool = f" ({message['tool_name']})" if message.get("tool_name") else ""
    rich.print(_text(f"{message['role']}{tool} · {timestamp(message['created_at'])}", "bold"))
    if message.get("reasoning"):
        rich.print(_text(message["reasoning"], "dim"))
    if message.get("content"):
        rich.print(_text(message["content"]))
    if message.get("tool_calls"):
        calls = json.dumps(message["tool_calls"], ensure_ascii=False)
        rich.print(_text(f"tool calls: {calls}", "cyan"))
    for name in message.get("images") or []:
        gone = "" if files.path(name).is_file() else " (no longer stored)"
        rich.print(_text(f"image: {files.path(name)}{gone}", "cyan"))


def _highlighted(snippet: str) -> Any:
    from rich.text import Text

    text = Text()
    for part, match in marked_parts(snippet.replace("\n", " ")):
        text.append(part, style="bold yellow" if match else "")
    return text


@app.command()
def search(
    ctx: typer.Context,
    query: str = typer.Argument(..., help='Words, "exact phrases", prefix* and OR; '
                                "substrings and CJK text work too."),
    limit: int = typer.Option(20, "--limit", "-n", min=1, help="At most this many hits."),
    source: str | None = typer.Option(None, "--source", "-s", help="Only this source."),
) -> None:
    """Search all messages; one hit per conversation, best match first."""
    with _opened(ctx) as store:
        hits = store.search(query, limit, source=source) if store else []
    if not hits:
        out(f"no matches for {query!r}")
        return
    table = _table("SESSION", "WHEN", "ROLE", "TITLE", "MATCH")
    for hit in hits:
        table.add_row(hit.session_id[:SHORT_ID], timestamp(hit.created_at)[:16],
                      _text(hit.role), _text(hit.title or ""), _highlighted(hit.snippet))
    console().print(table)


@app.command()
def export(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., metavar="ID", help="Session id or prefix."),
    fmt: Format = typer.Option(Format.jsonl, "--format", "-f", help="jsonl (lossless) or md."),
    output: Path | None = typer.Option(None, "--output", "-o",
                                       help="File to write (0600); standard output by default."),
) -> None:
    """Export a session as JSONL or Markdown."""
    from hermes.fsutil import atomic_write

    with _opened(ctx) as opened:
        store, full_id = _resolve(opened, session_id)
        text = store.export(full_id, fmt.value)
    if output is None:
        sys.stdout.write(text)
        return
    atomic_write(output, text, mode=0o600)  # transcripts are private
    out(f"exported session {full_id} to {output}")


@app.command()
def rename(ctx: typer.Context,
           session_id: str = typer.Argument(..., metavar="ID", help="Session id or prefix."),
           title: str = typer.Argument(..., help="New title (one line).")) -> None:
    """Give a session a title."""
    with _opened(ctx) as opened:
        store, full_id = _resolve(opened, session_id)
        store.rename(full_id, title)
        shown = store.get_session(full_id).title
    out(f"renamed session {full_id} to {shown!r}")


@app.command()
def delete(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., metavar="ID", help="Session id or prefix."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete a session and its messages (its continuations are kept)."""
    with _opened(ctx) as opened:
        store, full_id = _resolve(opened, session_id)
        count = store.get_session(full_id).message_count
        _confirm(f"Delete session {full_id} and its {count} messages?", yes)
        deleted = store.delete_session(full_id)
    out(f"deleted session {full_id} ({deleted} messages)")


@app.command()
def prune(
    ctx: typer.Context,
    older_than: str = typer.Option(..., "--older-than", help="Delete sessions with no activity "
                                   "for this long: 30d, 12h, 2w, 1d12h, ..."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete sessions with no activity for a while."""
    age = parse_duration(older_than)
    with _opened(ctx) as store:
        stale = store.prune(age, dry_run=True) if store else []
        if not store or not stale:
            out(f"no sessions without activity for {older_than}")
            return
        _confirm(f"Delete {len(stale)} sessions with no activity for {older_than}?", yes)
        pruned = store.prune(age)
    out(f"pruned {len(pruned)} sessions")
