"""Profiles: create, list, switch, rename, delete, export, import, alias.

A profile is a home directory. Every mutation is built in a staging
directory and published with one ``rename``, under a lock in the root, so a
crash never leaves half a profile and two commands never race.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes.errors import ProfileError, did_you_mean, one_of
from hermes.fsutil import atomic_write, private_dir
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
from hermes.profiles.archive import export_profile, import_profile
from hermes.profiles.files import (
    CLONE_ITEMS,
    HISTORY_ITEMS,
    LOCAL_ITEMS,
    copy_items,
    finish_new_home,
)
from hermes.profiles.links import (
    META_FILE,
    Dependant,
    alias_paths,
    alias_script,
    find_dependants,
    is_alias,
    meta_text,
    read_meta,
    remove_aliases,
    stop_owned_gateway,
    write_meta,
)
from hermes.profiles.rollback import Rollback


@dataclass(frozen=True)
class ProfileInfo:
    """What ``profile list`` and ``profile show`` print about one profile."""

    name: str
    path: Path
    active: bool
    description: str
    provider: str
    model: str


@dataclass(frozen=True)
class Outcome:
    """What a profile operation did, for the CLI to print."""

    home: Home
    done: list[str] = field(default_factory=list)
    """What else changed (standard output)."""
    warnings: list[str] = field(default_factory=list)
    """What the user must look at (standard error)."""


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
                           read_meta(home.path).get("description", ""), provider, model)

    def infos(self) -> list[ProfileInfo]:
        return [self.info(n) for n in [DEFAULT_PROFILE, *self.names()]]

    # -- mutations -------------------------------------------------------

    @contextmanager
    def locked(self) -> Iterator[None]:
        from filelock import FileLock

        private_dir(self.profiles_dir)
        with FileLock(str(self.profiles_dir / ".lock"), timeout=30):
            yield

    def new_path(self, name: str) -> Path:
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
        self.new_path(name)
        origin = self._resolve_source(source, clone or clone_all)
        with self.locked():
            target = self.new_path(name)
            staging = Path(tempfile.mkdtemp(prefix=f".staging-{name}-", dir=self.profiles_dir))
            try:
                if clone_all and isinstance(origin, Home):
                    copy_items(origin.path, staging, exclude=HISTORY_ITEMS | LOCAL_ITEMS)
                elif clone and isinstance(origin, Home):
                    copy_items(origin.path, staging, include=CLONE_ITEMS)
                elif isinstance(origin, Path):  # an example
                    copy_items(origin, staging, exclude=frozenset())
                elif isinstance(origin, Home):
                    atomic_write(staging / "config.yaml",
                                 f"# Profile {name}: only what differs from {origin.name}.\n"
                                 f"extends: {origin.name}\n")
                finish_new_home(staging, name, source, description)
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

    def switch(self, name: str) -> Home:
        """Make ``name`` the sticky active profile; ``default`` clears it."""
        home = self.home(name)
        private_dir(self.root)
        if name == DEFAULT_PROFILE:
            (self.root / ACTIVE_FILE).unlink(missing_ok=True)
        else:
            atomic_write(self.root / ACTIVE_FILE, name + "\n")
        return home

    def delete(self, name: str, *, force: bool = False) -> Outcome:
        """Delete a named profile, leaving a tombstone. Refuses while other profiles
        extend it, unless ``force`` (then they are named in the warnings)."""
        if name == DEFAULT_PROFILE:
            raise ProfileError("the default profile is the root itself and cannot be deleted")
        with self.locked():
            home = self.home(name)
            if not force:
                self.check_not_extended(name)
            dependants, warnings = self.dependants(name)
            warnings += [f'warning: {d.profile} extends "{name}" and will not load until its '
                         f"extends: changes ({d.config_file})" for d in dependants]
            done = stop_owned_gateway(home) + remove_aliases(read_meta(home.path))
            trash = self.profiles_dir / f".trash-{name}-{os.getpid()}-{time.time_ns()}"
            os.rename(home.path, trash)
            tomb = tombstone_path(self.root, name)
            private_dir(tomb.parent)
            atomic_write(tomb, time.strftime("%Y-%m-%dT%H:%M:%SZ\n", time.gmtime()))
            if read_active(self.root) == name:
                (self.root / ACTIVE_FILE).unlink(missing_ok=True)
                done.append("active profile reset to default")
        shutil.rmtree(trash, ignore_errors=True)
        return Outcome(home, done, warnings)

    def check_not_extended(self, name: str) -> None:
        """Refuse (listing them) when other profiles extend ``name``."""
        dependants, _ = self.dependants(name)
        if dependants:
            users = ", ".join(d.profile for d in dependants)
            raise ProfileError(
                f"profile {name}: extended by {users} — point their `extends:` elsewhere first "
                f"(`hermes -p {dependants[0].profile} config edit`), or delete with --force")

    def dependants(self, name: str) -> tuple[list[Dependant], list[str]]:
        """Profiles extending ``name``, and warnings about configs nobody can read."""
        found, unreadable = find_dependants(self.root, self.names(), name)
        return found, [f"warning: {path}: invalid YAML, not checked for `extends: {name}`"
                       for path in unreadable]

    def rename(self, old: str, new: str) -> Outcome:
        """Rename ``old`` to ``new``; profiles extending it and its alias scripts follow.
        All or nothing: if any step fails, every file is as it was."""
        if old == DEFAULT_PROFILE:
            raise ProfileError("the default profile cannot be renamed; "
                               "create a named copy with `hermes profile create NAME --clone-all`")
        with self.locked():
            home = self.home(old)
            target = self.new_path(new)
            dependants, warnings = self.dependants(old)
            meta = read_meta(home.path) | {"name": new}
            aliases = alias_paths(meta.get("aliases", []))
            try:
                self._move(home, target, meta, dependants, aliases)
            except OSError as exc:
                raise ProfileError(f"profile {old}: cannot rename to {new}: "
                                   f"{exc.filename or ''}: {exc.strerror or exc} — nothing was "
                                   "changed; fix that path and retry") from exc
            tombstone_path(self.root, new).unlink(missing_ok=True)
        done = [f"{d.profile} now extends {new} ({d.config_file})" for d in dependants]
        done += [f"alias {script} now runs hermes -p {new}" for script in aliases]
        return Outcome(home_for(self.root, new), done, warnings)

    def _move(self, home: Home, target: Path, meta: dict[str, Any],
              dependants: list[Dependant], aliases: list[Path]) -> None:
        """The steps of a rename, undone together if one fails."""
        with Rollback() as changes:
            changes.rename(home.path, target)
            changes.write(target / META_FILE, meta_text(meta))
            for dependant in dependants:
                changes.write(dependant.config_file, dependant.repointed(target.name))
            for script in aliases:
                changes.write(script, alias_script(target.name), mode=0o755)
            if read_active(self.root) == home.name:
                changes.write(self.root / ACTIVE_FILE, target.name + "\n")

    def export(self, name: str, output: Path) -> Path:
        """Write ``name`` as a tar.gz without ``.env``, secrets in config redacted."""
        return export_profile(self.home(name), name, output)

    def import_(self, archive: Path, name: str | None = None) -> Outcome:
        """Import an exported archive as a new profile; never overwrites. Redacted
        placeholders are removed from its config (``done`` names them)."""
        home, dropped = import_profile(self, archive, name)
        return Outcome(home, [f"removed {key}: <redacted> from config.yaml" for key in dropped])

    def alias(self, name: str, bin_dir: Path, alias_name: str | None = None) -> Path:
        """Write ``bin_dir/<alias>``: a wrapper running this installation's
        ``hermes -p NAME`` by its absolute path (it works without hermes on PATH)."""
        home = self.home(name)
        alias_name = alias_name or name
        validate_profile_name(alias_name, allow_default=True)
        script = bin_dir / alias_name
        if script.exists() and not is_alias(script):
            raise ProfileError(f"{script} exists and is not a hermes alias; "
                               "choose another name with --as")
        bin_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(script, alias_script(name), mode=0o755)
        if not home.is_default:
            meta = read_meta(home.path)
            meta["aliases"] = sorted(set(meta.get("aliases", [])) | {str(script)})
            write_meta(home.path, meta)
        return script
