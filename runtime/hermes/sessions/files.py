"""Files a session keeps besides its rows (e.g. ``web_extract``'s originals of condensed
pages): one directory per session, ``<home>/sessions/files/<id>/``, deleted with the
session (``SessionStore.delete_session`` and ``prune``)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from pathlib import Path


def session_files_dir(home_path: Path, session_id: str) -> Path:
    """Where session ``session_id`` of the home at ``home_path`` keeps its files."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", session_id)[:120].lstrip(".") or "_"
    return home_path / "sessions" / "files" / safe


def forget_session_files(home_path: Path, session_ids: Iterable[str]) -> None:
    """Delete the files of sessions that are gone."""
    for session_id in session_ids:
        shutil.rmtree(session_files_dir(home_path, session_id), ignore_errors=True)
