"""Edits to a profile's own ``config.yaml`` that keep its comments and order.

``set``/``unset`` load the file with ruamel.yaml's round-trip loader, change
one key (moving the comments around it so none is lost, see
``yaml_comments``), validate the result by composing it, and only then
replace the file atomically. Secret-shaped names (``*_KEY``, ``*_TOKEN``, ``*_SECRET``,
``*_PASSWORD``...: ``credentials.is_secret_name``) go to ``.env`` (0600) instead, edited
in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes.config.dotenv_edit import set_secret, unset_secret
from hermes.config.drift import refuse_environment_secret, refuse_system_value
from hermes.config.groups import GROUPS
from hermes.config.roundtrip import dump_roundtrip, load_roundtrip
from hermes.config.values import parse_for_key
from hermes.config.yaml_comments import remove_entry, set_entry
from hermes.credentials import is_secret_name
from hermes.errors import ConfigError, MissingValueError
from hermes.fsutil import atomic_write, private_dir
from hermes.home import Home

__all__ = ["Edit", "dump_roundtrip", "load_roundtrip", "missing_values", "remove_choice",
           "set_choice", "set_path", "set_paths", "set_value", "unset_path", "unset_value"]


@dataclass(frozen=True)
class Edit:
    """Where an edit went, and what the user should know about it."""

    where: str
    """The file changed: the profile's ``config.yaml`` or ``.env``."""
    notes: list[str] = field(default_factory=list)
    """Lines for standard error (``note: ...``, ``warning: ...``)."""


def _check_key(key: str) -> list[str]:
    parts = key.split(".")
    if not key or any(not p or not p.replace("_", "").replace("-", "").isalnum() for p in parts):
        raise ConfigError(f"invalid key {key!r}: use dotted names like provider.model")
    return parts


def set_value(home: Home, key: str, value: str, environ: Mapping[str, str], *,
              force: bool = False) -> Edit:
    """Set ``key`` in the profile (or ``.env`` for secrets). Refused where a read-only
    system layer, or an environment that wins over ``.env``, sets it, unless ``force``."""
    if is_secret_name(key):
        if not force:
            refuse_environment_secret(home, environ, key)
        return Edit(str(home.env_file), set_secret(home.env_file, key, value))
    parts = _check_key(key)
    if not force:
        refuse_system_value(home, environ, key)
    doc = _load_profile(home)
    notes: list[str] = []
    if len(parts) == 1 and parts[0] in GROUPS:
        from hermes.config.group_switch import current_option, override_notes

        before = current_option(home, environ, key)
        set_choice(doc, key, value)
        if before != value:
            notes = override_notes(home, environ, key, value, doc.get(key))
    else:
        set_path(doc, parts, parse_for_key(key, value))
    missing = _validate_and_write(home, doc, environ)
    if parts[0] == "platforms":  # an API server enabled without a key gets one
        notes = [*notes, *_create_api_keys(home, environ, missing)]
    return Edit(str(home.config_file), notes)


def _create_api_keys(home: Home, environ: Mapping[str, str], missing: list[str]) -> list[str]:
    from hermes.config.api_keys import create_missing_keys
    from hermes.config.compose import compose_config

    composed = compose_config(home, environ, [f"{key}={_PLACEHOLDER}" for key in missing])
    return create_missing_keys(home, environ, composed.config, composed.raw)


def set_paths(home: Home, values: Mapping[str, Any], environ: Mapping[str, str]) -> Edit:
    """Set several keys of the profile's ``config.yaml`` to already-parsed values in one
    validated write (no secrets, no group choices; system layers are not consulted)."""
    doc = _load_profile(home)
    for key, value in values.items():
        set_path(doc, _check_key(key), value)
    _validate_and_write(home, doc, environ)
    return Edit(str(home.config_file))


def set_path(doc: Any, parts: list[str], value: Any) -> None:
    """Set ``doc[a][b][c] = value``, creating the missing mappings as one new entry."""
    node = doc
    for i, part in enumerate(parts[:-1]):
        child = node.get(part)
        if not isinstance(child, dict):
            for name in reversed(parts[i + 1:]):
                value = {name: value}
            set_entry(node, part, value)
            return
        node = child
    set_entry(node, parts[-1], value)


def unset_value(home: Home, key: str, environ: Mapping[str, str]) -> Edit:
    """Remove ``key`` from the profile (or ``.env``). Raises if it is not set there."""
    if is_secret_name(key):
        return Edit(str(home.env_file), unset_secret(home.env_file, key))
    parts = _check_key(key)
    doc = _load_profile(home)
    if len(parts) == 1 and parts[0] in GROUPS and remove_choice(doc, parts[0]):
        _validate_and_write(home, doc, environ)
        return Edit(str(home.config_file))
    if not unset_path(doc, parts):
        raise ConfigError("not set in this profile (see `hermes config explain`)",
                          source=str(home.config_file), key=key)
    _validate_and_write(home, doc, environ)
    return Edit(str(home.config_file))


def unset_path(doc: Any, parts: list[str]) -> bool:
    """Remove ``doc[a][b][c]`` and the mappings that leaves empty; False if it is not set."""
    chain = [doc]
    for part in parts[:-1]:
        child = chain[-1].get(part)
        if not isinstance(child, dict):
            return False
        chain.append(child)
    if parts[-1] not in chain[-1]:
        return False
    level = len(parts) - 1
    while level > 0 and len(chain[level]) == 1:  # the highest mapping left empty goes
        level -= 1
    remove_entry(chain[level], parts[level], top=level == 0)  # only the top may be emptied
    return True


def _load_profile(home: Home) -> Any:
    try:
        text = home.config_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    return load_roundtrip(text, source=str(home.config_file))


def _group_of(entry: Any) -> str | None:
    if isinstance(entry, dict) and len(entry) == 1:
        (name,) = entry
        return str(name).removeprefix("override").strip().lstrip("/")
    return None


def set_choice(doc: Any, group: str, option: str) -> None:
    """Pick ``option`` for ``group`` in the document's ``defaults`` list."""
    defaults = doc.get("defaults")
    if defaults is None:
        from ruamel.yaml import CommentedSeq

        defaults = CommentedSeq()
        doc.insert(0, "defaults", defaults)
    for entry in defaults:
        if _group_of(entry) == group:
            (name,) = entry
            entry[name] = option  # in place: the entry's comments stay
            return
    set_entry(defaults, len(defaults), {f"override {group}": option})


def remove_choice(doc: Any, group: str) -> bool:
    """Drop ``group``'s entry from the ``defaults`` list; False if it has none."""
    defaults: Any = doc.get("defaults") or []
    for i, entry in enumerate(defaults):
        if _group_of(entry) == group:
            if len(defaults) == 1:
                remove_entry(doc, "defaults", top=True)
            else:
                remove_entry(defaults, i)
            return True
    return False


def _validate_and_write(home: Home, doc: Any, environ: Mapping[str, str]) -> list[str]:
    """Write ``doc`` if it composes; the required keys still unset."""
    text = dump_roundtrip(doc)
    missing = missing_values(home, environ, profile_text=text)
    private_dir(home.path)
    atomic_write(home.config_file, text, mode=0o600)
    return missing


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
        except ConfigError as exc:
            if exc.key not in missing:  # a typed key refusing its placeholder is unset
                raise
            return missing


_PLACEHOLDER = "__unset__"
