"""The slack platform in a real gateway process against the fake Slack (tests/fake_slack:
Web API over HTTP, Socket Mode over a WebSocket) and the fake LLM: direct messages,
pairing, mentions answered in threads, slash commands, a tool call whose approval is
answered with the buttons, mrkdwn, splitting, 429 with Retry-After, App Home, the typing
reaction, Slack's refresh and a lost connection."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_until
from fake_slack import Call, FakeSlack, section_text, serving
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import Gateway, gateway
from hermes.gateway.messaging.text import split_text
from messaging_support import Since, configure_messaging, module_home, platform_detail
from voice_support import ESPEAK, spoken

BOT_TOKEN = "xoxb-1111-2222-test-bot-token"
APP_TOKEN = "xapp-1-A0HERMES-3333-test-app-token"
ADA, BO, EVE, MAL = "U0ADA", "U0BO", "U0EVE", "U0MAL"  # Ada and Bo are allowed
DM_ADA, DM_EVE, GENERAL = "D0ADA", "D0EVE", "C0GENERAL"
LONG = "\n\n".join(f"Paragraph {n}: " + "word " * 300 for n in range(8))
STT_TEMPLATE = ("ffprobe -v error {input_path} && printf 'lights on %s\\n' {language} "
                "> {output_dir}/transcript.txt")
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
                            environment={"cwd": str(workspace)}, stt={
                                "name": "command", "backend": "command",
                                "command": STT_TEMPLATE, "language": "en"},
                            tts={"name": "command", "backend": "command", "command": ESPEAK,
                                 "voice": "en"})
        with gateway(environ, root, ready=False) as gw:
            connected(gw, slack)
            yield gw, environ


def connected(gw: Gateway, slack: FakeSlack, connections: int = 1) -> str:
    """The platform's status detail once it runs and its Socket Mode WebSocket is open."""
    detail = platform_detail(gw, "slack")
    wait_until(lambda: slack.sockets >= 1 and slack.connections >= connections, 30,
               "the Socket Mode connection")
    return detail


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


def test_someone_not_allowed_gets_a_pairing_code_and_no_agent_access(
        served: tuple[Gateway, dict[str, str]], slack: FakeSlack, llm: Since) -> None:
    gw, environ = served
    slack.mention(EVE, "do something", GENERAL)  # a channel: ignored without a word
    [offer] = said(slack, DM_EVE, "let me in", user=EVE)
    code = re.search(r"pairing approve slack ([A-Z0-9]{8})", offer)
    assert code is not None, offer
    said(slack, DM_ADA, "after eve")
    assert [r.last_user_text for r in llm.requests] == ["after eve"]
    assert slack.posts(GENERAL) == [] and slack.texts(GENERAL, list(slack.envelopes)[0]) == []
    approved = subprocess.run([sys.executable, "-m", "hermes", "pairing", "approve", "slack",
                               code[1]], env=environ, text=True, capture_output=True,
                              timeout=120)
    assert approved.returncode == 0, approved.stderr
    assert f"paired slack user {EVE} (eve)" in approved.stdout
    assert said(slack, DM_EVE, "now?", user=EVE) == ["re: now?"]
    log = (gw.home / "logs" / "gateway.log").read_text()
    assert "message refused: sender not allowed" in log and "do something" not in log
    assert code[1] not in log and BOT_TOKEN not in log and APP_TOKEN not in log


def test_a_mention_is_answered_in_a_thread_which_then_needs_no_mention(
        gw: Gateway, slack: FakeSlack, llm: Since) -> None:
    slack.message(ADA, "just chatting among ourselves", GENERAL, channel_type="channel")
    asked = slack.mention(ADA, "what time is it", GENERAL)
    [answer] = answers(slack, GENERAL, asked)
    assert section_text(answer.params) == "re: what time is it"
    slack.message(BO, "and tomorrow?", GENERAL, channel_type="channel", thread_ts=asked)
    slack.mention(BO, "and next week?", GENERAL, thread_ts=asked)  # two events, one answer
    assert [section_text(c.params) for c in answers(slack, GENERAL, asked, 2, before=1)] == [
        "re: and tomorrow?", "re: and next week?"]
    assert [r.last_user_text for r in llm.requests] == [
        "what time is it", "and tomorrow?", "and next week?"]
    assert "what time is it" in json.dumps(llm.requests[-1].body)  # one conversation
    assert slack.posts(GENERAL) == []  # nothing outside the thread


