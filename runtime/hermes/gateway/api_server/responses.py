"""Stored ``/v1/responses`` objects: one JSON file each in the profile's home (0600).

A stored response remembers its session, so ``previous_response_id`` continues
that conversation. ``store: false`` responses are never written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hermes.fsutil import atomic_write

RESPONSE_ID = re.compile(r"^resp_[0-9a-f]{32}$")


class ResponseStore:
    def __init__(self, directory: Path):
        self.directory = directory

    def save(self, response: dict[str, Any], session_id: str) -> None:
        record = {"session_id": session_id, "response": response}
        atomic_write(self.directory / f"{response['id']}.json", json.dumps(record), mode=0o600)

    def load(self, response_id: str) -> dict[str, Any] | None:
        record = self._record(response_id)
        return record["response"] if record else None

    def session_of(self, response_id: str) -> str | None:
        record = self._record(response_id)
        return str(record["session_id"]) if record else None

    def _record(self, response_id: str) -> dict[str, Any] | None:
        if not RESPONSE_ID.match(response_id):  # never a path outside the directory
            return None
        try:
            data: dict[str, Any] = json.loads(
                (self.directory / f"{response_id}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data
