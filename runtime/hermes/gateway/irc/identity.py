"""Who an IRC sender is. A nick is anyone's for the taking, so an allowed user is written
as a mask, ``nick!user@host`` with ``*`` and ``?`` wildcards (the host is the server's
word: an address or a cloak), or as a services account, ``$a:alice``, which counts only
when the server vouches for it: the IRCv3 ``account-tag`` on the message, or the
``extended-join`` / ``account-notify`` news of a user in a shared channel.

The gateway's gate compares user ids with ``allowed_users`` as they are written, so a
sender's user id is the first entry that matches them; a sender no entry matches has
their account (``$a:NAME``) or, without one, their full ``nick!user@host`` as user id:
what a pairing code is issued for and approved."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from hermes.errors import ConfigError
from hermes.gateway.irc.protocol import fold

ACCOUNT = "$a:"


@dataclass(frozen=True)
class Sender:
    """Where a message came from, and the account the server says they are logged in to
    (None: not known; "": known to be none)."""

    nick: str
    user: str
    host: str
    account: str | None = None

    @property
    def mask(self) -> str:
        return f"{self.nick}!{self.user}@{self.host}"

    @classmethod
    def of(cls, source: str, account: str | None = None) -> Sender:
        nick, _, rest = source.partition("!")
        user, _, host = rest.partition("@")
        return cls(nick, user, host, account)


class AllowList:
    """A platform's ``allowed_users``, checked for entries that can only mislead."""

    def __init__(self, entries: Iterable[str], key: str):
        self.entries = [entry.strip() for entry in entries]
        for entry in self.entries:
            _check(entry, key)
        self._masks = [(entry, _pattern(entry)) for entry in self.entries
                       if not entry.startswith(ACCOUNT)]

    def user_id(self, sender: Sender) -> str:
        """The allowlist entry ``sender`` matches, else their own id (account or mask)."""
        if sender.account:
            for entry in self.entries:
                if entry.startswith(ACCOUNT) and \
                        fold(entry[len(ACCOUNT):]) == fold(sender.account):
                    return entry
        for entry, pattern in self._masks:
            if pattern.fullmatch(fold(sender.mask)):
                return entry
        return f"{ACCOUNT}{sender.account}" if sender.account else sender.mask


def _check(entry: str, key: str) -> None:
    if entry.startswith(ACCOUNT):
        if len(entry) == len(ACCOUNT) or " " in entry:
            raise ConfigError(f"{entry!r} names no account; write $a:ACCOUNT", key=key)
        return
    if not re.fullmatch(r"[^!@\s]+![^!@\s]+@[^!@\s]+", entry):
        nick = entry.split("!")[0] or "alice"
        raise ConfigError(f"{entry!r} is not an IRC mask: anyone can take a nick, so write "
                          f"nick!user@host with * wildcards (e.g. {nick}!*@their.host), or "
                          f"the services account, $a:{nick}", key=key)


def _pattern(mask: str) -> re.Pattern[str]:
    """``*``: any run of characters, ``?``: one; the rest as written (case folded)."""
    return re.compile(re.escape(fold(mask)).replace(r"\*", ".*").replace(r"\?", "."), re.S)
