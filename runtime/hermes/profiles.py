"""Profiles: create, list, switch, rename, delete, export, import, alias.

A profile is a home directory. Every mutation is built in a staging
directory and published with one ``rename``, under a lock in the root, so a
crash never leaves half a profile and two commands never race.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hermes.credentials import REDACTED, is_reference, is_secret_key, write_env_file
from hermes.errors import ProfileError, did_you_mean, one_of
from hermes.fsutil import atomic_write
from hermes.home import (
    ACTIVE_FILE,
    DEFAULT_PROFILE,
    PROFILES_DIR,
    Home,
    home_for,
    read_active,
    tombstone_path,
    validate_profile_name,
)

# What --clone copies; --clone-all copies everything except HISTORY.
CLONE_ITEMS = ("config.yaml", ".env", "SOUL.md", "skills", "memories", "conf")
HISTORY_ITEMS = frozenset(
    {"state.db", "state.db-wal", "state.db-shm", "cron", "logs", "backups", "gateway.pid",
     ".cache"}
)
# Never copied into or out of another profile.
LOCAL_ITEMS = frozenset({"profile.json", "profiles", ACTIVE_FILE, ".lock"})
ALIAS_MARKER = "# hermes profile alias"


@dataclass(frozen=True)
class ProfileInfo:
    """What ``profile list`` and ``profile show`` print about one profile."""

    name: str
    path: Path
    active: bool
    description: str
    provider: str
    model: str


def _examples() -> dict[str, Path]:
    from hermes.config.layers import examples_dir

    root = examples_dir()
    return {p.name: p for p in sorted(root.iterdir()) if p.is_dir()} if root.is_dir() else {}


class ProfileManager:
    """All profile operations under one root."""

    def __init__(self, root: Path, environ: dict[str, str] | None = None):
        self.root = root
        self.environ = dict(os.environ if environ is None else environ)

    # -- queries ---------------------------------------------------------

    @property
    def profiles_dir(self) -> Path:
        return self.root / PROFILES_DIR

    def names(self) -> list[str]:
        """Named profiles on disk (not counting ``default``), sorted."""
        if not self.profiles_dir.is_dir():
            return []
        return sorted(
            p.name
            for p in self.profiles_dir.iterdir()
            if p.is_dir() and not p.name.startswith(".")
        )

    def active(self) -> str:
        name = read_active(self.root)
        return name if name and (name == DEFAULT_PROFILE or name in self.names()) else "default"

    def home(self, name: str) -> Home:
        """The home of an existing profile; a clear error (with suggestions) otherwise."""
        validate_profile_name(name, allow_default=True)
        home = home_for(self.root, name)
        if home.is_default or home.path.is_dir():
            return home
        if tombstone_path(self.root, name).exists():
            raise ProfileError(f'profile "{name}" was deleted; recreate it with '
                               f"`hermes profile create {name}`")
        raise ProfileError(f'no profile named "{name}"'
                           f"{did_you_mean(name, self.names() + [DEFAULT_PROFILE])}; "
                           f"profiles: {one_of(self.names() + [DEFAULT_PROFILE])}")

    def info(self, name: str) -> ProfileInfo:
        from hermes.config.peek import peek_model

        home = self.home(name)
        provider, model = peek_model(home, self.environ)
        return ProfileInfo(name, home.path, name == self.active(),
                           _read_meta(home).get("description", ""), provider, model)

    def infos(self) -> list[ProfileInfo]:
        return [self.info(n) for n in [DEFAULT_PROFILE, *self.names()]]

    # -- mutations -------------------------------------------------------

    @contextmanager
    def _locked(self) -> Iterator[None]:
        from filelock import FileLock

        self.profiles_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        with FileLock(str(self.profiles_dir / ".lock"), timeout=30):
            yield

    def _new_name(self, name: str) -> Path:
        validate_profile_name(name)
        target = self.profiles_dir / name
        if target.exists():
            raise ProfileError(f'profile "{name}" already exists at {target}')
        return target

    def create(
        self,
        name: str,
        *,
        source: str | None = None,
        clone: bool = False,
        clone_all: bool = False,
        description: str = "",
    ) -> Home:
        """Create profile ``name``; see ``hermes profile create --help``."""
        self._new_name(name)
        origin = self._resolve_source(source, clone or clone_all)
        with self._locked():
            target = self._new_name(name)
            staging = Path(tempfile.mkdtemp(prefix=f".staging-{name}-", dir=self.profiles_dir))
            try:
                if clone_all and isinstance(origin, Home):
                    self._copy_items(origin.path, staging, exclude=HISTORY_ITEMS | LOCAL_ITEMS)
                elif clone and isinstance(origin, Home):
                    self._copy_items(origin.path, staging, include=CLONE_ITEMS)
                elif isinstance(origin, Path):  # an example
                    self._copy_items(origin, staging, exclude=frozenset())
                elif isinstance(origin, Home):
                    atomic_write(staging / "config.yaml",
                                 f"# Profile {name}: only what differs from {origin.name}.\n"
                                 f"extends: {origin.name}\n")
                self._finish_new_home(staging, name, source, description)
                os.rename(staging, target)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
            tombstone_path(self.root, name).unlink(missing_ok=True)
        return home_for(self.root, name)

    def _resolve_source(self, source: str | None, cloning: bool) -> Home | Path | None:
        """``--from``: an existing profile wins over an example of the same name."""
        if source is None:
            return home_for(self.root, self.active()) if cloning else None
        if source == DEFAULT_PROFILE or source in self.names():
            return self.home(source)
        examples = _examples()
        if source in examples:
            if cloning:
                raise ProfileError(f'"{source}" is an example, not a profile; '
                                   "--clone copies from profiles (drop --clone to use the example)")
            return examples[source]
        choices = [*self.names(), *examples]
        raise ProfileError(f'no profile or example named "{source}"{did_you_mean(source, choices)};'
                           f" profiles: {one_of(self.names() + [DEFAULT_PROFILE])}; "
                           f"examples: {one_of(examples)}")

    @staticmethod
    def _copy_items(
        src: Path,
        dst: Path,
        *,
        include: tuple[str, ...] | None = None,
        exclude: frozenset[str] = frozenset(),
    ) -> None:
        names = include if include is not None else [p.name for p in src.iterdir()]
        for item in names:
            path = src / item
            if item in exclude or item in LOCAL_ITEMS or not path.exists() or path.is_symlink():
                continue
            if path.is_dir():
                shutil.copytree(path, dst / item, symlinks=True)
            else:
                shutil.copy2(path, dst / item)

    @staticmethod
    def _finish_new_home(staging: Path, name: str, source: str | None, description: str) -> None:
        staging.chmod(0o700)
        for sub in ("memories", "skills", "logs"):
            (staging / sub).mkdir(mode=0o700, exist_ok=True)
        env = staging / ".env"
        if env.exists():
            env.chmod(0o600)
        else:
            write_env_file(env, {})
        if not (staging / "config.yaml").exists():
            atomic_write(staging / "config.yaml",
                         f"# Profile {name}: settings that differ from the packaged defaults.\n"
                         "# Pick group options here, e.g.\n"
                         "# defaults:\n#   - override provider: anthropic\n")
        meta = {"name": name, "description": description, "created_from": source,
                "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        atomic_write(staging / "profile.json", json.dumps(meta, indent=2) + "\n")

    def switch(self, name: str) -> Home:
        """Make ``name`` the sticky active profile; ``default`` clears it."""
        home = self.home(name)
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        if name == DEFAULT_PROFILE:
            (self.root / ACTIVE_FILE).unlink(missing_ok=True)
        else:
            atomic_write(self.root / ACTIVE_FILE, name + "\n")
        return home

    def delete(self, name: str) -> list[str]:
        """Delete a named profile, leaving a tombstone. Returns what it stopped/removed."""
        if name == DEFAULT_PROFILE:
            raise ProfileError("the default profile is the root itself and cannot be deleted")
        with self._locked():
            home = self.home(name)
            actions = self._stop_owned_gateway(home)
            actions += self._remove_aliases(home)
            trash = self.profiles_dir / f".trash-{name}-{os.getpid()}-{time.time_ns()}"
            os.rename(home.path, trash)
            tomb = tombstone_path(self.root, name)
            tomb.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(tomb, time.strftime("%Y-%m-%dT%H:%M:%SZ\n", time.gmtime()))
            if read_active(self.root) == name:
                (self.root / ACTIVE_FILE).unlink(missing_ok=True)
                actions.append("active profile reset to default")
        shutil.rmtree(trash, ignore_errors=True)
        return actions

    @staticmethod
    def _stop_owned_gateway(home: Home) -> list[str]:
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

    def _remove_aliases(self, home: Home) -> list[str]:
        removed = []
        for alias in _read_meta(home).get("aliases", []):
            path = Path(alias)
            if path.is_file() and ALIAS_MARKER in path.read_text(errors="replace"):
                path.unlink()
                removed.append(f"removed alias {path}")
        return removed

    def rename(self, old: str, new: str) -> Home:
        if old == DEFAULT_PROFILE:
            raise ProfileError("the default profile cannot be renamed; "
                               "create a named copy with `hermes profile create NAME --clone-all`")
        with self._locked():
            home = self.home(old)
            target = self._new_name(new)
            os.rename(home.path, target)
            new_home = home_for(self.root, new)
            meta = _read_meta(new_home) | {"name": new}
            atomic_write(new_home.meta_file, json.dumps(meta, indent=2) + "\n")
            tombstone_path(self.root, new).unlink(missing_ok=True)
            if read_active(self.root) == old:
                atomic_write(self.root / ACTIVE_FILE, new + "\n")
        return new_home

    def export(self, name: str, output: Path) -> Path:
        """Write ``name`` as a tar.gz without ``.env``, secrets in config redacted."""
        home = self.home(name)
        if output.exists():
            raise ProfileError(f"{output} already exists; choose another file name")
        skip = {".env", ".lock", ".cache", "profiles", ACTIVE_FILE, "gateway.pid"}
        fd, tmp = tempfile.mkstemp(dir=output.parent, prefix=f".{output.name}.")
        os.close(fd)
        try:
            with tarfile.open(tmp, "w:gz") as tar:
                for path in sorted(home.path.rglob("*")):
                    rel = path.relative_to(home.path)
                    if rel.parts[0] in skip or path.is_symlink() or rel.name.endswith(".lock"):
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

    def import_(self, archive: Path, name: str | None = None) -> Home:
        """Import an exported archive as a new profile; never overwrites."""
        if not archive.is_file():
            raise ProfileError(f"{archive}: no such file")
        try:
            with tarfile.open(archive, "r:gz") as tar:
                members = tar.getmembers()
                tops = {Path(m.name).parts[0] for m in members if m.name.strip("/")}
                if len(tops) != 1:
                    raise ProfileError(f"{archive}: not a profile export (expected one top folder)")
                top = tops.pop()
                name = name or top
                self._new_name(name)
                with self._locked():
                    target = self._new_name(name)
                    staging = Path(tempfile.mkdtemp(prefix=f".import-{name}-",
                                                    dir=self.profiles_dir))
                    try:
                        tar.extractall(staging, filter="data")
                        os.rename(staging / top, staging / ".content")
                        content = staging / ".content"
                        (content / ".env").unlink(missing_ok=True)
                        self._finish_new_home(content, name, f"import:{archive.name}",
                                              _read_meta_dir(content).get("description", ""))
                        os.rename(content, target)
                    finally:
                        shutil.rmtree(staging, ignore_errors=True)
                    tombstone_path(self.root, name).unlink(missing_ok=True)
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise ProfileError(f"{archive}: cannot import: {exc}") from exc
        return home_for(self.root, name)

    def alias(self, name: str, bin_dir: Path, alias_name: str | None = None) -> Path:
        """Write ``bin_dir/<alias>``: a wrapper running ``hermes -p NAME``."""
        home = self.home(name)
        alias_name = alias_name or name
        validate_profile_name(alias_name, allow_default=True)
        script = bin_dir / alias_name
        if script.exists() and ALIAS_MARKER not in script.read_text(errors="replace"):
            raise ProfileError(f"{script} exists and is not a hermes alias; "
                               "choose another name with --as")
        bin_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(script, f'#!/bin/sh\n{ALIAS_MARKER} for "{name}"\n'
                             f'exec hermes -p {name} "$@"\n', mode=0o755)
        if not home.is_default:
            meta = _read_meta(home)
            meta["aliases"] = sorted(set(meta.get("aliases", [])) | {str(script)})
            atomic_write(home.meta_file, json.dumps(meta, indent=2) + "\n")
        return script


def _read_meta(home: Home) -> dict:
    return _read_meta_dir(home.path)


def _read_meta_dir(path: Path) -> dict:
    try:
        data = json.loads((path / "profile.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


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
