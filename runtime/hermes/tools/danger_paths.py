"""Which files a shell command writes, and which of those hold secrets or run at login.

A command writes through redirections (``>``, ``>>``, ``&>``), ``tee``,
``cp``/``mv``/``install``/``ln``/``rsync`` destinations (and ``mv`` sources),
in-place editors (``sed -i``, ``perl -i``, ``ruby -i``), ``dd of=``,
``truncate``, ``curl -o``/``wget -O`` and deletions (``rm``, ``shred``). Each
target is resolved as the shell would (``~``, ``$HOME``, ``$HERMES_HOME``,
relative to the working directory, ``..`` collapsed, symlinks followed) and
classified: any Hermes profile's ``config.yaml`` and ``.env`` (this one or any
other under the root or ``~/.hermes``), a project's ``.env`` files always. A
project's ``config.yaml`` counts only when it is replaced whole
(``replacement_targets``: ``>``, ``tee``, ``cp``, ``mv``), not edited in place.
Look-alikes stay ordinary: ``config.yaml.bak``, ``.env#backup``.
"""

from __future__ import annotations

import math
import os
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hermes.home import default_root
from hermes.tools.commands import SimpleCommand, is_option
from hermes.tools.paths import CREDENTIAL_PATHS, RUNTIME_FILES

SHELL_STARTUP = (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
                 ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc",
                 ".cshrc", ".tcshrc", ".login", ".config/fish", ".xprofile", ".xinitrc",
                 ".xsession", ".config/autostart", ".config/environment.d",
                 ".config/systemd/user", ".pam_environment")
PROJECT_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})
HERMES_FILES = (*RUNTIME_FILES, "active_profile")
SYSTEM_DIRS = frozenset({
    "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "opt", "proc",
    "root", "run", "sbin", "srv", "sys", "usr", "var", "nix",
    "Applications", "Library", "System", "Users", "private",  # macOS
})
"""Top-level directories whose recursive delete leaves no working machine."""
VAR = re.compile(r"\$\{(\w+)(?::?[-=]([^}]*))?\}|\$(\w+)")


@dataclass(frozen=True)
class Whereabouts:
    """Where a command runs, for resolving the paths it names."""

    cwd: Path
    user_home: Path
    hermes_root: Path
    """The Hermes root (``~/.hermes``): every profile's config and secrets are under it."""
    hermes_home: Path
    """This profile's home (``$HERMES_HOME``)."""
    deadline: float = math.inf
    """When matching globs against the file system stops (``time.monotonic()``):
    ``detect_dangers`` gives each command line a bounded time."""

    @classmethod
    def of_process(cls) -> Whereabouts:
        """This process's view: its cwd, ``$HOME``, ``$HERMES_HOME`` or ``~/.hermes``."""
        user_home = Path(os.environ.get("HOME") or Path.home())
        root = default_root(os.environ)
        home = Path(os.environ.get("HERMES_HOME") or root)
        return cls(Path.cwd(), user_home, root, home)


def write_targets(cmd: SimpleCommand) -> Iterator[str]:
    """The paths ``cmd`` writes, creates, replaces or deletes, as written."""
    yield from cmd.output_files
    name, args = cmd.name, cmd.args
    operands = [a for a in args if not is_option(a)]
    if name == "tee" or name in ("truncate", "rm", "unlink", "shred", "srm"):
        yield from _without_option_values(args, {"-s", "--size", "-n", "--iterations"})
    elif name in ("cp", "mv", "install", "ln", "rsync", "scp"):
        yield from _copy_destinations(args, operands)
        if name == "mv":
            yield from operands[:-1]
    elif name == "sed" and _in_place(args, "sed"):
        yield from _sed_files(args)
    elif name in ("perl", "ruby") and _in_place(args, name):
        yield from _without_option_values(args, {"-e", "-E"})[1 if "-e" not in args else 0:]
    elif name == "dd":
        yield from (a[3:] for a in args if a.startswith("of="))
    elif name in ("curl", "wget"):
        yield from _download_outputs(args, "o" if name == "curl" else "O")


def replacement_targets(cmd: SimpleCommand) -> list[str]:
    """The files ``cmd`` replaces or appends to whole: redirections, ``tee``, and the
    destinations of ``cp``/``mv``/``install`` (not in-place edits, downloads or deletes)."""
    found = list(cmd.output_files)
    if cmd.name == "tee":
        found += _without_option_values(cmd.args, set())
    elif cmd.name in ("cp", "mv", "install"):
        found += _copy_destinations(cmd.args, [a for a in cmd.args if not is_option(a)])
    return found


