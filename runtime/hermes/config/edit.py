"""Edits to a profile's own ``config.yaml`` that keep its comments and order.

``set``/``unset`` load the file with ruamel.yaml's round-trip loader, change
one key, validate the result by composing it, and only then replace the file
atomically. Secret-shaped keys (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``) go
to ``.env`` (0600) instead.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from hermes.config.groups import GROUPS
from hermes.credentials import is_secret_name, read_env_file, write_env_file
from hermes.errors import ConfigError, MissingValueError
from hermes.fsutil import atomic_write
from hermes.home import Home


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def load_roundtrip(text: str, source: str | None = None) -> Any:
    """Load YAML for editing; errors name ``source`` (the file) and the line."""
    from ruamel.yaml import CommentedMap
    from ruamel.yaml.error import YAMLError

    try:
        doc = _yaml().load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = source
        if mark is not None:
            where = f"{source}:{mark.line + 1}" if source else f"line {mark.line + 1}"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"invalid YAML: {problem}", source=where) from exc
    if doc is None:
        return CommentedMap()
    if not isinstance(doc, dict):
        raise ConfigError("expected a mapping of settings at the top level", source=source)
    return doc


def dump_roundtrip(doc: Any) -> str:
    buffer = io.StringIO()
    _yaml().dump(doc, buffer)
    return buffer.getvalue()


def parse_value(text: str) -> Any:
    """Interpret a command-line value as YAML: ``3`` is an int, ``[a, b]`` a list."""
    import yaml

    try:
        return yaml.safe_load(text) if text.strip() else text
    except yaml.YAMLError:
        return text


def _check_key(key: str) -> list[str]:
    parts = key.split(".")
    if not key or any(not p or not p.replace("_", "").replace("-", "").isalnum() for p in parts):
        raise ConfigError(f"invalid key {key!r}: use dotted names like provider.model")
    return parts


def set_value(home: Home, key: str, value: str, environ: Mapping[str, str]) -> str:
    """Set ``key`` in the profile (or ``.env`` for secrets). Returns where it went."""
    if is_secret_name(key):
        values = read_env_file(home.env_file) | {key: value}
        home.path.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_env_file(home.env_file, values)
        return str(home.env_file)
    parts = _check_key(key)
    doc = _load_profile(home)
    if len(parts) == 1 and parts[0] in GROUPS:
        _set_choice(doc, parts[0], value)
    else:
        node = doc
        for part in parts[:-1]:
            child = node.get(part)
            if child is None or not isinstance(child, dict):
                from ruamel.yaml import CommentedMap

                child = node[part] = CommentedMap()
            node = child
        node[parts[-1]] = parse_value(value)
    _validate_and_write(home, doc, environ)
    return str(home.config_file)


def unset_value(home: Home, key: str, environ: Mapping[str, str]) -> str:
    """Remove ``key`` from the profile (or ``.env``). Raises if it is not set there."""
    if is_secret_name(key):
        values = read_env_file(home.env_file)
        if key not in values:
            raise ConfigError(f"{key} is not set", source=str(home.env_file))
        del values[key]
        write_env_file(home.env_file, values)
        return str(home.env_file)
    parts = _check_key(key)
    doc = _load_profile(home)
    if len(parts) == 1 and parts[0] in GROUPS and _remove_choice(doc, parts[0]):
        _validate_and_write(home, doc, environ)
        return str(home.config_file)
    chain = [doc]
    for part in parts[:-1]:
        child = chain[-1].get(part)
        if not isinstance(child, dict):
            break
        chain.append(child)
    if len(chain) != len(parts) or parts[-1] not in chain[-1]:
        raise ConfigError("not set in this profile (see `hermes config explain`)",
                          source=str(home.config_file), key=key)
    del chain[-1][parts[-1]]
    for node, part in zip(reversed(chain[:-1]), reversed(parts[:-1]), strict=True):
        if not node[part]:
            del node[part]
    _validate_and_write(home, doc, environ)
    return str(home.config_file)


def _load_profile(home: Home) -> Any:
    try:
        text = home.config_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    return load_roundtrip(text, source=str(home.config_file))


def _set_choice(doc: Any, group: str, option: str) -> None:
    defaults = doc.get("defaults")
    if defaults is None:
        from ruamel.yaml import CommentedSeq

        defaults = CommentedSeq()
        doc.insert(0, "defaults", defaults)
    for i, entry in enumerate(defaults):
        if isinstance(entry, dict) and len(entry) == 1:
            (name,) = entry
            if str(name).removeprefix("override").strip().lstrip("/") == group:
                defaults[i] = {name: option}
                return
    defaults.append({f"override {group}": option})


def _remove_choice(doc: Any, group: str) -> bool:
    for i, entry in enumerate(doc.get("defaults") or []):
        if isinstance(entry, dict) and len(entry) == 1:
            (name,) = entry
            if str(name).removeprefix("override").strip().lstrip("/") == group:
                del doc["defaults"][i]
                if not doc["defaults"]:
                    del doc["defaults"]
                return True
    return False


def _validate_and_write(home: Home, doc: Any, environ: Mapping[str, str]) -> None:
    text = dump_roundtrip(doc)
    missing_values(home, environ, profile_text=text)
    home.path.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write(home.config_file, text, mode=0o600)


def missing_values(home: Home, environ: Mapping[str, str], *,
                   profile_text: str | None = None) -> list[str]:
    """Validate the profile's config; return the required keys still unset.

    Anything else wrong raises ``ConfigError``. Unset required values do not:
    choosing ``provider custom`` must be possible before its ``api_base`` is
    set, one ``config set`` at a time. Each unset key is filled with a
    placeholder so the rest of the config is still checked.
    """
    from hermes.config.compose import compose_config

    missing: list[str] = []
    while True:
        overrides = [f"{key}={_PLACEHOLDER}" for key in missing]
        try:
            compose_config(home, environ, overrides, profile_text=profile_text)
            return missing
        except MissingValueError as exc:
            if not exc.key or exc.key in missing:
                raise
            missing.append(exc.key)


_PLACEHOLDER = "__unset__"
