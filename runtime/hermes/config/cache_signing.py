"""The key that authenticates the composed-config cache, kept outside every home.

A cache entry decides the sandbox, approvals, provider and MCP servers of every
later run, so one edited entry would turn them off for good. Each entry carries an
HMAC-SHA256 under a per-root key that lives where nothing writing a home reaches:
``$XDG_STATE_HOME/hermes/cache-keys/`` (default ``~/.local/state/hermes/cache-keys/``),
one 0600 file per root, named after a hash of the root's real path, in a 0700
directory that the local sandbox hides from commands and file tools. Where that
place lies inside the root itself (a service user whose home is the root, as the
NixOS module's ``hermes`` user) or cannot be written (a read-only container), there
is no key and nothing is cached: every run composes.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from hermes.fsutil import private_dir

KEY_BYTES = 32
PURPOSE = b"hermes composed-config cache v1\0"


def key_directory(environ: Mapping[str, str]) -> Path:
    """Where every root's key lives: ``$XDG_STATE_HOME/hermes/cache-keys`` (default
    ``~/.local/state/hermes/cache-keys``). The local sandbox hides it from commands and
    the file tools (``sandbox.policy.unreadable``)."""
    state = environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(state):  # the XDG spec: a relative value is ignored
        state = os.path.join(environ.get("HOME") or str(Path.home()), ".local", "state")
    return Path(state) / "hermes" / "cache-keys"


def key_file(root: Path, environ: Mapping[str, str]) -> Path | None:
    """Where ``root``'s key lives; None when that place is inside the root."""
    real_root = root.resolve()
    directory = key_directory(environ).resolve()
    if directory == real_root or real_root in directory.parents:
        return None
    digest = hashlib.sha256(str(real_root).encode("utf-8", "surrogateescape")).hexdigest()
    return directory / f"config-cache-{digest[:24]}.key"


def signing_key(root: Path, environ: Mapping[str, str], *, create: bool) -> bytes | None:
    """``root``'s key. ``create``: make one when there is none, or when the one there is
    ours but not a private key of the right size (it may have been read). None when
    there is no usable key (another user's file, nowhere to write one)."""
    path = key_file(root, environ)
    if path is None:
        return None
    key, ours = _read_key(path)
    if key is not None or not create or not ours:
        return key
    try:
        return _write_key(path)
    except OSError:
        return None


def mac(key: bytes, *parts: bytes) -> bytes:
    """The hex HMAC-SHA256 of ``parts`` (each length-prefixed, so none can run into the
    next)."""
    signer = hmac.new(key, PURPOSE, hashlib.sha256)
    for part in parts:
        signer.update(len(part).to_bytes(8, "big") + part)
    return signer.hexdigest().encode("ascii")


def _read_key(path: Path) -> tuple[bytes | None, bool]:
    """``(key, replaceable)``: the key if it is a private regular file of ours (or
    root's) holding ``KEY_BYTES`` bytes; replaceable when absent or ours."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, True
    except OSError:
        return None, False  # a link, or not ours to read
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if info.st_uid not in (os.geteuid(), 0):
            return None, False
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077:
            return None, info.st_uid == os.geteuid()
        key = handle.read(KEY_BYTES + 1)
    return (key, True) if len(key) == KEY_BYTES else (None, True)


def _write_key(path: Path) -> bytes:
    """A new random key at ``path``: a new file is linked in (so of two processes
    creating it at once both use the first), a bad one replaced."""
    private_dir(path.parent)
    key = secrets.token_bytes(KEY_BYTES)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".key.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(key)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            existing, _ = _read_key(path)
            if existing is not None:
                return existing
            os.replace(tmp, path)
        return key
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
