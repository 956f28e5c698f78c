"""Global flags read before any command module loads (kept light: the thin client and
the in-process CLI both use them)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

PROFILE_FLAGS = ("-p", "--profile")


class MissingProfileName(ValueError):
    """``-p`` with no name after it."""


def split_profile_flag(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """Take ``-p NAME`` / ``--profile NAME`` / ``--profile=NAME`` from anywhere before ``--``;
    a flag without a name is an error (exit 2)."""
    try:
        return parse_profile_flag(argv)
    except MissingProfileName as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(2) from None


def parse_profile_flag(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """``split_profile_flag`` without output: raises ``MissingProfileName``."""
    profile: str | None = None
    rest: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            rest += args[i:]
            break
        if token in PROFILE_FLAGS:
            if i + 1 >= len(args) or args[i + 1].startswith("-"):
                raise MissingProfileName(f"{token} needs a profile name")
            profile = args[i + 1]
            i += 2
            continue
        if token.startswith("--profile="):
            profile = token.split("=", 1)[1]
        else:
            rest.append(token)
        i += 1
    return profile, rest
