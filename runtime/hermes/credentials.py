"""Secrets: the home's ``.env`` file (0600), lookups, and redaction.

Config refers to a secret by interpolation, ``${secret:OPENAI_API_KEY}``; the
value comes from the home's ``.env`` first, then the process environment. A
secret's value is never printed or logged: ``redact`` replaces it.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes.fsutil import atomic_write

# The one rule for which names hold secrets: an environment-style name ending in one of
# these words. It routes `hermes config set NAME` to .env, picks the environment variables
# the redactor scrubs, and the secrets doctor compares between .env and the environment.
SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "pass", "credentials")
_WORDS = "|".join(SECRET_WORDS)
SECRET_NAME = re.compile(rf"[A-Za-z_][A-Za-z0-9_]*_(?:{_WORDS})", re.IGNORECASE)
# Config keys whose values are secrets even when written literally (``api_key``, ``token``,
# ``password``); of the ``*_key`` ones only those naming a credential (``requires_key`` is
# a switch). nix/lib.nix mirrors it to refuse literal secrets in a system layer.
SECRET_KEY = re.compile(r"(?:^|_)(?:token|secret|password|passwd|pass|credentials)$"
                        r"|(?:^|_)(?:api|private|access|secret|signing)_key$|^key$",
                        re.IGNORECASE)
SECRET_NAMES_ENV = "HERMES_SECRET_NAMES"
"""Comma-separated names of environment variables holding secrets whatever their names:
the image's entrypoint lists there the variables it loaded from ``NAME_FILE`` files."""
REDACTED = "<redacted>"
MIN_SECRET_CHARS = 6
"""Shorter values would match ordinary words and numbers."""


def is_secret_name(name: str) -> bool:
    """True for environment-style names ending in ``_KEY``, ``_TOKEN``, ``_SECRET``,
    ``_PASSWORD``, ``_PASSWD``, ``_PASS`` or ``_CREDENTIALS`` (``OPENAI_API_KEY``,
    ``API_SERVER_KEY``, ``DB_PASSWORD``...): these live in ``.env``, never in config."""
    return bool(SECRET_NAME.fullmatch(name))


def is_secret_key(key: str) -> bool:
    """True for config keys that hold secrets (``api_key``, ``bot_token``, ``password``...)."""
    return bool(SECRET_KEY.search(key.rsplit(".", 1)[-1]))


def environment_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """The process environment's secrets: secret-shaped names, and the names listed in
    ``HERMES_SECRET_NAMES`` (values loaded from ``NAME_FILE`` files by the image)."""
    listed = {n.strip() for n in environ.get(SECRET_NAMES_ENV, "").split(",") if n.strip()}
    return {name: value for name, value in environ.items()
            if value and (name in listed or is_secret_name(name))}


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


def credential_name(path: str | Path) -> str:
    """The systemd credential a unit may be handed the environment file ``path`` under
    (``LoadCredential=<name>:<path>``: systemd reads it as root, so a file only root can
    read reaches the service user; the NixOS dashboard serves every profile this way):
    ``hermes-env-`` and 16 hex digits of the path's SHA-256 (nix/lib.nix computes it
    too)."""
    return "hermes-env-" + hashlib.sha256(str(path).encode()).hexdigest()[:16]


def read_environment_files(paths: Iterable[str | Path], credentials: Path | None = None
                           ) -> tuple[dict[str, Path], dict[str, str], list[Path]]:
    """``(file of each name, values, unreadable files)`` of ``NAME=value`` files; a name
    in two files takes the later one's value, as systemd's ``EnvironmentFile=`` does. A
    file handed over in ``credentials`` (the unit's ``$CREDENTIALS_DIRECTORY``) under its
    ``credential_name`` is read there."""
    origin: dict[str, Path] = {}
    values: dict[str, str] = {}
    unreadable: list[Path] = []
    for named in paths:
        handed = credentials / credential_name(named) if credentials else None
        path = handed if handed is not None and handed.is_file() else Path(named)
        try:
            found = read_env_file(path) if path.is_file() else None
        except OSError:
            found = None
        if found is None:
            unreadable.append(Path(named))
            continue
        values |= found
        origin |= dict.fromkeys(found, Path(named))
    return origin, values, unreadable


def credentials_directory(environ: Mapping[str, str]) -> Path | None:
    """The unit's ``$CREDENTIALS_DIRECTORY`` (systemd's ``LoadCredential=``), if any."""
    found = environ.get("CREDENTIALS_DIRECTORY", "")
    return Path(found) if found.startswith("/") else None


class Secrets:
    """The secrets one home can see: its ``.env`` and the environment (the process's,
    over ``secrets.environment_files``); ``precedence`` says which of the two wins."""

    def __init__(self, env_file: Path, environ: Mapping[str, str], *,
                 precedence: str = "dotenv", environment_files: Sequence[str | Path] = ()):
        self.dotenv = read_env_file(env_file)
        self.environ = environ
        self.origin, self.files, self.unreadable = read_environment_files(
            environment_files, credentials_directory(environ))
        self.environment = {**self.files, **environ}
        self.precedence = precedence

    @classmethod
    def for_config(cls, env_file: Path, environ: Mapping[str, str], section: Any) -> Secrets:
        """From a config's ``secrets`` section, validated or raw (then a malformed one
        counts as the defaults: validation names the problem)."""
        if not isinstance(section, Mapping):
            section = {}
        files = section.get("environment_files")
        return cls(env_file, environ,
                   precedence="environment" if section.get("precedence") == "environment"
                   else "dotenv",
                   environment_files=[str(f) for f in files] if isinstance(files, list) else [])

    def get(self, name: str) -> str | None:
        first, second = ((self.environment, self.dotenv) if self.precedence == "environment"
                         else (self.dotenv, self.environment))
        return first.get(name) or second.get(name) or None

    def from_environment(self, name: str) -> str | None:
        """Where the environment's ``name`` comes from (a file, or ``the environment``)."""
        if self.environ.get(name):
            return "the environment"
        return str(self.origin[name]) if self.files.get(name) else None

    def values(self) -> set[str]:
        """Every secret value loaded: ``.env``, the environment files, and the process
        environment's secrets (``environment_secrets``)."""
        found = {*self.dotenv.values(), *self.files.values(),
                 *environment_secrets(self.environ).values()}
        return {value for value in found if value}


def command_environment(environ: Mapping[str, str], secrets: Secrets,
                        passthrough: Iterable[str] = ()) -> dict[str, str]:
    """What the agent's commands see of the runtime's environment: no secret-shaped name
    (``*_KEY``, ``*_TOKEN``, ...), no name the image loaded from a file, no value that
    holds a secret the runtime loaded (``DATABASE_URL`` with the ``.env``'s password in
    it), except the names in ``passthrough`` (``environment.local.env_passthrough``)."""
    allowed = set(passthrough)
    withheld = set(environment_secrets(environ))
    values = [value for value in secrets.values() if len(value) >= MIN_SECRET_CHARS]
    return {name: value for name, value in environ.items() if name in allowed or (
        name not in withheld and not any(secret in value for secret in values))}


def secret_hint(name: str, environment_files: Sequence[str] = ()) -> str:
    """How to set a missing secret: in the deployment's environment files when the
    profile has some (there they win over ``.env``), else with ``hermes config set``."""
    if environment_files:
        return f"add {name}=… to {' or '.join(environment_files)}"
    return f"hermes config set {name} <your key>"


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