def _without_option_values(args: list[str], value_options: set[str]) -> list[str]:
    found: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in value_options:
            skip = True
        elif not is_option(arg):
            found.append(arg)
    return found


def _copy_destinations(args: list[str], operands: list[str]) -> list[str]:
    for index, arg in enumerate(args):
        if arg in ("-t", "--target-directory") and index + 1 < len(args):
            return [args[index + 1]]
        if arg.startswith("--target-directory="):
            return [arg.split("=", 1)[1]]
    operands = [a for a in operands if a not in ("-m", "-o", "-g")]
    if len(operands) < 2:
        return operands[-1:] if "-d" in args else []
    destination = operands[-1]
    if destination.endswith("/"):
        return [destination + posixpath.basename(src.rstrip("/")) for src in operands[:-1]]
    return [destination]


def _in_place(args: list[str], program: str) -> bool:
    for arg in args:
        if arg.startswith("--in-place") or arg in ("-i",):
            return True
        if arg.startswith("-") and not arg.startswith("--"):
            letters = arg[1:]
            if program == "sed" and "i" in letters.split("e")[0].split("f")[0]:
                return True
            if program != "sed" and letters.split("e")[0].count("i"):
                return True
    return False


def _sed_files(args: list[str]) -> list[str]:
    operands = _without_option_values(args, {"-e", "-f", "--expression", "--file", "-l"})
    has_script_option = any(a in ("-e", "-f") or a.startswith(("--expression", "--file"))
                            for a in args)
    return operands if has_script_option else operands[1:]


def _download_outputs(args: list[str], letter: str) -> list[str]:
    """``-o FILE`` (also clustered: curl's ``-so FILE``, wget's ``-qO FILE``),
    ``--output FILE``, ``--output=FILE``."""
    found: list[str] = []
    for index, arg in enumerate(args[:-1]):
        clustered = re.fullmatch(f"-[A-Za-z]*{letter}", arg) is not None
        if clustered or arg in ("-o", "--output", "-O", "--output-document"):
            found.append(args[index + 1])
    found.extend(a.split("=", 1)[1] for a in args
                 if a.startswith(("--output=", "--output-document=")))
    return [f for f in found if f != "-"]


def resolve(target: str, where: Whereabouts) -> Path:
    """``target`` as the shell would open it: variables and ``~`` expanded, absolute,
    ``..`` collapsed, existing symlinks followed."""
    text = expand(target, where)
    path = Path(text) if text.startswith("/") else where.cwd / text
    return Path(os.path.realpath(posixpath.normpath(str(path))))


def expand(target: str, where: Whereabouts) -> str:
    """``target`` with ``$HOME``, ``$HERMES_HOME``, ``$PWD`` and ``~`` (``~user`` too)
    expanded as the shell would; other variables stay as written."""
    known = {"HOME": str(where.user_home), "HERMES_HOME": str(where.hermes_home),
             "PWD": str(where.cwd)}

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        return known.get(name, match.group(2) if match.group(2) is not None else match.group(0))

    text = VAR.sub(value, target)
    if text == "~" or text.startswith("~/"):
        return str(where.user_home) + text[1:]
    return posixpath.expanduser(text) if text.startswith("~") else text


def classify(path: Path, where: Whereabouts) -> tuple[str, str] | None:
    """``(danger key, what the file is)`` for a sensitive path, else None."""
    text = str(path)
    home = os.path.realpath(where.user_home)
    if _within(text, home):
        for names, key, what in ((CREDENTIAL_PATHS, "write_credentials", "credentials"),
                                 (SHELL_STARTUP, "write_shell_startup", "runs at login")):
            for name in names:
                if _within(text, f"{home}/{name}"):
                    return key, f"~/{name} ({what})"
    hermes_dirs = (where.hermes_root, where.hermes_home, where.user_home / ".hermes")
    for base in {os.path.realpath(directory) for directory in hermes_dirs}:
        if _within(text, base) and (path.name in HERMES_FILES or "conf" in
                                     text[len(base):].split("/")[1:-1]):
            return "write_hermes_config", f"{path.name} of a Hermes profile"
    if text.startswith(("/etc/", "/private/etc/")) or text in ("/etc", "/private/etc"):
        return "write_etc", "system configuration"
    name = path.name
    if (name == ".env" or name.startswith(".env.")) and name not in PROJECT_TEMPLATES:
        return "write_project_config", f"{name} (a project's secrets)"
    return None


def _within(path: str, base: str) -> bool:
    """``path`` is ``base`` or under it (both absolute, normalised)."""
    return path == base or path.startswith(base.rstrip("/") + "/")
