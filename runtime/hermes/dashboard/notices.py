"""What a form's POST did, said on the page it redirects to.

The redirect carries only a key (``?done=KEY``) this dashboard issued; the text stays
here, so no link can make a page say someone's own words: an unknown key shows nothing.
The last ``KEPT`` notices are kept (a notice is read once, right after its redirect).
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
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def leave(self, text: str) -> str:
        """Keep ``text``; the key to put in the redirect's ``?done=``."""
        key = secrets.token_urlsafe(12)
        with self._lock:
            self._texts[key] = text
            while len(self._texts) > self._kept:
                self._texts.popitem(last=False)
        return key

    def said(self, key: str) -> str:
        """The text of ``key``; nothing for a key this dashboard did not issue."""
        with self._lock:
            return self._texts.get(key, "")


def notices(request: Request) -> Notices:
    """This dashboard's ``Notices`` (``create_app`` makes them)."""
    found: Notices = request.app.state.notices
    return found


def leave(request: Request, text: str) -> str:
    return notices(request).leave(text)


def done(request: Request) -> str:
    """The text of the request's ``?done=`` key (empty without one, or for a forged one)."""
    return notices(request).said(request.query_params.get("done", ""))
