"""Who sent a webhook delivery: HMAC-SHA256 signatures, the replay window, replay keys.

Two schemes, chosen per route (``signature``):

- ``generic``: ``X-Webhook-Timestamp: <unix seconds>`` and
  ``X-Webhook-Signature: sha256=<hex of HMAC(secret, timestamp + "." + raw body)>``.
  A timestamp further than ``replay_window`` from now is refused (stale); within it, a
  delivery whose signature was seen is a replay: a captured request can be replayed
  neither later nor sooner, under whatever ``X-Webhook-Id``.
- ``github``: ``X-Hub-Signature-256: sha256=<hex of HMAC(secret, raw body)>``; the id is
  ``X-GitHub-Delivery``. GitHub signs no timestamp, so the signatures seen are kept
  (``replay.ReplayRecord``, persisted, ``replay_retention``): the same body sent again
  is refused until its signature is forgotten.

The ids (``X-Webhook-Id``, ``X-GitHub-Delivery``) are not signed: they are remembered
besides the signature, so a sender's retry signed anew under the same id runs once,
but never instead of it. Signatures are compared in constant time over bytes (a
non-ASCII header cannot raise); nothing is remembered unless the signature is good.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping

GENERIC_SIGNATURE = "x-webhook-signature"
GENERIC_TIMESTAMP = "x-webhook-timestamp"
GENERIC_ID = "x-webhook-id"
GITHUB_SIGNATURE = "x-hub-signature-256"
GITHUB_ID = "x-github-delivery"
GITHUB_EVENT = "x-github-event"
MAX_ID = 128
"""Longer delivery ids are remembered by their SHA-256 (memory stays bounded)."""


class Unauthorized(Exception):
    """The delivery is not signed by the route's secret, or is stale or replayed."""


def verify(scheme: str, secret: str, headers: Mapping[str, str], body: bytes, window: float,
           now: float | None = None) -> str:
    """The delivery's id if ``body`` is signed by ``secret`` and fresh; else ``Unauthorized``
    naming what is wrong (``headers`` with lower-case names)."""
    now = time.time() if now is None else now
    if scheme == "github":
        given = _signature(headers, GITHUB_SIGNATURE)
        _check(given, sign(secret, body), GITHUB_SIGNATURE)
        return _short(headers.get(GITHUB_ID) or given)
    given = _signature(headers, GENERIC_SIGNATURE)
    stamp = headers.get(GENERIC_TIMESTAMP)
    if stamp is None:
        raise Unauthorized(f"missing {GENERIC_TIMESTAMP} (unix seconds, signed with the body)")
    _check(given, sign(secret, body, stamp), GENERIC_SIGNATURE)
    try:
        age = now - float(stamp)
    except ValueError:
        raise Unauthorized(f"{GENERIC_TIMESTAMP} is not a number of seconds") from None
    if abs(age) > window:
        when = "in the past" if age > 0 else "in the future"
        raise Unauthorized(f"stale delivery: its timestamp is {abs(age):.0f} s {when}, "
                           f"outside the replay window of {window:g} s (check the sender's "
                           "clock)")
    return _short(headers.get(GENERIC_ID) or given)


def is_ping(headers: Mapping[str, str]) -> bool:
    """GitHub's ``ping``, sent when a webhook is created or tested: it asks for nothing."""
    return headers.get(GITHUB_EVENT, "").strip().lower() == "ping"


def replay_keys(scheme: str, headers: Mapping[str, str], delivery_id: str) -> list[str]:
    """What tells a verified delivery apart: its signature (what is signed) and its id."""
    name = GITHUB_SIGNATURE if scheme == "github" else GENERIC_SIGNATURE
    return [f"signature:{headers.get(name, '').strip()}", f"id:{delivery_id}"]


def _short(delivery_id: str) -> str:
    if len(delivery_id) <= MAX_ID:
        return delivery_id
    return "sha256:" + hashlib.sha256(delivery_id.encode("utf-8", "replace")).hexdigest()


def sign(secret: str, body: bytes, timestamp: str | None = None) -> str:
    """``sha256=<hex>`` as a sender computes it (over ``timestamp.body`` when given)."""
    signed = body if timestamp is None else timestamp.encode() + b"." + body
    return "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def _signature(headers: Mapping[str, str], name: str) -> str:
    value = headers.get(name)
    if not value:
        raise Unauthorized(f"missing {name} (sha256=<hex HMAC-SHA256>)")
    return value


def _check(given: str, expected: str, name: str) -> None:
    if not hmac.compare_digest(given.strip().encode("utf-8", "replace"), expected.encode()):
        raise Unauthorized(f"{name} does not match: signed with another secret, or the "
                           "body changed on the way")
