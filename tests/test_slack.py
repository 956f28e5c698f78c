"""The slack platform in a real gateway process against the fake Slack (tests/fake_slack:
Web API over HTTP, Socket Mode over a WebSocket) and the fake LLM: direct messages,
pairing, mentions answered in threads, slash commands, a tool call whose approval is
answered with the buttons, mrkdwn, splitting, 429 with Retry-After, App Home, the typing
reaction, Slack's refresh and a lost connection."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_until
from fake_slack import Call, FakeSlack, section_text, serving
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import Gateway, gateway
from messaging_support import Since, configure_messaging, module_home, platform_detail

BOT_TOKEN = "xoxb-1111-2222-test-bot-token"
APP_TOKEN = "xapp-1-A0HERMES-3333-test-app-token"
ADA, BO, EVE = "U0ADA", "U0BO", "U0EVE"  # Ada and Bo are allowed; Eve is not
DM_ADA, DM_EVE, GENERAL = "D0ADA", "D0EVE", "C0GENERAL"
LONG = "\n\n".join(f"Paragraph {n}: " + "word " * 300 for n in range(8))
SPECIAL = "a < b & c > d **bold** `x<y>` [docs](http://example.com/?a=1&b=2) <!channel>"


class Scripted:
    """The fake LLM's answers, by what the user said."""

    def __init__(self) -> None:
        self.hold = threading.Event()
        self.hold.set()

    def __call__(self, request: RecordedRequest) -> Reply:
        text = request.last_user_text or ""
        if "delete " in text:
            return self._delete(text, request)
        if "slow" in text:
            self.hold.wait(60)
        if "long answer" in text:
            return Reply(text=LONG)
        if "special" in text:
            return Reply(text=SPECIAL)
        return Reply(text=f"re: {text}")

    def _delete(self, text: str, request: RecordedRequest) -> Reply:
        if not request.tool_results:
            target = text.split("delete ", 1)[1].split()[0]
            return Reply(tool_calls=[ToolCall("terminal", {"command": f"rm -rf {target}"})])
        return Reply(text=f"tool said: {str(request.tool_results[-1].content)[:80]}")


@pytest.fixture(scope="module")
def script() -> Scripted:
    return Scripted()


@pytest.fixture(scope="module")
def fake_llm(script: Scripted) -> Iterator[FakeLLM]:
    with FakeLLM(fallback=script, strict=False) as llm:
        yield llm


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    with serving(BOT_TOKEN, APP_TOKEN) as fake:
        fake.users.update({ADA: "ada", BO: "bo", EVE: "eve"})
        yield fake


def slack_platform(fake: FakeSlack, **settings: object) -> dict[str, object]:
    return {"kind": "slack", "token": "${secret:SLACK_BOT_TOKEN}",
            "allowed_users": [ADA, BO],
            "settings": {"app_token": "${secret:SLACK_APP_TOKEN}", "api_base": fake.url,
                         "send_rate": 50, "ping_interval": 1, **settings}}


SECRETS = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspace")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeLLM, slack: FakeSlack,
           workspace: Path) -> Iterator[tuple[Gateway, dict[str, str]]]:
    with module_home(tmp_path_factory) as (root, environ):
        configure_messaging(root, fake_llm.openai_base_url, {"slack": slack_platform(slack)},
                            SECRETS, approvals={"chat_timeout": 8},
                            environment={"cwd": str(workspace)})
        with gateway(environ, root, ready=False) as gw:
            platform_detail(gw, "slack")
            yield gw, environ


@pytest.fixture
def gw(served: tuple[Gateway, dict[str, str]], slack: FakeSlack) -> Gateway:
    slack.failures.clear()
    return served[0]


@pytest.fixture
def llm(fake_llm: FakeLLM) -> Since:
    return Since(fake_llm)


def answers(slack: FakeSlack, channel: str, thread: str | None = None, count: int = 1,
            before: int | None = None, timeout: float = 60) -> list[Call]:
    """The first ``count`` posts in ``channel`` (``thread``) after the ``before`` there."""
    start = len(slack.posts(channel, thread)) if before is None else before
    wait_until(lambda: len(slack.posts(channel, thread)) >= start + count, timeout,
               f"{count} post(s) in {channel} {thread or ''}")
    return slack.posts(channel, thread)[start:start + count]


def said(slack: FakeSlack, channel: str, text: str, count: int = 1, **kw: Any) -> list[str]:
    """Send ``text`` as a direct message from Ada; the answers' words."""
    before = len(slack.posts(channel))
    slack.message(kw.pop("user", ADA), text, channel, **kw)
    return [section_text(c.params) for c in answers(slack, channel, None, count, before)]


def test_a_direct_message_is_answered_and_the_socket_envelopes_acked(
        gw: Gateway, slack: FakeSlack, llm: Since) -> None:
    before = len(slack.posts(DM_ADA))
    envelope = slack.message(ADA, "hello there", DM_ADA) and list(slack.envelopes)[-1]
    [post] = answers(slack, DM_ADA, before=before)
    assert section_text(post.params) == "re: hello there"
    assert post.params["text"] == "re: hello there"  # the notification's plain text
    assert post.token == BOT_TOKEN
    assert slack.acked(envelope)
    assert llm.requests[-1].last_user_text == "hello there"
    status = json.loads((gw.home / "gateway.json").read_text())["platforms"]["slack"]
    assert status["state"] == "running" and "@hermes in Hermes Test" in status["detail"]