def test_the_slash_command_carries_messages_and_commands(gw: Gateway, slack: FakeSlack,
                                                         llm: Since) -> None:
    before = len(slack.posts(DM_ADA))
    acked = slack.command(ADA, DM_ADA, "what is up")
    assert [section_text(c.params) for c in answers(slack, DM_ADA, before=before)] == [
        "re: what is up"]
    assert slack.acked(acked)
    slack.command(ADA, DM_ADA, "/new")
    slack.command(ADA, DM_ADA, "")
    new, help_ = (section_text(c.params) for c in answers(slack, DM_ADA, count=2,
                                                          before=before + 1))
    assert new == "started a new conversation"
    assert "/approve" in help_ and "/new" in help_
    slack.command(ADA, DM_ADA, "", command="/usage")  # a command of its own in the manifest
    [usage] = answers(slack, DM_ADA, before=before + 3)
    assert section_text(usage.params) == "no conversation yet"
    assert [r.last_user_text for r in llm.requests] == ["what is up"]


def test_an_approval_is_answered_with_the_buttons(gw: Gateway, slack: FakeSlack,
                                                  workspace: Path) -> None:
    victim = workspace / "victim"
    victim.mkdir()
    asked = slack.mention(ADA, f"delete {victim} now", GENERAL)
    [question] = answers(slack, GENERAL, asked)
    text = section_text(question.params)
    assert f"rm -rf {victim}" in text and "recursive delete" in text
    buttons = [b for b in question.params["blocks"] if b["type"] == "actions"][0]["elements"]
    assert [b["value"] for b in buttons] == ["once", "session", "always", "deny"]
    clicked = slack.click(MAL, question, "once")  # not allowed: nothing happens
    wait_until(lambda: slack.acked(clicked), 30, "the click acked")
    slack.click(BO, question, "once")
    ack, done = (section_text(c.params) for c in answers(slack, GENERAL, asked, 2, before=1))
    assert ack == "approved (once): running it"
    assert done.startswith("tool said:") and not victim.exists()
    audit = (gw.home / "logs" / "approvals.jsonl").read_text().splitlines()
    assert json.loads(audit[-1])["by"] == "user (once)"


def test_deny_with_the_button_in_a_direct_message(gw: Gateway, slack: FakeSlack,
                                                  workspace: Path) -> None:
    kept = workspace / "kept"
    kept.mkdir()
    before = len(slack.posts(DM_ADA))
    slack.message(ADA, f"delete {kept} please", DM_ADA)
    [question] = answers(slack, DM_ADA, before=before)
    slack.click(ADA, question, "deny")
    ack, done = (section_text(c.params) for c in answers(slack, DM_ADA, count=2,
                                                         before=before + 1))
    assert ack == "denied: the command will not run"
    assert "the user denied this command" in done and kept.exists()
    assert said(slack, DM_ADA, "/new") == ["started a new conversation"]


def test_long_answers_are_split_to_fit_a_section(gw: Gateway, slack: FakeSlack) -> None:
    parts = said(slack, DM_ADA, "a long answer please", count=len(split_text(LONG, 3000)))
    assert "\n\n".join(parts) == LONG
    assert all(len(t) <= 3000 and t.startswith("Paragraph") for t in parts) and len(parts) > 1


def test_mrkdwn_is_escaped_with_a_plain_text_fallback(gw: Gateway, slack: FakeSlack) -> None:
    [answer] = said(slack, DM_ADA, "something special")
    assert answer == ("a &lt; b &amp; c &gt; d *bold* `x&lt;y&gt;` "
                      "<http://example.com/?a=1&amp;b=2|docs> &lt;!channel&gt;")
    slack.fail("chat.postMessage", "invalid_blocks")
    said(slack, DM_ADA, "something special again")
    rejected, plain = slack.of("chat.postMessage")[-2:]
    assert not rejected.ok and rejected.params.get("blocks")
    assert plain.ok and "blocks" not in plain.params and plain.params["mrkdwn"] is False
    assert plain.params["text"] == ("a &lt; b &amp; c &gt; d **bold** `x&lt;y&gt;` "
                                    "[docs](http://example.com/?a=1&amp;b=2) &lt;!channel&gt;")


