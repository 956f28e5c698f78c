"""The Skills page: the profile's skills (source, uses, new/changed marks, pinned, stale,
read-only), the curator's state, the learning log; a skill's SKILL.md and files, edited
in the page; create, pin, unpin; install from a path or git URL, the scan shown before
the user confirms.

Every write goes through the code ``hermes skills ...`` runs (``hermes.skills.editing``,
``hermes.skills.install``): validated and scanned the same way, refused with the same
one-line message, which the page shows with the scan's findings."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, HTTPException
from fastapi.responses import HTMLResponse, RedirectResponse

from hermes.dashboard.page import Page, open_page
from hermes.errors import UserError
from hermes.skills.guard import Finding, scan_content
from hermes.skills.model import SKILL_FILE, Skill
from hermes.skills.store import SkillsStore

router = APIRouter()
NEW_DAYS = 7
"""Skills created or changed within this many days are marked (``skills list --days``)."""
LOG_LINES = 50


@dataclass(frozen=True)
class SkillRow:
    """One row of the skills table."""

    skill: Skill
    source: str
    uses: int
    last_used: float | None
    marks: list[str]
    """new/changed (by whom), pinned, stale, read-only."""


def store_of(page: Page) -> SkillsStore:
    """The profile's skills as ``hermes skills`` sees them (the config layers' settings)."""
    from hermes.skills.settings import management_store

    return management_store(page.home, page.views.manager.environ)


@router.get("/p/{profile}/skills", response_class=HTMLResponse)
def skills_page(page: Annotated[Page, Depends(open_page)]) -> HTMLResponse:
    return index_page(page)


def index_page(page: Page, code: int = 200, **values: Any) -> HTMLResponse:
    from hermes.dashboard.pages.skills_state import curator_state, learning_log

    store = store_of(page)
    values = {"create_error": None, "create_findings": [], "install_error": None,
              "draft": {"name": "", "category": "", "description": ""}, **values}
    return page.render("skills/index.html", "skills", code=code, rows=rows_of(store),
                       withheld=[p for p in store.scan().problems if p.field == "content"],
                       archived=store.archived(), curator=curator_state(page, store),
                       log=learning_log(page, LOG_LINES), days=NEW_DAYS, **values)


def rows_of(store: SkillsStore) -> list[SkillRow]:
    from hermes.skills.lockfile import lock_or_none

    records = store.records()
    locked = lock_or_none(store.directory, lambda _: None)
    changes = {c.name: c for c in store.changed_since(time.time() - NEW_DAYS * 86400)}
    rows = []
    for skill in store.scan().skills:
        record = store.usage(skill.name)
        marks = [f"{c.kind} by {c.by or '?'}" for c in [changes.get(skill.name)]
                 if c is not None and skill.writable]
        marks += [m for m, on in (("pinned", record.pinned),
                                  ("stale", record.stale_since is not None),
                                  ("read-only", not skill.writable)) if on]
        source = "installed" if skill.writable and skill.name in locked else skill.origin
        rows.append(SkillRow(skill, source, record.uses if skill.name in records else 0,
                             record.last_used, marks))
    return rows


@router.get("/p/{profile}/skills/{name}", response_class=HTMLResponse)
def skill_page(page: Annotated[Page, Depends(open_page)], name: str,
               file: str | None = None) -> HTMLResponse:
    return _skill(page, name, file)


def _skill(page: Page, name: str, file: str | None, code: int = 200,
           **values: Any) -> HTMLResponse:
    from hermes.skills.lockfile import lock_or_none

    store = store_of(page)
    try:
        skill = store.withheld(name) or store.get(name)
        text = store.read(name, file, to_edit=skill.writable)
    except UserError as exc:
        return page.render("skills/missing.html", "skills", code=404, name=name,
                           error=str(exc))
    values = {"error": None, "findings": [], "saved": False, "text": text, **values}
    return page.render("skills/skill.html", "skills", code=code, skill=skill,
                       file=file or SKILL_FILE, files=store.files(name),
                       record=store.usage(name),
                       installed=lock_or_none(store.directory, lambda _: None).get(name),
                       **values)


@router.post("/p/{profile}/skills/{name}/edit", response_class=HTMLResponse)
def edit_skill(page: Annotated[Page, Depends(open_page)], name: str,
               text: Annotated[str, Form()], file: Annotated[str, Form()] = SKILL_FILE
               ) -> HTMLResponse:
    """Save an edit as ``hermes skills edit`` does; a refusal shows the message and every
    finding of the scan, and writes nothing."""
    from hermes.skills.editing import save_edit

    text = text.replace("\r\n", "\n")
    try:
        save_edit(store_of(page), name, None if file == SKILL_FILE else file, text, by="user")
    except UserError as exc:
        return _skill(page, name, file, 400, error=str(exc), text=text,
                      findings=findings_in(file, text))
    return _skill(page, name, file, saved=True)


def findings_in(file: str, text: str) -> list[Finding]:
    """What the skill scan finds in ``text`` (the same scan as every skill write)."""
    return scan_content(file, text.encode("utf-8"))


@router.post("/p/{profile}/skills/{name}/pin", response_model=None)
def pin_skill(page: Annotated[Page, Depends(open_page)], name: str) -> RedirectResponse:
    return _pinned(page, name, pin=True)


@router.post("/p/{profile}/skills/{name}/unpin", response_model=None)
def unpin_skill(page: Annotated[Page, Depends(open_page)], name: str) -> RedirectResponse:
    return _pinned(page, name, pin=False)


def _pinned(page: Page, name: str, *, pin: bool) -> RedirectResponse:
    """Pin or unpin through the store, as ``hermes skills pin|unpin`` do; back to the skill."""
    store = store_of(page)
    try:
        (store.pin if pin else store.unpin)(name, by="user")
    except UserError as exc:  # no such skill: a page, not an internal error
        raise HTTPException(404, str(exc)) from exc
    return RedirectResponse(f"/p/{page.profile}/skills/{quote(name)}", status_code=303)


@router.post("/p/{profile}/skills", response_model=None)
def create_skill(page: Annotated[Page, Depends(open_page)], name: Annotated[str, Form()],
                 description: Annotated[str, Form()] = "",
                 category: Annotated[str, Form()] = "", text: Annotated[str, Form()] = ""
                 ) -> HTMLResponse | RedirectResponse:
    """``hermes skills create``: the SKILL.md given, else the template with the
    description; validated and scanned."""
    from hermes.skills.editing import skill_template

    draft = {"name": name, "category": category, "description": description}
    content = text.replace("\r\n", "\n") or (skill_template(name, description)
                                             if description else "")
    try:
        if not content:
            raise UserError("give a description (a template is written) or a whole SKILL.md")
        store_of(page).create(name, content, category=category or None, by="user")
    except UserError as exc:
        return index_page(page, 400, create_error=str(exc), draft=draft,
                      create_findings=findings_in(SKILL_FILE, content) if content else [])
    return RedirectResponse(f"/p/{page.profile}/skills/{name}", status_code=303)


def _include_install() -> None:
    from hermes.dashboard.pages.skills_install import router as install_router

    router.include_router(install_router)


_include_install()
