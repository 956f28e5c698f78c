"""What points at a profile from outside it: profiles that extend it, alias scripts,
its gateway process; and ``profile.json``, which records the aliases.

``profile rename`` re-points extends and aliases; ``profile delete`` refuses while
other profiles extend the one being deleted. An ``extends:`` value is replaced in the
file's text at the exact place the YAML parser found it, so every other byte
(comments, order, quoting elsewhere) stays as it was.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.fsutil import atomic_write
from hermes.home import DEFAULT_PROFILE, Home, profile_path

ALIAS_MARKER = "# hermes profile alias"
META_FILE = "profile.json"


@dataclass(frozen=True)
class Dependant:
    """A profile whose ``config.yaml`` says ``extends: <the profile>``."""

    profile: str
    config_file: Path
    text: str
    """The file's text as read."""
    span: tuple[int, int]
    """Where the ``extends`` value is in ``text`` (quotes included)."""

    def repointed(self, new: str) -> str:
        """The file's text with ``extends: new``."""
        start, end = self.span
        return self.text[:start] + new + self.text[end:]


def find_dependants(root: Path, profiles: Iterable[str], target: str
                    ) -> tuple[list[Dependant], list[Path]]:
    """Profiles (``default`` included) that extend ``target``, and the config files that
    could not be read as YAML (so nobody can tell whether they do)."""
    found: list[Dependant] = []
    unreadable: list[Path] = []
    for name in [DEFAULT_PROFILE, *profiles]:
        if name == target:  # a profile extending its own name means the example
            continue
        config = profile_path(root, name) / "config.yaml"
        try:
            text = config.read_text(encoding="utf-8")
        except OSError:
            continue
        span = _extends_span(text, target)
        if span is None:
            continue
        if span == (-1, -1):
            unreadable.append(config)
        else:
            found.append(Dependant(name, config, text, span))
    return found, unreadable


def _extends_span(text: str, target: str) -> tuple[int, int] | None:
    """Where ``extends: target`` has its value; None if it does not; (-1, -1) for bad YAML."""
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return (-1, -1) if "extends" in text else None
    if not isinstance(node, yaml.MappingNode):
        return None
    for key, value in node.value:
        if key.value == "extends" and isinstance(value, yaml.ScalarNode) and value.value == target:
            return value.start_mark.index, value.end_mark.index
    return None


def hermes_command() -> str:
    """The absolute command that runs this installation's ``hermes``, for scripts that
    must work without it on PATH: the running console script, else the one installed
    beside the interpreter, else ``python -P -m hermes`` (``-P``: not the directory the
    alias runs in first on ``sys.path``)."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "hermes" and argv0.is_file():
        return shlex.quote(str(argv0.resolve()))
    beside = Path(sys.executable).parent / "hermes"
    if beside.is_file() and os.access(beside, os.X_OK):
        return shlex.quote(str(beside))
    return f"{shlex.quote(sys.executable)} -P -m hermes"


def alias_script(profile: str) -> str:
    """The text of a wrapper script that runs ``hermes -p PROFILE ...``."""
    return (f'#!/bin/sh\n{ALIAS_MARKER} for "{profile}"\n'
            f'exec {hermes_command()} -p {profile} "$@"\n')


def is_alias(path: Path) -> bool:
    """True if ``path`` is a wrapper script ``hermes profile alias`` wrote."""
    try:
        return path.is_file() and ALIAS_MARKER in path.read_text(errors="replace")
    except OSError:
        return False


def alias_paths(aliases: Iterable[str]) -> list[Path]:
    """The recorded aliases that are still hermes wrapper scripts."""
    return [Path(alias) for alias in aliases if is_alias(Path(alias))]


def remove_aliases(meta: dict[str, Any]) -> list[str]:
    """Delete the profile's alias scripts; what was removed."""
    removed = []
    for path in alias_paths(meta.get("aliases", [])):
        path.unlink()
        removed.append(f"removed alias {path}")
    return removed


def stop_owned_gateway(home: Home) -> list[str]:
    """Stop this profile's gateway, only if its pid file names a live process
    whose ``HERMES_HOME`` is this home; anything else is left alone."""
    pid_file = home.path / "gateway.pid"
    try:
        pid = int(pid_file.read_text().strip())
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return []
    if f"HERMES_HOME={home.path}".encode() not in environ:
        return []
    os.kill(pid, signal.SIGTERM)
    return [f"stopped gateway (pid {pid})"]


def read_meta(directory: Path) -> dict[str, Any]:
    """A profile directory's ``profile.json`` (name, description, aliases...); {} if none."""
    try:
        data = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def meta_text(meta: dict[str, Any]) -> str:
    return json.dumps(meta, indent=2) + "\n"


def write_meta(directory: Path, meta: dict[str, Any]) -> None:
    atomic_write(directory / META_FILE, meta_text(meta))
