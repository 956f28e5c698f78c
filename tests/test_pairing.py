"""Pairing: codes, expiry, the per-sender rate limit and a lock on real files with a
fake clock, and `hermes pairing approve | list | revoke | unlock` through the real CLI."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from conftest import ok, refused
from hermes.codes import ALPHABET, CODE_LENGTH
from hermes.gateway.messaging.pairing import (
    CODE_TTL,
    LOCKOUT,
    REQUEST_INTERVAL,
    PairingError,
    PairingStore,
)
from messaging_support import FakeClock

MAX_FAILURES = 5
"""Wrong codes that locked a platform in earlier versions."""


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> PairingStore:
    return PairingStore(tmp_path / "pairing", clock)


def code_for(store: PairingStore, user: str = "42", name: str = "Ada") -> str:
    issued = store.request("telegram", user, name)
    assert issued.code is not None, issued.refusal
    return issued.code


def test_codes_are_unambiguous_and_stored_only_hashed(store: PairingStore) -> None:
    codes = [code_for(store, str(user)) for user in range(3)]
    assert not set(ALPHABET) & set("0O1IL")
    for code in codes:
        assert len(code) == CODE_LENGTH and set(code) <= set(ALPHABET)
    path = store.directory / "telegram.json"
    text = path.read_text()
    assert not any(code in text for code in codes)
    assert path.stat().st_mode & 0o777 == 0o600
    assert store.directory.stat().st_mode & 0o777 == 0o700
    assert [p.user_id for p in store.pending()] == ["0", "1", "2"]


def test_approving_a_code_pairs_its_sender(store: PairingStore) -> None:
    code = code_for(store)
    assert not store.is_paired("telegram", "42")
    paired = store.approve("telegram", code.lower()[:4] + "-" + code.lower()[4:])
    assert (paired.user_id, paired.user_name) == ("42", "Ada")
    assert store.is_paired("telegram", "42") and not store.is_paired("matrix", "42")
    assert store.pending() == []
    with pytest.raises(PairingError, match="no telegram pairing request has that code"):
        store.approve("telegram", code)  # used up


def test_a_code_expires_after_an_hour(store: PairingStore, clock: FakeClock) -> None:
    code = code_for(store)
    clock.advance(CODE_TTL + 1)
    assert [p.expired for p in store.pending()] == [True]
    with pytest.raises(PairingError, match="that telegram code expired"):
        store.approve("telegram", code)
    assert not store.is_paired("telegram", "42")


def test_one_code_per_sender_per_interval(store: PairingStore, clock: FakeClock) -> None:
    code_for(store, "42")
    assert store.request("telegram", "42").refusal == "rate_limited"
    assert store.request("telegram", "43").code is not None  # another sender is not held up
    clock.advance(REQUEST_INTERVAL - 1)
    assert store.request("telegram", "42").refusal == "rate_limited"
    clock.advance(2)
    assert store.request("telegram", "42").code is not None


def test_at_most_three_codes_wait_per_platform(store: PairingStore) -> None:
    for user in ("1", "2", "3"):
        code_for(store, user)
    assert store.request("telegram", "4").refusal == "busy"
    assert store.request("matrix", "4").code is not None


def test_wrong_codes_typed_by_the_owner_lock_nothing(store: PairingStore) -> None:
    code = code_for(store)
    for _ in range(MAX_FAILURES + 2):
        with pytest.raises(PairingError, match="no telegram pairing request has that code"):
            store.approve("telegram", "ABCDEFGH")
    assert store.locked_until("telegram") == 0.0
    assert store.request("telegram", "99").code is not None  # strangers still get codes
    assert store.approve("telegram", code).user_id == "42"


def lock(store: PairingStore, platform: str, clock: FakeClock) -> None:
    """A platform locked as an earlier version locked it after five wrong codes."""
    path = store.directory / f"{platform}.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    store.directory.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data | {"failures": 0, "locked_until": clock() + LOCKOUT}))


def test_a_locked_platform_gives_strangers_no_code_until_unlocked(
        store: PairingStore, clock: FakeClock) -> None:
    code = code_for(store)
    lock(store, "telegram", clock)
    assert store.request("telegram", "99").refusal == "locked"
    assert store.approve("telegram", code).user_id == "42"  # the owner is never locked out
    assert store.unlock("telegram") is True and store.unlock("telegram") is False
    assert store.request("telegram", "99").code is not None
    lock(store, "telegram", clock)
    clock.advance(LOCKOUT)
    assert store.request("telegram", "77").code is not None


def test_revoke(store: PairingStore) -> None:
    store.approve("telegram", code_for(store))
    assert store.revoke("telegram", "42").user_name == "Ada"
    assert not store.is_paired("telegram", "42")
    with pytest.raises(PairingError, match="42 is not paired on telegram"):
        store.revoke("telegram", "42")


def test_a_damaged_file_lets_nobody_in_and_says_so(store: PairingStore) -> None:
    store.approve("telegram", code_for(store))
    (store.directory / "telegram.json").write_text("{not json")
    with pytest.raises(PairingError, match="cannot read the pairing file"):
        store.is_paired("telegram", "42")


# --- through the CLI --------------------------------------------------------------


def cli_store(root: Path, clock: FakeClock | None = None) -> PairingStore:
    """The store the gateway of the default profile writes (``root`` is its home)."""
    return PairingStore(root / "pairing", clock or time.time)


def test_cli_approve_list_and_revoke(hermes, root: Path) -> None:
    code = code_for(cli_store(root), "5551", "Grace")
    listed = ok(hermes("pairing", "list"))
    assert "telegram" in listed and "5551" in listed and "Grace" in listed
    assert code not in listed and "valid 59 min more" in listed
    assert ok(hermes("pairing", "approve", "telegram", code)).strip() == \
        "paired telegram user 5551 (Grace): they can talk to the agent now"
    listed = ok(hermes("pairing", "list"))
    assert "waiting: none" in listed and re.search(r"telegram\s+5551\s+Grace\s+since", listed)
    assert cli_store(root).is_paired("telegram", "5551")
    assert "revoked telegram user 5551" in ok(hermes("pairing", "revoke", "telegram", "5551"))
    assert not cli_store(root).is_paired("telegram", "5551")
    refused(hermes("pairing", "revoke", "telegram", "5551"), "5551 is not paired on telegram")


def test_cli_refuses_wrong_and_expired_codes_and_locks_nothing(hermes, root: Path) -> None:
    an_hour_ago = FakeClock(time.time() - CODE_TTL - 60)
    expired = code_for(cli_store(root, an_hour_ago), "7")
    valid = code_for(cli_store(root), "8")
    before = json.loads((root / "pairing" / "telegram.json").read_text())
    refused(hermes("pairing", "approve", "telegram", expired), "that telegram code expired")
    for _ in range(MAX_FAILURES + 1):
        refused(hermes("pairing", "approve", "telegram", "WRONGCDE"),
                "no telegram pairing request has that code")
    assert "locked" not in ok(hermes("pairing", "list"))
    assert cli_store(root).request("telegram", "9").code is not None  # strangers still get one
    after = json.loads((root / "pairing" / "telegram.json").read_text())
    assert after["paired"] == before["paired"] == {} and after["locked_until"] == 0.0
    assert "paired telegram user 8" in ok(hermes("pairing", "approve", "telegram", valid))


def test_cli_refuses_a_platform_that_does_not_exist_and_counts_nothing(hermes,
                                                                      root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text(
        "platforms:\n  enabled:\n    telegram: {kind: telegram, token: '123:abc'}\n")
    code_for(cli_store(root), "8")
    before = (root / "pairing" / "telegram.json").read_text()
    refused(hermes("pairing", "approve", "telegrm", "ABCDEFGH"), "no platform 'telegrm'",
            "did you mean", "telegram")
    refused(hermes("pairing", "unlock", "telegrm"), "no platform 'telegrm'")
    assert not (root / "pairing" / "telegrm.json").exists()
    assert (root / "pairing" / "telegram.json").read_text() == before


def test_cli_unlock(hermes, root: Path) -> None:
    clock = FakeClock(time.time())
    code_for(cli_store(root), "8")
    lock(cli_store(root), "telegram", clock)
    lock(cli_store(root), "matrix", clock)
    assert "pairing on telegram is locked until" in ok(hermes("pairing", "list"))
    assert cli_store(root).request("telegram", "9").refusal == "locked"
    assert ok(hermes("pairing", "unlock", "telegram")) == "unlocked pairing on telegram\n"
    assert cli_store(root).request("telegram", "9").code is not None
    assert ok(hermes("pairing", "unlock", "telegram")) == "pairing on telegram is not locked\n"
    assert ok(hermes("pairing", "unlock")) == "unlocked pairing on matrix\n"
    assert "locked" not in ok(hermes("pairing", "list"))


def test_cli_refuses_a_bad_platform_name(hermes, root: Path) -> None:
    refused(hermes("pairing", "approve", "../etc", "ABCDEFGH"), "no platform '../etc'")
    assert not (root / "pairing").exists() or not any((root / "pairing").iterdir())
