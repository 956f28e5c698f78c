"""Errors of the session store, split like ``hermes.errors``: user mistakes vs. failures."""

from __future__ import annotations

from hermes.errors import HermesError, UserError


class SessionError(UserError):
    """A session operation the user asked for cannot be done (exit code 2)."""


class SessionNotFound(SessionError):
    """No session has this id (or id prefix)."""

    def __init__(self, session_id: str, *, hint: str = "see `hermes sessions list`"):
        self.session_id = session_id
        super().__init__(f'no session matches "{session_id}"; {hint}')


class AmbiguousSessionId(SessionError):
    """An id prefix matches more than one session."""

    def __init__(self, prefix: str, candidates: list[str]):
        self.prefix = prefix
        self.candidates = candidates
        shown = ", ".join(candidates[:5]) + (", ..." if len(candidates) > 5 else "")
        super().__init__(f'session id prefix "{prefix}" is ambiguous: it matches {shown}; '
                         "give more characters")


class InvalidDuration(SessionError):
    """A duration such as ``30d`` could not be parsed."""

    def __init__(self, text: str, reason: str = "expected a number and a unit"):
        self.text = text
        super().__init__(f'invalid duration "{text}": {reason}, e.g. 30d, 12h, 90m, 2w or '
                         "1d12h (units: s, m, h, d, w)")


class SessionStoreBusy(HermesError):
    """The database stayed locked by other writers for longer than the retry budget."""
