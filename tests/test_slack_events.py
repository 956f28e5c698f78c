"""The slack platform on the Events API (``settings.mode: events``): Slack posts to the
gateway's HTTP listener, at ``/slack/<name>/``. In a real gateway against the fake Slack's
Web API and the fake LLM: the URL verification challenge, a signed direct message
answered, a slash command and a button click taken, and requests with a bad or stale
signature refused (401) without a turn."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from conftest import wait_until
from fake_slack import APP, TEAM, FakeSlack, serving
from fakellm import FakeLLM, Reply
from gateway_support import Gateway, gateway
from messaging_support import Since, configure_messaging, module_home, platform_detail

BOT_TOKEN = "xoxb-7777-8888-events-bot-token"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
ADA = "U0ADA"


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=lambda r: Reply(text=f"re: {r.last_user_text}"),
                 strict=False) as llm:
        yield llm


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    with serving(BOT_TOKEN, "xapp-unused") as fake:
        yield fake


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeLLM, slack: FakeSlack
           ) -> Iterator[tuple[Gateway, str]]:
    with module_home(tmp_path_factory) as (root, environ):
        configure_messaging(root, fake_llm.openai_base_url, {"slack": {
            "kind": "slack", "token": "${secret:SLACK_BOT_TOKEN}", "allowed_users": [ADA],
            "settings": {"mode": "events", "signing_secret": "${secret:SLACK_SIGNING_SECRET}",
                         "port": 0, "api_base": slack.url, "send_rate": 50}}},
            {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET})
        with gateway(environ, root, ready=False) as gw:
            detail = platform_detail(gw, "slack")
            yield gw, detail.split("Events API at ")[1].rstrip(")")


def post(url: str, body: str, content_type: str = "application/json", *,
         secret: str = SIGNING_SECRET, age: float = 0) -> httpx.Response:
    stamp = str(int(time.time() - age))
    signature = "v0=" + hmac.new(secret.encode(), f"v0:{stamp}:{body}".encode(),
                                 hashlib.sha256).hexdigest()
    return httpx.post(url, content=body, timeout=30, headers={
        "content-type": content_type, "x-slack-request-timestamp": stamp,
        "x-slack-signature": signature})


def event(slack: FakeSlack, **fields: Any) -> str:
    ts = slack.next_ts()
    return json.dumps({"token": "verification", "team_id": TEAM, "api_app_id": APP,
                       "type": "event_callback", "event_id": f"Ev{ts}", "event_time": 1,
                       "event": {"type": "message", "channel_type": "im", "ts": ts,
                                 "event_ts": ts, **fields}})


def test_the_url_verification_challenge_is_answered(served: tuple[Gateway, str]) -> None:
    url = served[1]
    answered = post(url, json.dumps({"token": "x", "challenge": "c-123",
                                     "type": "url_verification"}))
    assert answered.status_code == 200 and "c-123" in answered.text


def test_a_signed_message_a_command_and_a_click_are_taken(
        served: tuple[Gateway, str], slack: FakeSlack, fake_llm: FakeLLM) -> None:
    url, llm = served[1], Since(fake_llm)
    sent = post(url, event(slack, user=ADA, text="hello by HTTP", channel="D0ADA"))
    assert sent.status_code == 200
    wait_until(lambda: slack.texts("D0ADA"), 60, "the answer")
    assert slack.texts("D0ADA") == ["re: hello by HTTP"]
    command = post(url, urlencode({"command": "/hermes", "text": "/new", "user_id": ADA,
                                   "channel_id": "D0ADA", "team_id": TEAM,
                                   "trigger_id": "t.1"}),
                   "application/x-www-form-urlencoded")
    assert command.status_code == 200
    wait_until(lambda: len(slack.texts("D0ADA")) == 2, 30, "the command's answer")
    assert slack.texts("D0ADA")[1] == "started a new conversation"
    click = {"type": "block_actions", "user": {"id": ADA, "username": "ada"},
             "team": {"id": TEAM}, "api_app_id": APP, "channel": {"id": "D0ADA"},
             "message": {"ts": "1.000001"}, "container": {"channel_id": "D0ADA"},
             "actions": [{"action_id": "hermes_approval_deny", "value": "deny",
                          "type": "button"}]}
    clicked = post(url, urlencode({"payload": json.dumps(click)}),
                   "application/x-www-form-urlencoded")
    assert clicked.status_code == 200
    wait_until(lambda: len(slack.texts("D0ADA")) == 3, 30, "the click's answer")
    assert slack.texts("D0ADA")[2] == "nothing is waiting for approval here"
    assert [r.last_user_text for r in llm.requests] == ["hello by HTTP"]


def test_a_bad_or_stale_signature_is_refused(served: tuple[Gateway, str], slack: FakeSlack,
                                             fake_llm: FakeLLM) -> None:
    url, llm = served[1], Since(fake_llm)
    forged = post(url, event(slack, user=ADA, text="forged", channel="D0ADA"),
                  secret="not-the-secret")
    stale = post(url, event(slack, user=ADA, text="replayed", channel="D0ADA"), age=600)
    assert (forged.status_code, stale.status_code) == (401, 401)
    assert httpx.get(url, timeout=10).status_code == 405
    post(url, event(slack, user=ADA, text="marker", channel="D0MARK"))
    wait_until(lambda: slack.texts("D0MARK"), 60, "the marker's answer")
    assert [r.last_user_text for r in llm.requests] == ["marker"]
