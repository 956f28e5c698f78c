"""Secrets: the home's ``.env`` file (0600), lookups, and redaction.

Config refers to a secret by interpolation, ``${secret:OPENAI_API_KEY}``; the
value comes from the home's ``.env`` first, then the process environment. A
secret's value is never printed or logged: ``redact`` replaces it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes.fsutil import atomic_write

SECRET_NAME = re.compile(r".*_(API_KEY|TOKEN|SECRET)$", re.IGNORECASE)
# Config keys whose values are secrets even when written literally.
SECRET_KEY = re.compile(r"(^|_)(api_key|token|secret|password)$", re.IGNORECASE)
REDACTED = "<redacted>"


def is_secret_name(name: str) -> bool:
    """True for names like ``OPENAI_API_KEY``, ``TELEGRAM_BOT_TOKEN``, ``X_SECRET``."""
    return bool(SECRET_NAME.fullmatch(name))


def is_secret_key(key: str) -> bool:
    """True for config keys that hold secrets (``api_key``, ``bot_token``...)."""
    return bool(SECRET_KEY.search(key.rsplit(".", 1)[-1]))


def read_env_file(path: Path) -> dict[str, str]:
    """Parse a ``.env`` file as python-dotenv does; a missing file is empty.

    Lines it cannot parse are skipped quietly here: ``hermes config set`` and
    ``config validate`` report them with the file and line number.
    """
    if not path.exists():
        return {}
    from dotenv.main import resolve_variables
    from dotenv.parser import parse_stream

    with path.open(encoding="utf-8") as stream:
        raw = [(b.key, b.value) for b in parse_stream(stream) if b.key is not None]
    return {k: v for k, v in resolve_variables(raw, override=True).items() if v is not None}


def write_env_file(path: Path, values: Mapping[str, str]) -> None:
    """Write ``values`` as a ``.env`` file, atomically, mode 0600."""
    lines = [f"{name}={shlex.quote(value)}" for name, value in sorted(values.items())]
    atomic_write(path, "\n".join(lines) + ("\n" if lines else ""), mode=0o600)


class Secrets:
    """The secrets one home can see: its ``.env`` over the process environment."""

    def __init__(self, env_file: Path, environ: Mapping[str, str]):
        self._file = read_env_file(env_file)
        self._environ = environ

    def get(self, name: str) -> str | None:
        value = self._file.get(name) or self._environ.get(name)
        return value or None


def redact_tree(data: Any, *, key: str = "") -> Any:
    """Copy of a plain config tree with secret-keyed values replaced."""
    if isinstance(data, dict):
        return {k: redact_tree(v, key=str(k)) for k, v in data.items()}
    if isinstance(data, list):
        return [redact_tree(v, key=key) for v in data]
    shown_safely = is_reference(data) or data == REDACTED or str(data).startswith("<unset: ")
    if data not in (None, "") and is_secret_key(key) and not shown_safely:
        return REDACTED
    return data


def is_reference(value: Any) -> bool:
    """True for an interpolation such as ``${secret:NAME}`` (not a secret itself)."""
    return isinstance(value, str) and value.startswith("${") and value.endswith("}")
