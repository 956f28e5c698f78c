"""Installing skills from the Skills page: ``hermes skills install``'s steps split over
two requests. The first fetches the source and shows every skill in it with the scan's
findings; the second (the user's yes) fetches it again, refuses if any skill changed since
it was shown, and installs through the same code as the CLI (``hermes.skills.install``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form
from fastapi.responses import HTMLResponse

from hermes.dashboard.page import Page, open_page
from hermes.errors import UserError
from hermes.skills.install import Candidate

router = APIRouter()


@router.post("/p/{profile}/skills/install", response_class=HTMLResponse)
def scan_source(page: Annotated[Page, Depends(open_page)], source: Annotated[str, Form()],
                category: Annotated[str, Form()] = "") -> HTMLResponse:
    """The skills ``source`` holds, validated and scanned; nothing is installed yet."""
    from hermes.dashboard.pages.skills import index_page, store_of
    from hermes.skills.install import Source, fetch, find_candidates
    from hermes.skills.lockfile import content_hash

    try:
        with fetch(Source.parse(source.strip())) as fetched:
            candidates = find_candidates(fetched, store_of(page), category or None)
            hashes = [content_hash(c.directory) for c in candidates]
    except UserError as exc:
        return index_page(page, 400, install_error=str(exc))
    return page.render("skills/install.html", "skills", source=source.strip(),
                       category=category, candidates=list(zip(candidates, hashes, strict=True)),
                       installable=any(not (c.problem or c.skip) for c in candidates),
                       flagged=any(c.findings for c in candidates),
                       replacing=any(c.replaces for c in candidates), installed=None,
                       error=None)


@router.post("/p/{profile}/skills/install/confirm", response_class=HTMLResponse)
def confirm_install(page: Annotated[Page, Depends(open_page)], source: Annotated[str, Form()],
                    shown: Annotated[list[str], Form()], category: Annotated[str, Form()] = "",
                    force: Annotated[str, Form()] = "") -> HTMLResponse:
    """Install what was shown (the user said yes, findings included); ``force`` also
    replaces this profile's skills of the same names."""
    from hermes.dashboard.pages.skills import store_of
    from hermes.skills.install import Source, fetch, find_candidates, install_ready, refusals_of
    from hermes.skills.lockfile import content_hash, read_lock

    store = store_of(page)
    try:
        read_lock(store.directory)
        with fetch(Source.parse(source)) as fetched:
            candidates = find_candidates(fetched, store, category or None)
            _refuse_changed(candidates, [content_hash(c.directory) for c in candidates], shown)
            refusals = refusals_of(candidates, yes=False, force=bool(force))
            ready = [c for c in candidates if not c.skip and id(c) not in refusals]
            installed = install_ready(store, ready, fetched, refusals)
    except UserError as exc:
        installed, refusals = [], {0: str(exc)}
    return page.render("skills/install.html", "skills", source=source, category=category,
                       candidates=[], installable=False, flagged=False, replacing=False,
                       installed=installed, error="; ".join(refusals.values()) or None)


def _refuse_changed(candidates: list[Candidate], hashes: list[str], shown: list[str]) -> None:
    """Refuse when the source is not what the user saw scanned."""
    if sorted(hashes) != sorted(shown):
        raise UserError("the source changed since it was scanned; nothing installed — "
                        "scan it again")