def test_a_429_is_retried_after_its_retry_after(gw: Gateway, slack: FakeSlack) -> None:
    slack.fail("chat.postMessage", "ratelimited", status=429, retry_after=2)
    start = len(slack.of("chat.postMessage"))
    assert said(slack, DM_ADA, "rate me") == ["re: rate me"]
    refused, delivered = slack.of("chat.postMessage")[start:start + 2]
    assert not refused.ok and delivered.ok
    assert delivered.at - refused.at >= 1.9


def test_the_typing_reaction_and_the_app_home(gw: Gateway, slack: FakeSlack,
                                              script: Scripted) -> None:
    script.hold.clear()
    try:
        asked = slack.message(ADA, "a slow one", DM_ADA)
        wait_until(lambda: slack.of("reactions.add"), 30, "the typing reaction")
    finally:
        script.hold.set()
    answers(slack, DM_ADA, count=1, before=len(slack.posts(DM_ADA)))
    added = slack.of("reactions.add")[-1].params
    assert (added["channel"], added["timestamp"], added["name"]) == (DM_ADA, asked, "eyes")
    wait_until(lambda: slack.of("reactions.remove"), 30, "the reaction taken off")
    slack.event({"type": "app_home_opened", "user": BO, "channel": "D0BO", "tab": "home",
                 "event_ts": slack.next_ts()})
    [published] = wait_until(lambda: slack.of("views.publish"), 30, "the App Home")
    assert published.params["user_id"] == BO
    assert "/hermes" in json.dumps(published.params["view"])


def test_a_refresh_and_a_lost_connection_are_followed(gw: Gateway, slack: FakeSlack,
                                                      script: Scripted, llm: Since) -> None:
    connections = slack.connections
    slack.refresh()
    wait_until(lambda: slack.connections > connections and slack.sockets == 1, 30,
               "a new connection after the refresh")
    assert said(slack, DM_ADA, "after the refresh") == ["re: after the refresh"]
    script.hold.clear()
    before = len(slack.posts(DM_ADA))
    try:
        slack.message(ADA, "a slow question", DM_ADA)
        wait_until(lambda: [r for r in llm.requests if r.last_user_text == "a slow question"],
                   what="the turn to start")
        slack.stop()
        wait_until(lambda: _state(gw) == "reconnecting", what="status reconnecting")
    finally:
        script.hold.set()  # the answer is ready while Slack is down: it must wait
    slack.start()
    [answer] = answers(slack, DM_ADA, before=before, timeout=90)
    assert section_text(answer.params) == "re: a slow question"
    wait_until(lambda: _state(gw) == "running" and slack.sockets == 1, 60, "running again")
    assert said(slack, DM_ADA, "back?") == ["re: back?"]
    log = (gw.home / "logs" / "gateway.log").read_text()
    assert "connection lost" in log and "reconnected" in log


def _state(gw: Gateway) -> str:
    return str(json.loads((gw.home / "gateway.json").read_text())["platforms"]["slack"]
               ["state"])


def test_a_voice_clip_is_transcribed_and_answered(gw: Gateway, slack: FakeSlack,
                                                  llm: Since) -> None:
    clip = slack.voice_clip(spoken("lights on"))
    before = len(slack.posts(DM_ADA))
    slack.message(ADA, "", DM_ADA, subtype="file_share", files=[clip])
    shown, answered = (section_text(c.params) for c in answers(slack, DM_ADA, count=2,
                                                               before=before))
    assert (shown, answered) == ("🎤 lights on en", "re: lights on en")
    assert slack.downloads[-1] == clip["id"]
    assert [r.last_user_text for r in llm.requests] == ["lights on en"]


def test_with_voice_on_the_answer_is_also_spoken(gw: Gateway, slack: FakeSlack) -> None:
    assert said(slack, "D0VOICE", "/voice on")[0].startswith("voice on")
    try:
        assert said(slack, "D0VOICE", "say something") == ["re: say something"]
        wait_until(lambda: [u for u in slack.uploads.values() if u.get("channel") == "D0VOICE"],
                   60, "the spoken answer")
    finally:
        said(slack, "D0VOICE", "/voice off")
    [spoken_answer] = [u for u in slack.uploads.values() if u.get("channel") == "D0VOICE"]
    assert spoken_answer["name"] == "answer.ogg" and spoken_answer["data"][:4] == b"OggS"
