"""The Sessions page: a profile's sessions (filtered by source, profile and date, paged
by cursor), full-text search with highlighted snippets, a session's transcript with its
tool calls folded, its lineage tree, cost and tokens, export, rename and delete.

The data is ``hermes.dashboard.queries`` (the session store, as ``hermes sessions ...``
uses it); this module only reads the request and renders. A profile without a
``state.db`` has no sessions: nothing here creates one. Text from the database is
rendered escaped (search snippets come as plain-text parts; the template marks them).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, Form, HTTPException
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from hermes.dashboard import queries
from hermes.dashboard.notices import done, leave
from hermes.dashboard.page import Page, open_page
from hermes.sessions import SessionError, SessionNotFound, SessionStore
from hermes.sessions.export import cost

router = APIRouter()
PAGE_SIZE = 50
SEARCH_LIMIT = 30
TRANSCRIPT_PART = 200
"""Messages a session's page shows at once; "Later messages" brings the next part."""
ALL = "all"
"""The profile filter's value for every profile the session sees (root token)."""
EXPORTS = {"jsonl": "application/x-ndjson", "md": "text/markdown"}


@dataclass(frozen=True)
class Filters:
    """What the list shows: the form's fields as the request gave them."""

    q: str = ""
    source: str = ""
    of: str = ""
    """A profile name, ``ALL``, or empty: the page's profile."""
    since: str = ""
    """``YYYY-MM-DD``: sessions started on that day (local time) or later."""
    until: str = ""
    """``YYYY-MM-DD``: sessions started on that day or earlier."""

    def query(self, **extra: str) -> str:
        """The filters (and ``extra``) as a URL query, empty fields left out."""
        values = {**self.__dict__, **extra}
        return urlencode({k: v for k, v in values.items() if v})


@dataclass(frozen=True)
class Hit:
    """A search hit and the profile whose store it came from."""

    found: queries.Found
    profile: str


def _filters(q: str = "", source: str = "", of: str = "", since: str = "",
             until: str = "") -> Filters:
    return Filters(q.strip(), source.strip(), of.strip(), since.strip(), until.strip())


@router.get("/p/{profile}/sessions", response_class=HTMLResponse)
def sessions_page(page: Annotated[Page, Depends(open_page)],
                  filters: Annotated[Filters, Depends(_filters)], cursor: str = "",
                  ) -> HTMLResponse:
    values: dict[str, Any] = {"filters": filters, "notice": done(page.request), "error": None,
                              "hits": None, "listing": None, "cursor": cursor,
                              "scopes": _scopes(page)}
    try:
        names = _profiles_of(page, filters.of)
        with _stores(page, names) as stores:
            if filters.q:
                values["hits"] = _search(stores, filters)
            else:
                values["listing"] = _listing(stores, filters, cursor)
    except SessionError as exc:
        values["error"] = str(exc)
    return _status(page.render("sessions/index.html", "sessions", money=cost, **values),
                   values["error"])


@router.get("/p/{profile}/sessions-more", response_class=HTMLResponse)
def more_rows(page: Annotated[Page, Depends(open_page)],
              filters: Annotated[Filters, Depends(_filters)], cursor: str) -> HTMLResponse:
    """The next page's rows and its own "more" button (htmx swaps them in)."""
    try:
        with _stores(page, _profiles_of(page, filters.of)) as stores:
            listing = _listing(stores, filters, cursor)
    except SessionError as exc:
        raise HTTPException(400, str(exc)) from exc
    return page.views.render("sessions/rows.html", profile=page.profile, filters=filters,
                             listing=listing, money=cost, scopes=_scopes(page))


@router.get("/p/{profile}/sessions/{session_id}", response_class=HTMLResponse)
def session_page(page: Annotated[Page, Depends(open_page)], session_id: str,
                 error: str = "", after: int = 0, at: int = 0) -> HTMLResponse:
    """The session's facts, lineage and transcript: its first part, or the part from
    message ``after`` on; ``at`` (a search hit's message) past the first part starts the
    part there."""
    with _store_or_404(page) as store, _found():
        shown = queries.transcript(store, session_id, after=after, limit=TRANSCRIPT_PART)
        if at and shown.next_after is not None and at > shown.next_after:
            after = at - 1
            shown = queries.transcript(store, session_id, after=after, limit=TRANSCRIPT_PART)
        tree = queries.lineage(store, shown.session.id)
    return _status(page.render("sessions/session.html", "sessions", money=cost,
                               transcript=shown, tree=tree, error=error, after=after), error)


@router.get("/p/{profile}/sessions/{session_id}/messages", response_class=HTMLResponse)
def later_messages(page: Annotated[Page, Depends(open_page)], session_id: str, after: int
                   ) -> HTMLResponse:
    """The transcript's next part and its own "Later messages" link (htmx swaps it in)."""
    with _store_or_404(page) as store, _found():
        shown = queries.transcript(store, session_id, after=after, limit=TRANSCRIPT_PART)
    return page.views.render("sessions/entries.html", profile=page.profile, transcript=shown)


