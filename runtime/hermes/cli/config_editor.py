"""``hermes config edit``: the profile's config.yaml in ``$VISUAL``/``$EDITOR``.

The user edits a private copy in ``$TMPDIR``; the profile's file is replaced
(atomically) only when the copy composes and validates. A failed check offers
to re-open the editor when someone is at the terminal; otherwise the edit is
kept in the copy and the command fails. An editor that cannot run leaves
nothing behind.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hermes.errors import ConfigError
from hermes.home import Home


@dataclass
class EditorCopy:
    """A private temporary copy the user edits."""

    path: Path
    keep: bool = False
    """Leave the file behind (a refused edit the user should not lose)."""


@contextmanager
def editor_copy(text: str, environ: Mapping[str, str], *, prefix: str,
                suffix: str) -> Iterator[EditorCopy]:
    """``text`` in a new private file in ``$TMPDIR``, removed afterwards unless kept."""
    fd, name = tempfile.mkstemp(suffix=suffix, prefix=prefix, dir=environ.get("TMPDIR") or None)
    os.close(fd)
    copy = EditorCopy(Path(name))
    try:
        copy.path.write_text(text, encoding="utf-8")
        yield copy
    finally:
        if not copy.keep:
            copy.path.unlink(missing_ok=True)


def edit_config(home: Home, environ: Mapping[str, str]) -> str:
    """Run the editor until the result is valid or the user gives up; what happened."""
    original = home.config_file.read_text(encoding="utf-8") if home.config_file.exists() else ""
    with editor_copy(original, environ, prefix="hermes-config-", suffix=".yaml") as copy:
        while True:
            run_editor(environ, copy.path, home.child_env(environ))
            text = copy.path.read_text(encoding="utf-8")
            if text == original:
                return "no changes"
            problem = _problem(home, environ, text)
            if problem is None:
                break
            if not _offer_reopen(problem):
                copy.keep = True
                raise ConfigError(f"{problem.detail}; your edit is kept in {copy.path}, "
                                  "config.yaml is unchanged", source=problem.source,
                                  key=problem.key) from problem
    _save(home, text)
    return f"saved {home.config_file}"


def _problem(home: Home, environ: Mapping[str, str], text: str) -> ConfigError | None:
    from hermes.config import compose_config

    try:
        compose_config(home, environ, profile_text=text)
    except ConfigError as exc:
        return exc
    return None


def _offer_reopen(problem: ConfigError) -> bool:
    """Ask whether to fix the edit in the editor; only when stdin is a terminal."""
    if not sys.stdin.isatty():
        return False
    import typer

    sys.stderr.write(f"error: {problem}\n")
    try:
        return typer.confirm("re-open the editor to fix it?", default=True, err=True)
    except (typer.Abort, EOFError):
        return False


def _save(home: Home, text: str) -> None:
    from hermes.fsutil import atomic_write, private_dir

    private_dir(home.path)
    atomic_write(home.config_file, text, mode=0o600)


def editor_command(environ: Mapping[str, str]) -> tuple[str, str]:
    """``(variable, command)``: ``$VISUAL``, else ``$EDITOR``, else ``vi``."""
    for variable in ("VISUAL", "EDITOR"):
        if environ.get(variable, "").strip():
            return variable, environ[variable]
    return "EDITOR", "vi"


def run_editor(environ: Mapping[str, str], path: Path, child_env: Mapping[str, str],
               unchanged: str = "config.yaml") -> None:
    """Run the user's editor on ``path``; a ``ConfigError`` if it cannot run or fails
    (saying that ``unchanged`` was left as it was)."""
    variable, command = editor_command(environ)
    fix = f"set ${variable} to an installed editor, e.g. `export {variable}=nano`"
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ConfigError(f"cannot parse {command!r} ({exc}) — {fix}",
                          source=f"${variable}") from exc
    try:
        result = subprocess.run([*argv, str(path)], env=dict(child_env), check=False)
    except OSError as exc:
        reason = "not found" if isinstance(exc, FileNotFoundError) else exc.strerror or str(exc)
        raise ConfigError(f'cannot run "{argv[0]}" ({reason}) — {fix}',
                          source=f"${variable}") from exc
    if result.returncode != 0:
        raise ConfigError(f'"{argv[0]}" exited with status {result.returncode}; {unchanged} '
                          f"is unchanged — save and quit the editor normally to keep an edit",
                          source=f"${variable}")
