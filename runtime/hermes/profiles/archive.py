"""Profile archives: what ``profile export`` writes and ``profile import`` cleans up.

An export leaves ``.env`` out and replaces literal secrets in ``config.yaml`` with
``<redacted>``. On import those placeholders are removed again (a placeholder is
not a key), line by line so every comment stays, and the importer is told which
secrets the new profile still needs.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tarfile
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes.credentials import REDACTED, Secrets, is_reference, is_secret_key
from hermes.errors import ConfigError, ProfileError
from hermes.fsutil import atomic_write
from hermes.home import ACTIVE_FILE, Home, home_for, tombstone_path
from hermes.profiles.files import finish_new_home
from hermes.profiles.links import read_meta

if TYPE_CHECKING:
    from hermes.profiles.manager import ProfileManager

EXPORT_SKIP = frozenset({".env", ".lock", ".cache", "profiles", ACTIVE_FILE, "gateway.pid",
                         "dashboard"})  # the dashboard's tokens: secrets of this machine
_SECRET_REF = re.compile(r"\$\{secret:([A-Za-z0-9_]+)\}")


def export_profile(home: Home, name: str, output: Path) -> Path:
    """Write ``home`` as a tar.gz without ``.env``, secrets in config redacted."""
    if output.exists():
        raise ProfileError(f"{output} already exists; choose another file name")
    fd, tmp = tempfile.mkstemp(dir=output.parent, prefix=f".{output.name}.")
    os.close(fd)
    try:
        with tarfile.open(tmp, "w:gz") as tar:
            for path in sorted(home.path.rglob("*")):
                rel = path.relative_to(home.path)
                if rel.parts[0] in EXPORT_SKIP or path.is_symlink() or rel.name.endswith(".lock"):
                    continue
                arcname = f"{name}/{rel}"
                if rel == Path("config.yaml"):
                    _add_bytes(tar, arcname, _redacted_config(path))
                else:
                    tar.add(path, arcname=arcname, recursive=False)
        os.replace(tmp, output)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return output


def import_profile(manager: ProfileManager, archive: Path, name: str | None
                   ) -> tuple[Home, list[str]]:
    """Unpack ``archive`` as a new profile (``name`` or the archive's); never overwrites.
    Returns its home and the ``<redacted>`` keys removed from its config."""
    if not archive.is_file():
        raise ProfileError(f"{archive}: no such file")
    try:
        with tarfile.open(archive, "r:gz") as tar:
            tops = {Path(m.name).parts[0] for m in tar.getmembers() if m.name.strip("/")}
            if len(tops) != 1:
                raise ProfileError(f"{archive}: not a profile export (expected one top folder)")
            top = tops.pop()
            name = name or top
            manager.new_path(name)
            with manager.locked():
                dropped = _publish(manager, tar, top, name, archive)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ProfileError(f"{archive}: cannot import: {exc}") from exc
    return home_for(manager.root, name), dropped


def _publish(manager: ProfileManager, tar: tarfile.TarFile, top: str, name: str,
             archive: Path) -> list[str]:
    """Unpack into a staging directory, clean it, rename it into place."""
    target = manager.new_path(name)
    staging = Path(tempfile.mkdtemp(prefix=f".import-{name}-", dir=manager.profiles_dir))
    try:
        tar.extractall(staging, filter="data")
        content = staging / ".content"
        os.rename(staging / top, content)
        (content / ".env").unlink(missing_ok=True)
        dropped = drop_placeholders(content / "config.yaml")
        finish_new_home(content, name, f"import:{archive.name}",
                                read_meta(content).get("description", ""))
        os.rename(content, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    tombstone_path(manager.root, name).unlink(missing_ok=True)
    return dropped


def _redacted_config(path: Path) -> bytes:
    from hermes.config.edit import dump_roundtrip, load_roundtrip

    doc = load_roundtrip(path.read_text(encoding="utf-8"))
    _redact_in_place(doc)
    return dump_roundtrip(doc).encode("utf-8")


def _redact_in_place(node: object) -> None:
    """Replace literal secrets (``api_key: sk-...``) in a round-trip YAML tree."""
    if isinstance(node, dict):
        for key, value in list(node.items()):
            if isinstance(value, dict | list):
                _redact_in_place(value)
            elif value not in (None, "") and is_secret_key(str(key)) and not is_reference(value):
                node[key] = REDACTED
    elif isinstance(node, list):
        for item in node:
            _redact_in_place(item)


def _add_bytes(tar: tarfile.TarFile, arcname: str, data: bytes) -> None:
    info = tarfile.TarInfo(arcname)
    info.size = len(data)
    info.mtime = int(time.time())
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def drop_redacted(text: str) -> tuple[str, list[str]]:
    """``text`` without the entries whose value is ``<redacted>`` (and the mappings that
    leaves empty), and the dotted keys removed. Other lines stay byte for byte."""
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return text, []  # composing the profile reports it, with file and line
    drop: set[int] = set()
    keys: list[str] = []
    _collect(node, "", drop, keys)
    if not keys:
        return text, []
    lines = text.splitlines(keepends=True)
    kept = "".join(line for i, line in enumerate(lines) if i not in drop)
    if _clean(text, kept, keys):
        return kept, keys
    return _drop_roundtrip(text, keys), keys  # flow style or list items: edit the tree


def _collect(node: Any, prefix: str, drop: set[int], keys: list[str]) -> bool:
    """Mark the lines of redacted entries under ``node``; True when all its entries go."""
    import yaml

    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _collect(item, f"{prefix}{i}.", drop, keys)
        return False
    if not isinstance(node, yaml.MappingNode) or not node.value:
        return False
    gone = 0
    for key, value in node.value:
        dotted = f"{prefix}{key.value}"
        if isinstance(value, yaml.ScalarNode) and value.value == REDACTED:
            keys.append(dotted)
        elif not _collect(value, dotted + ".", drop, keys):
            continue
        drop.update(range(key.start_mark.line, max(_last_line(value), key.start_mark.line) + 1))
        gone += 1
    return gone == len(node.value)


def _last_line(node: Any) -> int:
    """The last line holding part of ``node`` (a block's end mark is the next token's)."""
    import yaml

    block = isinstance(node, yaml.MappingNode | yaml.SequenceNode) and not node.flow_style
    if block and node.value:
        last = node.value[-1]
        return _last_line(last[1] if isinstance(last, tuple) else last)
    return node.end_mark.line - (1 if node.end_mark.column == 0 else 0)


def _clean(before: str, after: str, keys: list[str]) -> bool:
    """True if ``after`` holds exactly ``before``'s settings minus ``keys``."""
    import yaml

    try:
        expected, got = yaml.safe_load(before), yaml.safe_load(after)
    except yaml.YAMLError:
        return False
    for key in keys:
        _delete(expected, key.split("."))
    return (got or {}) == (expected or {})


def _drop_roundtrip(text: str, keys: list[str]) -> str:
    from hermes.config.edit import dump_roundtrip, load_roundtrip

    doc = load_roundtrip(text)
    for key in keys:
        _delete(doc, key.split("."))
    return dump_roundtrip(doc)


def _delete(node: Any, parts: list[str]) -> bool:
    """Delete ``parts`` under ``node``; True when ``node`` is left empty."""
    index: Any = int(parts[0]) if isinstance(node, list) else parts[0]
    if (len(parts) == 1 or _delete(node[index], parts[1:])) and isinstance(node, dict):
        del node[index]
    return isinstance(node, dict) and not node


def secrets_to_set(home: Home, environ: Mapping[str, str]) -> list[str] | None:
    """Secret names the profile's config refers to that are not set; None if its config
    does not compose (``doctor`` says why)."""
    from hermes.config import compose_config

    try:
        composed = compose_config(home, environ)
    except ConfigError:
        return None
    secrets = Secrets(home.env_file, environ)
    names = sorted(set(_SECRET_REF.findall(repr(composed.raw))))
    return [name for name in names if secrets.get(name) is None]


def drop_placeholders(config: Path) -> list[str]:
    """Remove ``<redacted>`` entries from ``config`` in place; the dotted keys removed."""
    if not config.is_file():
        return []
    text, dropped = drop_redacted(config.read_text(encoding="utf-8"))
    if dropped:
        atomic_write(config, text)
    return dropped
