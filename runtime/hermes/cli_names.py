"""The ``hermes`` commands: the one table of their names.

The CLI builds its command group from it (``cli/main.py``: a command's module is
imported only when that command runs), hints add the profile flag to the commands of
one profile (``hints.py``), plugins may not take these names (``plugins/host.py``), and
the console script sends the warm ones to the server (``entry.py``). A test holds the
table to the CLI's real command list. Imported on every start: it imports nothing.
"""

from __future__ import annotations


class CliEntry:
    """One ``hermes <name>`` command: its ``module`` under ``hermes.cli`` and the
    ``attribute`` there (a Typer app, or a function when it is one command rather than a
    ``group``); whether it acts on ``one_profile``'s home (a hint that runs it needs the
    profile flag); whether the profile's ``warm`` server may answer it (``entry.py``).
    A plain class: ``typing`` or ``dataclasses`` would cost every start ~10 ms."""

    __slots__ = ("attribute", "group", "module", "one_profile", "warm")

    def __init__(self, module: str, attribute: str, *, group: bool = True,
                 one_profile: bool = True, warm: bool = False) -> None:
        self.module = module
        self.attribute = attribute
        self.group = group
        self.one_profile = one_profile
        self.warm = warm


COMMANDS: dict[str, CliEntry] = {
    "chat": CliEntry("chat_cmd", "chat", group=False, warm=True),
    "profile": CliEntry("profile_cmd", "app", one_profile=False),
    "config": CliEntry("config_cmd", "app"),
    "setup": CliEntry("setup_cmd", "setup", group=False),
    "model": CliEntry("model_cmd", "model", group=False),
    "sessions": CliEntry("sessions_cmd", "app"),
    "prompt": CliEntry("prompt_cmd", "app"),
    "doctor": CliEntry("doctor_cmd", "doctor", group=False),
    "approvals": CliEntry("approvals_cmd", "app"),
    "gateway": CliEntry("gateway_cmd", "app"),
    "daemon": CliEntry("daemon_cmd", "app"),
    "sandbox": CliEntry("sandbox_cmd", "app"),
    "ab": CliEntry("ab_cmd", "app"),
    "skills": CliEntry("skills_cmd", "app"),
    "pairing": CliEntry("pairing_cmd", "app"),
    "identity": CliEntry("identity_cmd", "app"),
    "curator": CliEntry("curator_cmd", "app"),
    "cron": CliEntry("cron_cmd", "app"),
    "plugins": CliEntry("plugins_cmd", "app"),
    "hooks": CliEntry("hooks_cmd", "app"),
    "mcp": CliEntry("mcp_cmd", "app"),
    "acp": CliEntry("acp_cmd", "acp", group=False),
    "dashboard": CliEntry("dashboard_cmd", "dashboard", group=False),
}
"""Every built-in ``hermes`` command, in the order ``hermes --help`` lists them."""

ONESHOT = "-z"
"""``hermes -z TEXT``: the one-shot flag, standing where a command would."""
RESERVED = ("help", "version")
"""Names no plugin may take although no command has them (they read as help)."""


def one_profile_commands() -> tuple[str, ...]:
    """The command words that act on one profile, the one-shot flag first."""
    return (ONESHOT, *(name for name, c in COMMANDS.items() if c.one_profile))


def warm_commands() -> tuple[str, ...]:
    """The command words the warm server may answer, the one-shot flag first."""
    return (ONESHOT, *(name for name, c in COMMANDS.items() if c.warm))


def taken_names() -> frozenset[str]:
    """``hermes`` command names a plugin may not register."""
    return frozenset((*COMMANDS, *RESERVED))
