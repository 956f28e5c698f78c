"""The files of a new profile: what is copied from another one, what every home gets."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from hermes.credentials import write_env_file
from hermes.fsutil import atomic_write
from hermes.home import ACTIVE_FILE
from hermes.profiles.links import META_FILE, write_meta

# What --clone copies; --clone-all copies everything except HISTORY.
CLONE_ITEMS = ("config.yaml", ".env", "SOUL.md", "skills", "memories", "conf")
HISTORY_ITEMS = frozenset(
    {"state.db", "state.db-wal", "state.db-shm", "cron", "logs", "backups", "gateway.pid",
     ".cache"}
)
# Never copied into or out of another profile.
LOCAL_ITEMS = frozenset({META_FILE, "profiles", ACTIVE_FILE, ".lock", "dashboard"})


def copy_items(
    src: Path,
    dst: Path,
    *,
    include: tuple[str, ...] | None = None,
    exclude: frozenset[str] = frozenset(),
) -> None:
    """Copy ``include`` (or everything but ``exclude``) from ``src`` to ``dst``; never
    symlinks, never what belongs to one profile only (``LOCAL_ITEMS``)."""
    names = include if include is not None else [p.name for p in src.iterdir()]
    for item in names:
        path = src / item
        if item in exclude or item in LOCAL_ITEMS or not path.exists() or path.is_symlink():
            continue
        if path.is_dir():
            shutil.copytree(path, dst / item, symlinks=True)
        else:
            shutil.copy2(path, dst / item)


def finish_new_home(staging: Path, name: str, source: str | None, description: str) -> None:
    """Give a staged home what every home has: modes, directories, ``.env``,
    ``config.yaml`` and ``profile.json``."""
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
    write_meta(staging, meta)
