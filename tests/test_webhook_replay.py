"""Webhook replays (issue 25, point 12) against a real `hermes gateway run` and the fake LLM:
deliveries are told apart by what is signed, not by the unsigned X-Webhook-Id or
X-GitHub-Delivery, so a captured signed body sent again under new ids runs once; for
`signature: github` routes (GitHub signs no timestamp) the record of signatures outlives
the gateway (kept in the profile's home, 0600, bounded by `settings.replay_retention`)."""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fakellm import FakeLLM, RecordedRequest, Reply
from gateway_support import gateway
from hermes.gateway.webhook.replay import ReplayRecord
from hermes.gateway.webhook.signature import sign
from messaging_support import WEBHOOK_SECRET, configure_messaging, webhook_platform, webhook_url

ROUTES = {"alerts": {"prompt": "Alert {name}"},
          "push": {"prompt": "Push {n}", "signature": "github"}}


def answer(request: RecordedRequest) -> Reply:
    return Reply(text=f"handled {request.last_user_text}")


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=answer, strict=False) as fake:
        yield fake


def configure(root: Path, llm: FakeLLM, **settings: object) -> None:
    configure_messaging(root, llm.openai_base_url, {"webhook": webhook_platform(
        ROUTES, **settings)}, {"TEST_WEBHOOK_SECRET": WEBHOOK_SECRET})


def generic(url: str, body: bytes, stamp: str, delivery_id: str) -> httpx.Response:
    return httpx.post(f"{url}alerts", content=body, timeout=60, headers={
        "content-type": "application/json", "x-webhook-timestamp": stamp,
        "x-webhook-signature": sign(WEBHOOK_SECRET, body, stamp), "x-webhook-id": delivery_id})


def github(url: str, body: bytes, delivery_id: str) -> httpx.Response:
    return httpx.post(f"{url}push", content=body, timeout=60, headers={
        "content-type": "application/json", "x-github-event": "push",
        "x-hub-signature-256": sign(WEBHOOK_SECRET, body), "x-github-delivery": delivery_id})


def statuses(responses: list[httpx.Response]) -> list[str]:
    return [r.json().get("status", r.text) for r in responses]


def ran(llm: FakeLLM, prompt: str) -> int:
    return sum(1 for r in llm.requests if r.last_user_text == prompt)


def test_a_signed_body_sent_again_under_new_ids_runs_once(root: Path, environ: dict[str, str],
                                                          llm: FakeLLM) -> None:
    configure(root, llm)
    body, stamp = json.dumps({"name": "disk full"}).encode(), str(int(time.time()))
    with gateway(environ, root, ready=False) as gw:
        url = webhook_url(gw)
        sent = [generic(url, body, stamp, delivery_id) for delivery_id in ("a1", "a2", "a3")]
        assert statuses(sent) == ["done", "duplicate", "duplicate"]
        later = generic(url, body, str(int(stamp) + 1), "a4")  # signed anew: a new delivery
        assert later.json()["status"] == "done"
    assert ran(llm, "Alert disk full") == 2


def test_a_github_body_sent_again_is_refused_even_after_a_restart(
        root: Path, environ: dict[str, str], llm: FakeLLM) -> None:
    configure(root, llm)
    body = json.dumps({"n": 1}).encode()
    with gateway(environ, root, ready=False) as gw:  # ends with SIGKILL
        url = webhook_url(gw)
        assert statuses([github(url, body, "a1"), github(url, body, "a2")]) == [
            "done", "duplicate"]
    [record] = [p for p in (root / "webhooks").iterdir() if not p.name.startswith(".")]
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert b'"n"' not in record.read_bytes()  # digests only
    (root / "gateway.json").unlink()  # the killed gateway's: wait for the new one's
    with gateway(environ, root, ready=False) as gw:
        url = webhook_url(gw)
        assert statuses([github(url, body, "a3"), github(url, b'{"n": 2}', "a4")]) == [
            "duplicate", "done"]
    assert ran(llm, "Push 1") == 1 and ran(llm, "Push 2") == 1


def test_the_github_record_keeps_the_newest_entries(root: Path, environ: dict[str, str],
                                                    llm: FakeLLM) -> None:
    configure(root, llm, replay_retention={"entries": 3})
    bodies = [json.dumps({"n": n}).encode() for n in range(4)]
    with gateway(environ, root, ready=False) as gw:
        url = webhook_url(gw)
        assert statuses([github(url, b, f"d{i}") for i, b in enumerate(bodies)]) == ["done"] * 4
        assert github(url, bodies[3], "again-3").json()["status"] == "duplicate"
        assert github(url, bodies[0], "again-0").json()["status"] == "done"  # beyond the bound


def test_a_refused_retention_names_the_key(root: Path, hermes_subprocess: object,
                                           llm: FakeLLM) -> None:
    configure(root, llm, replay_retention={"entries": 0})
    done = hermes_subprocess("config", "validate")  # type: ignore[operator]
    assert done.returncode == 2 and "replay_retention.entries" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


# --- the record itself, with a clock the test moves --------------------------------------


def test_the_record_forgets_after_its_retention_and_survives_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "webhooks" / "hook.push"
    record = ReplayRecord(path, seconds=100, entries=10)
    assert record.first_time(["k1"], now=1000) and not record.first_time(["k1"], now=1050)
    assert record.first_time(["k2", "id-2"], now=1060)
    assert not ReplayRecord(path, seconds=100, entries=10).first_time(["id-2"], now=1070)
    with path.open("a") as handle:
        handle.write("12")  # a write cut short by a crash
    reread = ReplayRecord(path, seconds=100, entries=10)
    assert reread.first_time(["k1"], now=1101)  # past its retention
    assert not reread.first_time(["k2"], now=1101)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_forgotten_delivery_may_run_again_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "hook"
    record = ReplayRecord(path, seconds=100, entries=10)
    assert record.first_time(["k1", "id-1"], now=1000)
    record.forget(["k1", "id-1"])
    assert ReplayRecord(path, seconds=100, entries=10).first_time(["id-1"], now=1001)


def test_the_record_file_stays_bounded(tmp_path: Path) -> None:
    path = tmp_path / "hook"
    record = ReplayRecord(path, seconds=1000, entries=5)
    for n in range(50):
        assert record.first_time([f"k{n}"], now=1000 + n)
    assert len(path.read_text().splitlines()) <= 2 * 5 + 1
    reread = ReplayRecord(path, seconds=1000, entries=5)
    assert not reread.first_time(["k49"], now=1100) and reread.first_time(["k0"], now=1100)
