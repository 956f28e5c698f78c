"""hermes-agent's ``hermes_state``, the piece plugins use: ``apply_wal_with_fallback``
(``hermes.sessions.connection.set_journal_mode``: WAL, else a rollback journal where the
file system cannot do WAL). hermes-agent's session database (``SessionDB``) is not offered."""

from __future__ import annotations

import sqlite3

from hermes.plugins.compat.names import unsupported
from hermes.sessions.connection import set_journal_mode

__getattr__ = unsupported("hermes_state")


def apply_wal_with_fallback(conn: sqlite3.Connection, *, db_label: str = "state.db") -> str:
    """``"wal"``, or ``"delete"`` where WAL cannot work on ``conn``'s file system."""
    return set_journal_mode(conn)
