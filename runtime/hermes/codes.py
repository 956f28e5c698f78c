"""One-time codes a person types (pairing, identity links) and the JSON files that keep
them: 8 characters from an alphabet without 0/O/1/I/L, stored only as salted scrypt
hashes. A leaf of the foundation (standard library only)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
"""Letters and digits that cannot be mistaken for one another (no 0/O, 1/I/L)."""
CODE_LENGTH = 8


def new_code() -> tuple[str, dict[str, str]]:
    """A fresh code and what is stored of it (``hash``, ``salt``)."""
    code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
    salt = secrets.token_bytes(16)
    return code, {"hash": hash_code(code, salt), "salt": salt.hex()}


def normalise_code(code: str) -> str:
    """The code as stored: upper case, without spaces or dashes people add."""
    return re.sub(r"[\s-]", "", code).upper()


def hash_code(code: str, salt: bytes) -> str:
    # scrypt, not one round of SHA-256: a copied file must not give the codes away
    return hashlib.scrypt(code.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32).hex()


def is_code(code: str) -> bool:
    """Whether ``code`` could be one (checked before any hashing)."""
    return len(code) == CODE_LENGTH and all(c in ALPHABET for c in code)


def code_matches(code: str, stored: dict[str, Any]) -> bool:
    """Whether ``code`` is the one ``stored`` (``hash``, ``salt``) was made from."""
    return hmac.compare_digest(hash_code(code, bytes.fromhex(stored["salt"])), stored["hash"])


def read_json_object(path: Path, what: str, error: Callable[[str], Exception]
                     ) -> dict[str, Any]:
    """The JSON object in ``path``; an unreadable or malformed file raises ``error`` with
    one line naming it (never taken for an empty one)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise error(f"{path}: cannot read the {what} file ({exc}); fix or remove it") from exc
    if not isinstance(data, dict):
        raise error(f"{path}: not a {what} file (expected a JSON object)")
    return data
