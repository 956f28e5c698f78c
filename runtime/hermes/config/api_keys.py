"""A key for every API server: enabling one whose key is unset creates a random key.

An ``api_server`` platform always requires its key (``token: ${secret:API_SERVER_KEY}``),
on loopback too: a web page (DNS rebinding) or a sandboxed command could otherwise drive
the agent. ``hermes config set platforms api_server`` and ``hermes gateway run`` call
``create_missing_keys``: a secret the platform references that is set nowhere is written
to the profile's ``.env`` (0600, through the same editor as ``config set``), like
Jupyter's token. The key itself is never printed; the note says where to read it.
"""

from __future__ import annotations

import re
import secrets
import shlex
from collections.abc import Mapping
from typing import Any

from hermes.config.dotenv_edit import set_secret
from hermes.home import Home

KEY_BYTES = 24
"""Random bytes of a created key (48 hex digits, as ``openssl rand -hex 24``)."""
_SECRET_REF = re.compile(r"^\$\{secret:([A-Za-z_][A-Za-z0-9_]*)\}$")


def unset_key_names(config: Any, raw: Mapping[str, Any]) -> dict[str, str]:
    """``{platform: secret name}`` of enabled API servers whose key is empty and given by
    reference (``${secret:NAME}``); ``config`` is a validated ``HermesConfig``."""
    names: dict[str, str] = {}
    enabled = (raw.get("platforms") or {}).get("enabled") or {}
    for name, platform in config.platforms.enabled.items():
        if platform.kind != "api_server" or platform.token:
            continue
        match = _SECRET_REF.match(str((enabled.get(name) or {}).get("token") or ""))
        if match:
            names[name] = match.group(1)
    return names


def create_missing_keys(home: Home, environ: Mapping[str, str], config: Any,
                        raw: Mapping[str, Any]) -> list[str]:
    """Write a random key for each unset API server key (not one the environment sets, even
    empty: it would win over ``.env``); one note line per key created."""
    notes = []
    for name in dict.fromkeys(unset_key_names(config, raw).values()):
        if name in environ:
            continue
        set_secret(home.env_file, name, secrets.token_hex(KEY_BYTES))
        notes.append(created_note(home, name))
    return notes


def created_note(home: Home, name: str) -> str:
    """One line: where the key is and the command that prints it (never the key)."""
    return (f"note: created {name} in {home.env_file} (clients send it as `Authorization: "
            f"Bearer <key>`); read it with `sed -n 's/^{name}=//p' "
            f"{shlex.quote(str(home.env_file))}`")
