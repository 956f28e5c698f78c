"""The dashboard's sections, in the nav's order: the one table of them.

A section with a ``module`` is a page: ``hermes.dashboard.pages.<module>`` holds a
``router`` (a FastAPI ``APIRouter``) whose routes live under ``/p/{profile}/<name>`` and
take ``Page`` (``hermes.dashboard.page.open_page``) as a dependency; its templates are
``templates/<name>/*.html``, extending ``base.html``. A section without one is listed as
"not yet". ``app.create_app`` includes every page's router.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    """One entry of the nav."""

    name: str
    """The URL segment (``/p/<profile>/<name>``) and the templates' directory."""
    title: str
    """What the nav shows."""
    module: str | None = None
    """The page's module under ``hermes.dashboard.pages``; None: not built yet."""


SECTIONS: tuple[Section, ...] = (
    Section("chat", "Chat", module="chat"),
    Section("sessions", "Sessions", module="sessions"),
    Section("skills", "Skills", module="skills"),
    Section("memory", "Memory", module="memory"),
    Section("cron", "Cron", module="cron"),
    Section("gateway", "Gateway", module="gateway"),
    Section("config", "Config", module="config"),
    Section("experiments", "Experiments", module="experiments"),
    Section("profiles", "Profiles", module="profiles"),
)


def built() -> tuple[Section, ...]:
    """The sections that are pages."""
    return tuple(section for section in SECTIONS if section.module)


START = "profiles"
"""Where a profile's dashboard opens (the printed URL, ``/``, the brand link): the
profiles' summary, whichever other pages are built."""


def first_page() -> Section:
    """Where a profile's dashboard opens: ``START`` if built, else the first built section."""
    return next((s for s in built() if s.name == START), built()[0])
