"""What a form's POST did, said on the page it redirects to.

The redirect carries only a key (``?done=KEY``) this dashboard issued; the text stays
here, so no link can make a page say someone's own words: an unknown key shows nothing,
and a key shows its text only to the browser session whose POST left it. The last
``KEPT`` notices are kept (a notice is read once, right after its redirect).
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict

from fastapi import Request

KEPT = 200


class Notices:
    """The texts of the notices issued lately, by key."""

    def __init__(self, kept: int = KEPT):
        self._kept = kept
        self._texts: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._lock = threading.Lock()

    def leave(self, owner: str, text: str) -> str:
        """Keep ``text`` for ``owner``; the key to put in the redirect's ``?done=``."""
        key = secrets.token_urlsafe(12)
        with self._lock:
            self._texts[key] = (owner, text)
            while len(self._texts) > self._kept:
                self._texts.popitem(last=False)
        return key

    def said(self, owner: str, key: str) -> str:
        """The text of ``key``; nothing for a key this dashboard did not issue to ``owner``."""
        with self._lock:
            found, text = self._texts.get(key, ("", ""))
        return text if found == owner else ""


def notices(request: Request) -> Notices:
    """This dashboard's ``Notices`` (``create_app`` makes them)."""
    found: Notices = request.app.state.notices
    return found


def leave(request: Request, text: str) -> str:
    return notices(request).leave(_owner(request), text)


def done(request: Request) -> str:
    """The text of the request's ``?done=`` key (empty without one, or for a forged one)."""
    return notices(request).said(_owner(request), request.query_params.get("done", ""))


def _owner(request: Request) -> str:
    """The request's browser session (every page's request has one: the guard checks)."""
    session = getattr(request.state, "session", None)
    return str(session.id) if session is not None else ""
