"""Commands printed for the user to run next carry the profile they ran with.

A hint such as `hermes ab resume ID`, printed to someone who ran
``hermes -p demo ab ...``, would act on another profile (or fail). Hints built where
the home is known use ``command``; messages built where it is not (config, provider
and session errors) are written without a profile and go through ``for_profile``
where the CLI prints them. Profile management commands (``hermes profile ...``)
name their profiles themselves and are left alone.
"""

from __future__ import annotations

import re

from hermes.cli_names import one_profile_commands
from hermes.home import DEFAULT_PROFILE

PROFILE_COMMANDS = one_profile_commands()
"""Commands that act on one profile (every one but ``profile``, from the table of
``hermes`` commands): a hint running one needs the profile flag."""

# "hermes CMD" where CMD acts on a profile and no -p follows; not "the hermes server".
_COMMAND = "|".join(re.escape(c) for c in PROFILE_COMMANDS)
_HINT = re.compile(rf"(?<![\w./=-])hermes (?=(?:{_COMMAND})(?:[\s`]|$))")


def profile_flag(profile: str | None, *, always: bool = False) -> str:
    """``-p NAME `` for a profile other than the default (for any with ``always``)."""
    if profile is None or (profile == DEFAULT_PROFILE and not always):
        return ""
    return f"-p {profile} "


def command(profile: str | None, args: str) -> str:
    """``hermes -p NAME ARGS``, or ``hermes ARGS`` for the default profile."""
    return f"hermes {profile_flag(profile)}{args}"


def for_profile(text: str, profile: str | None, *, always: bool = False) -> str:
    """``text`` with the profile flag added to every hint that runs a command of one
    profile and names none. ``always`` writes ``-p default`` too, for a message about
    a profile other than the one the user ran with."""
    flag = profile_flag(profile, always=always)
    return _HINT.sub(f"hermes {flag}", text) if flag else text