@router.get("/p/{profile}/sessions/{session_id}/export")
def export_session(page: Annotated[Page, Depends(open_page)], session_id: str,
                   format: str = "jsonl") -> Response:
    """The session as ``hermes sessions export --format FORMAT`` writes it, to download."""
    if format not in EXPORTS:
        raise HTTPException(400, f'unknown export format "{format}"; give jsonl or md')
    with _store_or_404(page) as store, _found():
        full_id = store.resolve_id(session_id)
        text = queries.export(store, full_id, format)  # type: ignore[arg-type]
    name = f"session-{full_id}.{format}"
    return Response(text, media_type=f"{EXPORTS[format]}; charset=utf-8", headers={
        "content-disposition": f'attachment; filename="{name}"', "cache-control": "no-store"})


@router.post("/p/{profile}/sessions/{session_id}/rename")
def rename_session(page: Annotated[Page, Depends(open_page)], session_id: str,
                   title: Annotated[str, Form()] = "") -> Response:
    with _store_or_404(page) as store, _found():
        full_id = store.resolve_id(session_id)
        try:
            queries.rename(store, full_id, title)
        except SessionError as exc:
            return session_page(page, full_id, error=str(exc))
    return RedirectResponse(_session_url(page.profile, full_id), status_code=303)


@router.post("/p/{profile}/sessions/{session_id}/delete")
def delete_session(page: Annotated[Page, Depends(open_page)], session_id: str) -> Response:
    with _store_or_404(page) as store, _found():
        full_id = store.resolve_id(session_id)
        deleted = queries.delete(store, full_id)
    notice = leave(page.request, f"deleted session {full_id} ({deleted} messages)")
    return RedirectResponse(f"/p/{quote(page.profile)}/sessions?{urlencode({'done': notice})}",
                            status_code=303)


def _status(response: HTMLResponse, error: str | None) -> HTMLResponse:
    """A page showing a refusal answers 400."""
    if error:
        response.status_code = 400
    return response


def _session_url(profile: str, session_id: str) -> str:
    return f"/p/{quote(profile)}/sessions/{quote(session_id)}"


def _scopes(page: Page) -> list[str]:
    """The profile filter's choices: every profile the session sees, if more than one."""
    visible = page.views.visible(page.access)
    return visible if len(visible) > 1 else []


def _profiles_of(page: Page, of: str) -> list[str]:
    """The profiles the filter ``of`` names: the page's, one the session sees, or all."""
    if not of or of == page.profile:
        return [page.profile]
    visible = page.views.visible(page.access)
    if of == ALL:
        return visible
    if of not in visible:
        raise SessionError(f'no profile "{of}" on this page; profiles: {", ".join(visible)}')
    return [of]


@contextmanager
def _stores(page: Page, names: list[str]) -> Iterator[dict[str, SessionStore]]:
    """The open stores of the profiles ``names`` that have a ``state.db``."""
    with ExitStack() as stack:
        stores = {}
        for name in names:
            path = page.views.manager.home(name).sessions_db
            if path.is_file():
                stores[name] = stack.enter_context(SessionStore(path))
        yield stores


@contextmanager
def _store_or_404(page: Page) -> Iterator[SessionStore]:
    path = page.home.sessions_db
    if not path.is_file():
        raise HTTPException(404, f"Profile {page.profile!r} has no sessions yet.")
    with SessionStore(path) as store:
        yield store


@contextmanager
def _found() -> Iterator[None]:
    """A missing session is a 404 page, other refusals a 400, each with the store's line."""
    try:
        yield
    except SessionNotFound as exc:
        raise HTTPException(404, str(exc)) from exc
    except SessionError as exc:
        raise HTTPException(400, str(exc)) from exc


def _listing(stores: dict[str, SessionStore], filters: Filters, cursor: str
             ) -> queries.SessionPage:
    if not stores:
        return queries.SessionPage([], None)
    since, until = _day(filters.since, "since"), _day(filters.until, "until", after=1)
    store: queries.Stores = stores if len(stores) > 1 else next(iter(stores.values()))
    return queries.session_page(
        store, source=filters.source or None, cursor=cursor or None, limit=PAGE_SIZE,
        since=since, until=until)


def _search(stores: dict[str, SessionStore], filters: Filters) -> list[Hit]:
    since, until = _day(filters.since, "since"), _day(filters.until, "until", after=1)
    return [Hit(found, name) for name, store in stores.items()
            for found in queries.search(store, filters.q, limit=SEARCH_LIMIT,
                                        source=filters.source or None, since=since,
                                        until=until)]


def _day(value: str, field: str, after: int = 0) -> float | None:
    """The local midnight starting ``value`` (``YYYY-MM-DD``) plus ``after`` days, or None
    for no value."""
    if not value:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise SessionError(f'{field} "{value[:40]}" is not a date; give YYYY-MM-DD') from None
    day += timedelta(days=after)
    return time.mktime(datetime.combine(day, datetime.min.time()).timetuple())


