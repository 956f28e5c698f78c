"""How the matrix platform takes a sync response when the homeserver goes away in the
middle of it: nothing is answered as a group room by mistake, and the same sync is taken
again after the reconnect (``since`` does not move). The account is a stand-in speaking
the messaging core's errors; the real homeserver's tests are in ``test_matrix.py``."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hermes.config.schema import PlatformConfig
from hermes.gateway.base import MessageEvent
from hermes.gateway.matrix.platform import MatrixPlatform
from hermes.gateway.messaging.outbox import Disconnected, Rejected
from hermes.home import Home

ME, ALICE, ROOM = "@hermes:example.org", "@alice:example.org", "!room:example.org"


class Account:
    """A logged-in account whose first sync ends at ``s0``; it counts two members in a
    room until ``failure`` is set, then raises that."""

    user_id = ME

    def __init__(self) -> None:
        self.failure: Exception | None = None

    async def login(self) -> str:
        return ME

    async def display_name(self) -> str:
        return "Hermes"

    async def sync(self, since: str | None, timeout: int) -> dict[str, Any]:
        assert since is None, "only the first sync (history) is asked for here"
        return {"next_batch": "s0"}

    async def member_count(self, room_id: str) -> int:
        if self.failure is not None:
            raise self.failure
        return 2


def sync(batch: str, *bodies: str) -> dict[str, Any]:
    events = [{"type": "m.room.message", "sender": ALICE, "event_id": f"${batch}{n}",
               "content": {"msgtype": "m.text", "body": body}}
              for n, body in enumerate(bodies)]
    return {"next_batch": batch, "rooms": {"join": {ROOM: {"timeline": {"events": events}}}}}


@pytest.fixture
def platform(tmp_path: Path) -> MatrixPlatform:
    home = Home(tmp_path, tmp_path, "default")
    config = PlatformConfig(kind="matrix", token="t", allowed_users=[ALICE],
                            settings={"homeserver": "http://127.0.0.1:9"})
    service = SimpleNamespace(log=logging.getLogger("test.matrix"), home=home)
    made = MatrixPlatform("matrix", config, service, None)
    made.account = Account()  # type: ignore[assignment]
    asyncio.run(made.connect())
    assert made._since == "s0"
    return made


def take(platform: MatrixPlatform, response: dict[str, Any]) -> list[str]:
    """The texts ``_take`` hands to the gateway."""
    handed: list[str] = []

    async def handle(event: MessageEvent) -> None:
        handed.append(event.text)

    platform.on_message = handle
    asyncio.run(platform._take(response))
    return handed


def test_a_lost_connection_while_counting_members_takes_the_sync_again(
        platform: MatrixPlatform) -> None:
    account: Any = platform.account
    account.failure = Disconnected("members: ServerDisconnectedError")
    with pytest.raises(Disconnected):
        take(platform, sync("s1", "first", "second"))
    assert platform._since == "s0"  # the next sync starts where this one did
    account.failure = None
    assert take(platform, sync("s1", "first", "second")) == ["first", "second"]
    assert platform._since == "s1"


def test_a_room_the_homeserver_will_not_count_is_a_group_room(
        platform: MatrixPlatform) -> None:
    account: Any = platform.account
    account.failure = Rejected("members: M_FORBIDDEN")
    assert take(platform, sync("s1", "not addressed")) == []  # only mentions count there
    assert take(platform, sync("s2", "hermes: addressed")) == ["addressed"]
    assert platform._since == "s2"
