"""The home's files: permissions and layout, ``state.db`` integrity, ``.env`` syntax."""

from __future__ import annotations

import sqlite3

from hermes.doctor.base import Check
from hermes.fsutil import file_mode
from hermes.home import Home


def check_home(home: Home) -> list[Check]:
    if not home.path.exists():
        return [Check("home", "warn", f"{home.path} does not exist yet",
                      "it is created on first use, or `hermes profile create NAME`")]
    checks = [_directory_permissions(home)]
    for secret_file in (home.env_file, home.sessions_db):
        if secret_file.exists():
            mode = file_mode(secret_file)
            checks.append(Check(f"{secret_file.name} permissions", "fail" if mode & 0o077 else "ok",
                                oct(mode), f"chmod 600 {secret_file}" if mode & 0o077 else ""))
    missing = [d.name for d in (home.memories_dir, home.skills_dir, home.logs_dir)
               if not d.is_dir()]
    checks.append(Check("home layout", "warn" if missing else "ok",
                        f"missing: {', '.join(missing)}" if missing else "memories, skills, logs",
                        f"mkdir -p {' '.join(str(home.path / m) for m in missing)}"
                        if missing else ""))
    return checks


def _directory_permissions(home: Home) -> Check:
    """The root, the home and the directories in it are 0700: others may not even list
    them (writable by others is a failure, readable a warning)."""
    directories = [home.root, home.path] if home.root != home.path else [home.path]
    directories += sorted(p for p in home.path.iterdir() if p.is_dir() and not p.is_symlink())
    opened = [d for d in directories if file_mode(d) & 0o077]
    if not opened:
        return Check("home permissions", "ok", f"{home.path} and its directories are 0700")
    writable = any(file_mode(d) & 0o022 for d in opened)
    detail = ", ".join(f"{d} is {oct(file_mode(d))}" for d in opened)
    return Check("home permissions", "fail" if writable else "warn",
                 f"others can enter {detail}", "chmod 700 " + " ".join(map(str, opened)))


def check_state_db(home: Home) -> list[Check]:
    """``state.db`` opens and passes ``PRAGMA quick_check`` (read-only; nothing is written)."""
    db = home.sessions_db
    if not db.exists():
        return [Check("state.db", "ok", "not created yet (made by the first chat)")]
    fix = (f"keep a copy and start afresh: mv {db} {db}.corrupt "
           "(sessions are then empty; the copy can be recovered with sqlite3 .recover)")
    try:
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=2)
        try:
            rows = [row[0] for row in connection.execute("PRAGMA quick_check")]
        finally:
            connection.close()
    except sqlite3.Error as exc:
        return [Check("state.db", "fail", f"{db}: cannot open: {exc}", fix)]
    if rows != ["ok"]:
        return [Check("state.db", "fail", f"{db}: quick_check: {rows[0]}", fix)]
    return [Check("state.db", "ok", "opens; quick_check ok")]


def check_env_file(home: Home) -> list[Check]:
    """Every line of ``.env`` parses (a bad line is silently skipped when it is read)."""
    from hermes.config.dotenv_edit import unparsed_lines

    if not home.env_file.exists():
        return []
    bad = unparsed_lines(home.env_file)
    if not bad:
        return [Check(".env", "ok", "every line parses")]
    where = ", ".join(f"{home.env_file}:{line}" for line in bad)
    return [Check(".env", "fail", f"cannot parse {where} (ignored when read)",
                  "write each line as KEY=value, or comment it out with #")]
