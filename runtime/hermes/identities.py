"""One person across platforms: ``telegram:123`` and ``discord:456`` linked are one user.

A person is a set of addresses, ``platform:user_id`` (the platform's name in config, the
user id as the platform gives it). Linked addresses share what belongs to the user rather
than to a conversation: ``session_search`` finds the sessions of all of them (and never
those of another person); each conversation stays its own session.

Linking is the owner's act (``hermes identity link A B``) or the person's own, with a code:
the owner runs ``hermes identity link A --code``, or the person sends ``/link`` from A, and
the code (8 characters, ten minutes, stored only as a salted scrypt hash) is sent back from
B as ``/link CODE``: whoever holds it speaks for A.

One file, ``<home>/identities.json`` (0600, written atomically under a file lock: the
gateway and the CLI share it). A leaf of the foundation: the CLI, the gateway and the tools
read it.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.chats import MessageSource
from hermes.codes import code_matches, is_code, new_code, normalise_code, read_json_object
from hermes.errors import UserError
from hermes.fsutil import atomic_write, private_dir

FILE = "identities.json"
ADDRESS = re.compile(r"^(?P<platform>[A-Za-z0-9_-]{1,64}):(?P<user>\S+)$")
CODE_TTL = 600.0
"""Seconds a link code stays valid."""
Clock = Callable[[], float]


class IdentityError(UserError):
    """An identity command that cannot be done (a malformed address, a wrong code)."""


def parse_address(text: str) -> str:
    """``platform:user_id`` as stored; ``IdentityError`` naming the form otherwise."""
    text = text.strip()
    if not ADDRESS.match(text):
        raise IdentityError(f"{text!r} is not an address; write platform:user_id, e.g. "
                            "telegram:123456789 or discord:80351110224678912")
    return text


def address_of(platform: str, user_id: str) -> str | None:
    """The address of a message's sender, or None when the platform names nobody."""
    return f"{platform}:{user_id}" if platform and user_id else None


@dataclass(frozen=True)
class Person:
    """Addresses that are one user."""

    id: str
    addresses: tuple[str, ...]
    linked_at: float


class IdentityStore:
    """``<home>/identities.json``: people and the link codes waiting."""

    def __init__(self, home_path: Path, clock: Clock = time.time):
        self.path = home_path / FILE
        self.clock = clock

    def people(self) -> list[Person]:
        """Every person with two addresses or more, oldest link first."""
        data = self._read()
        return sorted((_person(pid, entry) for pid, entry in data["people"].items()),
                      key=lambda p: p.linked_at)

    def same_person(self, address: str) -> frozenset[str]:
        """``address`` and every address linked to it (an unreadable file links none)."""
        try:
            people = self._read()["people"]
        except IdentityError:
            return frozenset({address})
        for entry in people.values():
            if address in entry["addresses"]:
                return frozenset(entry["addresses"])
        return frozenset({address})

    def link(self, addresses: Iterable[str]) -> Person:
        """One person of ``addresses`` and everyone already linked to any of them."""
        wanted = list(dict.fromkeys(parse_address(a) for a in addresses))
        if len(wanted) < 2:
            raise IdentityError("link needs two different addresses (or one with --code)")
        with self._editing() as data:
            return _merge(data["people"], wanted, self.clock())

    def unlink(self, address: str) -> Person:
        """Take ``address`` out of its person (a person left with one address ends);
        the person as it was."""
        address = parse_address(address)
        with self._editing() as data:
            for pid, entry in data["people"].items():
                if address in entry["addresses"]:
                    before = _person(pid, entry)
                    entry["addresses"].remove(address)
                    if len(entry["addresses"]) < 2:
                        del data["people"][pid]
                    return before
            raise IdentityError(f"{address} is not linked to anyone (`hermes identity "
                                "list` shows the links)")

    def issue_code(self, address: str) -> str:
        """A new code that links whoever sends it to ``address``."""
        address = parse_address(address)
        code, stored = new_code()
        with self._editing() as data:
            data["codes"][secrets.token_hex(8)] = {**stored, "address": address,
                                                   "created_at": self.clock()}
        return code

    def redeem(self, code: str, address: str) -> Person:
        """Link ``address`` to the one the code was issued for; the code is used up."""
        address, code = parse_address(address), normalise_code(code)
        with self._editing() as data:
            found = _matching(data["codes"], code, self.clock())
            if found is None:
                raise IdentityError("no such link code, or it expired (codes last "
                                    f"{int(CODE_TTL // 60)} minutes); ask for a new one")
            issued_for = str(data["codes"].pop(found)["address"])
            if issued_for == address:
                raise IdentityError(f"this code links {address} to another account; send "
                                    "it from that one")
            return _merge(data["people"], [issued_for, address], self.clock())

    def _read(self) -> dict[str, Any]:
        return _parse(self.path) if self.path.exists() else _blank()

    @contextmanager
    def _editing(self) -> Iterator[dict[str, Any]]:
        """The file's data, written back (0600, atomically) when the block ends without
        an exception; nothing is written otherwise."""
        from filelock import FileLock

        private_dir(self.path.parent)
        with FileLock(str(self.path.with_suffix(".lock")), timeout=30, mode=0o600):
            data = self._read()
            yield data
            now = self.clock()
            data["codes"] = {k: c for k, c in data["codes"].items()
                             if now - c["created_at"] < CODE_TTL}
            atomic_write(self.path, json.dumps(data, indent=2) + "\n", mode=0o600)


def _merge(people: dict[str, Any], addresses: list[str], now: float) -> Person:
    """Merge the people holding any of ``addresses`` with them into one."""
    joined = [pid for pid, entry in people.items()
              if set(entry["addresses"]) & set(addresses)]
    merged = list(dict.fromkeys([a for pid in joined for a in people[pid]["addresses"]]
                                + addresses))
    if len(joined) == 1 and len(merged) == len(people[joined[0]]["addresses"]):
        raise IdentityError(f"{' and '.join(addresses)} are linked already")
    pid = joined[0] if joined else secrets.token_hex(4)
    for other in joined[1:]:
        del people[other]
    people[pid] = {"addresses": merged, "linked_at": now}
    return _person(pid, people[pid])


def _person(pid: str, entry: dict[str, Any]) -> Person:
    return Person(pid, tuple(entry["addresses"]), float(entry.get("linked_at", 0.0)))


def _matching(codes: dict[str, Any], code: str, now: float) -> str | None:
    if not is_code(code):
        return None
    for code_id, entry in codes.items():
        if now - entry["created_at"] < CODE_TTL and code_matches(code, entry):
            return str(code_id)
    return None


def _blank() -> dict[str, Any]:
    return {"people": {}, "codes": {}}


def _parse(path: Path) -> dict[str, Any]:
    """The file's data; an unreadable or malformed file is an error, never "nobody"."""
    return _blank() | read_json_object(path, "identities", IdentityError)


def chat_link(store: IdentityStore, source: MessageSource, code: str) -> str:
    """``/link`` in a chat: a code for this account, or ``/link CODE`` from the other
    account to link the two; the one-line answer."""
    address = address_of(source.platform, source.user_id)
    if source.chat_type != "direct" or address is None:
        return "link your accounts in a direct message with the agent"
    try:
        if not code.strip():
            issued = store.issue_code(address)
            return (f"your link code: {issued} — send /link {issued} to the agent from your "
                    f"other account within {int(CODE_TTL // 60)} minutes")
        person = store.redeem(code, address)
    except IdentityError as exc:
        return str(exc)
    return f"linked {', '.join(person.addresses)}: one user now"
