"""The Memory page: a profile's SOUL.md, MEMORY.md and USER.md, and its fact store when
``memory.providers`` enables it.

MEMORY.md and USER.md are lists of entries, each with its size limit: the page lists
them, each entry edited or removed on its own, a new one added below. Every write goes
through ``hermes.memory.userfiles`` (the ``memory`` tool's operations and scans; SOUL.md
through the same threat scan): a refusal shows the tool's one line and what the scan
found, keeps the text in the page and writes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Depends, Form
from fastapi.responses import HTMLResponse, RedirectResponse

from hermes.dashboard.page import Page, open_page
from hermes.errors import UserError
from hermes.memory.edits import FILES, MemoryEditError, Target, char_count, refusal_line
from hermes.memory.scan import Finding, find_threat
from hermes.memory.store import TITLES, EntryStore

if TYPE_CHECKING:
    from hermes.config.schema import MemoryConfig
    from hermes.memory.factstore import FactStore

router = APIRouter()
FACTS_SHOWN = 200
"""The newest facts the page lists."""


@dataclass(frozen=True)
class EntryFile:
    """MEMORY.md or USER.md as the page shows it."""

    target: Target
    file: str
    title: str
    entries: list[tuple[str, Finding | None]]
    """Each entry and what the threat scan finds in it (an entry edited in by hand)."""
    usage: str


@dataclass(frozen=True)
class Draft:
    """The text of a refused edit, kept in the form it came from."""

    target: str
    entry: str
    """The stored entry it edits; '' for a new one, ``soul`` for SOUL.md."""
    text: str
    error: str
    findings: list[Finding]


def settings_of(page: Page) -> MemoryConfig:
    """The profile's composed ``memory.*`` (raises ``UserError`` if it does not compose)."""
    from hermes.config import compose_config

    return compose_config(page.home, page.views.manager.environ).config.memory


@router.get("/p/{profile}/memory", response_class=HTMLResponse)
def memory_page(page: Annotated[Page, Depends(open_page)]) -> HTMLResponse:
    return render(page)


def render(page: Page, code: int = 200, draft: Draft | None = None,
           saved: str | None = None) -> HTMLResponse:
    from hermes.memory.userfiles import entry_store

    values: dict[str, Any] = {"problem": None, "files": [], "facts": None, "backend": None}
    try:
        settings = settings_of(page)
    except UserError as exc:
        values["problem"] = str(exc)
    else:
        store = entry_store(page.home, settings)
        values.update(files=[entry_file(store, target) for target in FILES],
                      backend=settings.backend, facts=facts_of(page, settings))
    try:
        soul = page.home.soul_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        soul = ""
    if draft is not None and draft.target == "soul":
        soul = draft.text
    return page.render("memory/index.html", "memory", code=code, soul=soul, draft=draft,
                       saved=saved, **values)


def entry_file(store: EntryStore, target: Target) -> EntryFile:
    entries = store.entries(target)
    return EntryFile(target, FILES[target], TITLES[target],
                     [(entry, find_threat(entry)) for entry in entries],
                     f"{char_count(entries):,}/{store.limits[target]:,} chars")


def fact_store(page: Page, settings: MemoryConfig) -> FactStore | None:
    """The profile's fact store if ``memory.providers`` enables it."""
    from hermes.memory.factstore import FactStore
    from hermes.memory.service import make_provider

    if "factstore" not in settings.providers:
        return None
    store = make_provider("factstore", page.home, settings)
    return store if isinstance(store, FactStore) else None


def facts_of(page: Page, settings: MemoryConfig) -> dict[str, Any] | None:
    """The fact store's size and newest facts, or None when it is not enabled."""
    store = fact_store(page, settings)
    if store is None:
        return None
    if not store.path.exists():
        return {"count": 0, "latest": []}
    return {"count": store.count(), "latest": store.latest(FACTS_SHOWN)}


def _text(value: str) -> str:
    return value.replace("\r\n", "\n")


@router.post("/p/{profile}/memory/entries", response_class=HTMLResponse)
def edit_entry_form(page: Annotated[Page, Depends(open_page)],
                    action: Annotated[Literal["add", "replace", "remove"], Form()],
                    target: Annotated[Target, Form()], entry: Annotated[str, Form()] = "",
                    text: Annotated[str, Form()] = "") -> HTMLResponse:
    """Add, replace or remove one entry as the ``memory`` tool would."""
    from hermes.memory.userfiles import edit_entry, entry_store

    entry, text = _text(entry), _text(text)
    try:
        outcome = edit_entry(entry_store(page.home, settings_of(page)), action, target,
                             entry=entry, text=text)
    except (MemoryEditError, UserError) as exc:
        line = refusal_line(exc) if isinstance(exc, MemoryEditError) else str(exc)
        found = find_threat(text) if action != "remove" else None
        return render(page, 400, Draft(target, entry if action != "add" else "", text, line,
                                       [found] if found else []))
    return render(page, saved="; ".join(outcome.notes))


@router.post("/p/{profile}/memory/soul", response_class=HTMLResponse)
def edit_soul(page: Annotated[Page, Depends(open_page)],
              text: Annotated[str, Form()] = "") -> HTMLResponse:
    """Write SOUL.md if the memory threat scan passes it."""
    from hermes.memory.userfiles import save_soul

    text = _text(text)
    try:
        save_soul(page.home, text)
    except MemoryEditError as exc:
        found = find_threat(text)
        return render(page, 400, Draft("soul", "soul", text, refusal_line(exc),
                                       [found] if found else []))
    return render(page, saved="SOUL.md saved; new sessions start with it")


@router.post("/p/{profile}/memory/facts/{fact_id}/forget", response_model=None)
def forget_fact(page: Annotated[Page, Depends(open_page)], fact_id: int
                ) -> HTMLResponse | RedirectResponse:
    """Delete one fact, as the ``fact_forget`` tool does."""
    try:
        store = fact_store(page, settings_of(page))
    except UserError as exc:
        return render(page, 400, Draft("facts", "", "", str(exc), []))
    if store is not None and store.path.exists():
        store.forget(fact_id)
    return RedirectResponse(f"/p/{page.profile}/memory#facts", status_code=303)
