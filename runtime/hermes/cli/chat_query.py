"""The question of a one-shot chat (``hermes -z TEXT``, ``hermes chat -q TEXT``): taken
from the command line or standard input (``-``), and checked before anything starts."""

from __future__ import annotations

import shlex
from typing import TextIO

from hermes.errors import UserError

OVERRIDE_FORMS = "KEY=VALUE, group=option, +KEY=VALUE, ~KEY"


def is_override(word: str) -> bool:
    """Whether ``word`` has the form of a Hydra override (``OVERRIDE_FORMS``)."""
    return "=" in word or (word.startswith("~") and len(word) > 1)


def read_question(query: str | None, flag: str, overrides: list[str], stdin: TextIO
                  ) -> str | None:
    """The question to ask once (None: interactive chat), or ``UserError``.

    Words after the question that are not overrides are the rest of an unquoted
    question (``hermes -z what is up``): the user is told to quote it. ``-`` reads the
    question from ``stdin``; an empty or blank question is refused.
    """
    stray = [word for word in overrides if not is_override(word)]
    if stray:
        raise UserError(f"{stray[0]!r} is not an override ({OVERRIDE_FORMS}); "
                        + _quote_hint(query, flag, stray))
    if query == "-":
        query = stdin.read().strip()
        if not query:
            raise UserError(f"{flag} - read no question from standard input")
    if query is not None and not query.strip():
        raise UserError(f"{flag} needs the question to ask")
    return query


def _quote_hint(query: str | None, flag: str, stray: list[str]) -> str:
    if query is None:
        return f"to ask one question: hermes -z {_quoted(' '.join(stray))}"
    command = "hermes -z" if flag == "-z" else f"hermes chat {flag}"
    return f"quote the question: {command} {_quoted(' '.join([query, *stray]))}"


def _quoted(text: str) -> str:
    """``text`` as one shell word: in double quotes unless the shell would expand it."""
    return shlex.quote(text) if any(c in text for c in '"$`\\!') else f'"{text}"'
