"""Where a profile lives: the ``Home`` object and how it is resolved.

Resolution order (first that applies wins):

1. ``-p/--profile NAME`` on the command line;
2. ``HERMES_HOME`` in the environment;
3. the sticky active profile recorded in the root (``hermes profile switch``);
4. the default profile, which is the root itself.

The root defaults to ``~/.hermes``. Named profiles live in
``<root>/profiles/<name>/``. When ``HERMES_HOME`` points at such a directory,
the root is derived from it, so ``-p`` and ``profile list`` keep working.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from hermes.errors import ProfileError
from hermes.fsutil import private_dir

DEFAULT_PROFILE = "default"
PROFILES_DIR = "profiles"
ACTIVE_FILE = "active_profile"
TOMBSTONES_DIR = ".tombstones"
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
# Names that would collide with the CLI, the layout, or each other's meaning.
RESERVED_NAMES = frozenset(
    {"default", "hermes", "profiles", "profile", "root", "active", "current", "all", "none", "self"}
)


def validate_profile_name(name: str, *, allow_default: bool = False) -> str:
    """Return ``name`` if it is a valid profile name, else raise ``ProfileError``.

    Checked before any file is touched, so ``..``, ``/`` and friends never reach
    the file system.
    """
    if allow_default and name == DEFAULT_PROFILE:
        return name
    if not NAME_PATTERN.fullmatch(name):
        raise ProfileError(
            f'invalid profile name "{name}": use 1-64 of a-z, 0-9, "_" and "-", '
            "starting with a letter or digit"
        )
    if name in RESERVED_NAMES:
        raise ProfileError(f'"{name}" is a reserved name; choose another profile name')
    return name


class Home:
    """One profile's directory and the names of everything inside it. Immutable, equal
    by value. (A plain class, not a dataclass: the warm server's thin client imports
    this module, and ``dataclasses`` with the ``inspect`` and ``ast`` it loads cost it
    ~14 ms of every command's ~50 ms of imports.)"""

    __slots__ = ("path", "root", "name")

    path: Path
    """The profile's home directory (``HERMES_HOME``)."""
    root: Path
    """The root holding the default profile and ``profiles/``."""
    name: str
    """The profile's name; ``default`` for the root itself."""

    def __init__(self, path: Path, root: Path, name: str) -> None:
        for field, value in (("path", path), ("root", root), ("name", name)):
            object.__setattr__(self, field, value)

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, field) for field in self._names())

    @classmethod
    def _names(cls) -> tuple[str, ...]:
        return tuple(name for klass in reversed(cls.__mro__)
                     for name in getattr(klass, "__slots__", ()))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Home) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in
                          zip(self._names(), self._fields(), strict=True))
        return f"{type(self).__name__}({shown})"

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:  # copy and pickle
        return type(self), self._fields()

    @property
    def config_file(self) -> Path:
        return self.path / "config.yaml"

    @property
    def env_file(self) -> Path:
        return self.path / ".env"

    @property
    def conf_dir(self) -> Path:
        """Profile-local config group options: ``conf/<group>/<option>.yaml``."""
        return self.path / "conf"

    @property
    def meta_file(self) -> Path:
        return self.path / "profile.json"

    @property
    def soul_file(self) -> Path:
        return self.path / "SOUL.md"

    @property
    def memories_dir(self) -> Path:
        return self.path / "memories"

    @property
    def skills_dir(self) -> Path:
        return self.path / "skills"

    @property
    def plugins_dir(self) -> Path:
        return self.path / "plugins"

    @property
    def sessions_db(self) -> Path:
        return self.path / "state.db"

    @property
    def cron_dir(self) -> Path:
        return self.path / "cron"

    @property
    def logs_dir(self) -> Path:
        return self.path / "logs"

    @property
    def pairing_dir(self) -> Path:
        """Messaging pairing codes and paired users, one 0600 file per platform."""
        return self.path / "pairing"

    @property
    def is_default(self) -> bool:
        return self.name == DEFAULT_PROFILE

    def child_env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """Environment for a child process: ``base`` plus this ``HERMES_HOME``.

        Every subprocess the runtime starts gets its home explicitly; nothing
        selects a profile by mutating ``os.environ``.
        """
        env = dict(os.environ if base is None else base)
        env["HERMES_HOME"] = str(self.path)
        return env

    def ensure(self) -> Home:
        """Create the home's directories (0700) if missing; return self."""
        private_dir(self.path)
        for sub in (self.memories_dir, self.skills_dir, self.logs_dir):
            sub.mkdir(mode=0o700, exist_ok=True)
        return self


def default_root(environ: Mapping[str, str]) -> Path:
    """The root: derived from ``HERMES_HOME`` when set, else ``~/.hermes``."""
    home = environ.get("HERMES_HOME")
    if home:
        path = Path(home).expanduser().absolute()
        if path.parent.name == PROFILES_DIR:
            return path.parent.parent
        return path
    user_home = environ.get("HOME") or str(Path.home())
    return Path(user_home) / ".hermes"


def profile_path(root: Path, name: str) -> Path:
    """The directory of profile ``name`` under ``root`` (validated first)."""
    validate_profile_name(name, allow_default=True)
    return root if name == DEFAULT_PROFILE else root / PROFILES_DIR / name


def home_for(root: Path, name: str) -> Home:
    """The ``Home`` of profile ``name`` under ``root``, without touching disk."""
    return Home(path=profile_path(root, name), root=root, name=name)


def home_from_path(path: Path) -> Home:
    """The ``Home`` for a ``HERMES_HOME`` directory, deriving root and name."""
    path = path.expanduser().absolute()
    if path.parent.name == PROFILES_DIR and NAME_PATTERN.fullmatch(path.name):
        return Home(path=path, root=path.parent.parent, name=path.name)
    return Home(path=path, root=path, name=DEFAULT_PROFILE)


def read_active(root: Path) -> str | None:
    """The sticky active profile recorded in ``root``, if any."""
    try:
        name = (root / ACTIVE_FILE).read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return name or None


def tombstone_path(root: Path, name: str) -> Path:
    return root / PROFILES_DIR / TOMBSTONES_DIR / name


def require_existing(home: Home) -> Home:
    """Raise a helpful ``ProfileError`` unless a named profile exists on disk."""
    if home.is_default or home.path.is_dir():
        return home
    if tombstone_path(home.root, home.name).exists():
        raise ProfileError(
            f'profile "{home.name}" was deleted; create it again with '
            f"`hermes profile create {home.name}`"
        )
    raise ProfileError(
        f'profile "{home.name}" does not exist; create it with '
        f"`hermes profile create {home.name}` or see `hermes profile list`"
    )


def resolve_home(profile: str | None, environ: Mapping[str, str]) -> Home:
    """Resolve the home for this invocation (see the module docstring for the order)."""
    root = default_root(environ)
    if profile is not None:
        return require_existing(home_for(root, profile))
    env_home = environ.get("HERMES_HOME")
    if env_home:
        return home_from_path(Path(env_home))
    active = read_active(root)
    if active and active != DEFAULT_PROFILE:
        try:
            return require_existing(home_for(root, active))
        except ProfileError as exc:
            raise ProfileError(
                f"the active profile is broken: {exc}; run `hermes profile switch default`"
            ) from exc
    return home_for(root, DEFAULT_PROFILE)
