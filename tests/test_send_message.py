"""``send_message`` (toolset ``messaging``): the agent writes to a chat of its profile.

Through the real CLI with the fake LLM issuing the tool call: from ``hermes chat`` (no
gateway) the Telegram platform is connected for the moment, as ``hermes cron run`` does
(the fake Bot API, tests/fakebot), and so is email (dovecot and SMTP on loopback); in a
real gateway the running platform sends, and a message to another chat is asked in the
chat first (``/approve``) while one to the chat itself is not; the targets are listed; a
one-shot in manual approval mode refuses (nobody can answer); a platform not configured
is refused in one line; cron runs never get the tool."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ok, wait_until
from fakebot import FakeBotAPI, check_markdown_v2, serving
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import gateway
from mail_support import AUTHSERV, MailServers
from messaging_support import configure_messaging, platform_detail

TOKEN = "123456789:AAH-send-test-token-0123456789abcdefg"
HOME_CHAT, OTHER_CHAT, ADA = 4242, -1009, 31337
AGENT, ALICE = "messenger@hermes.test", "carol@hermes.test"


def script(request: RecordedRequest) -> Reply:
    """``send TARGET: TEXT`` calls send_message; ``list`` lists; then the result is said."""
    if request.body["messages"][-1]["role"] == "tool":  # this turn's call was answered
        return Reply(text=f"tool said: {request.tool_results[-1].content}")
    text = (request.last_user_text or "").splitlines()[-1]
    if text.startswith("send "):
        target, _, message = text[5:].partition(": ")
        return Reply(tool_calls=[ToolCall("send_message", {"target": target, "text": message})])
    if text == "list":
        return Reply(tool_calls=[ToolCall("send_message", {"action": "list"})])
    return Reply(text=f"re: {text}")


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=script, strict=False) as fake:
        yield fake


@pytest.fixture(scope="module")
def bot() -> Iterator[FakeBotAPI]:
    with serving(TOKEN) as api:
        yield api


def telegram(bot: FakeBotAPI) -> dict:
    return {"kind": "telegram", "token": "${secret:TELEGRAM_BOT_TOKEN}",
            "allowed_users": [str(ADA)], "home_channel": HOME_CHAT,
            "settings": {"base_url": bot.url, "poll_timeout": 2, "send_rate": 50}}


@pytest.fixture
def profile(root: Path, llm: FakeLLM, bot: FakeBotAPI) -> Path:
    configure_messaging(root, llm.openai_base_url, {
        "telegram": telegram(bot),
        "webhook": {"kind": "webhook", "settings": {"port": 0, "routes": {}}}},
        {"TELEGRAM_BOT_TOKEN": TOKEN})
    return root


def texts(bot: FakeBotAPI, chat: int) -> list[str]:
    return [check_markdown_v2(text)[1] for text in bot.texts(chat)]


def said(hermes, *args: str) -> dict:
    """The tool result the agent reported (``tool said: {...}``)."""
    out = ok(hermes("chat", "-q", *args)).strip()
    assert out.startswith("tool said: "), out
    return json.loads(out.removeprefix("tool said: "))


@pytest.mark.both_modes  # in-process and through the warm server: one way to deliver
def test_a_chat_sends_to_the_home_channel_and_to_a_chat(hermes, profile: Path,
                                                        bot: FakeBotAPI) -> None:
    before = len(bot.texts(HOME_CHAT))
    assert said(hermes, "send telegram: The backup is done.", "--yolo") == {
        "sent_to": f"telegram:{HOME_CHAT}", "characters": 19}
    assert texts(bot, HOME_CHAT)[before:] == ["The backup is done."]
    assert said(hermes, f"send telegram:{OTHER_CHAT}: Deploy at 5", "approvals.mode=off")[
        "sent_to"] == f"telegram:{OTHER_CHAT}"
    assert texts(bot, OTHER_CHAT)[-1] == "Deploy at 5"


def test_the_targets_are_listed_without_the_platforms_that_have_no_chats(
        hermes, profile: Path) -> None:
    assert said(hermes, "list") == {"targets": [{
        "platform": "telegram", "kind": "telegram", "home_channel": f"telegram:{HOME_CHAT}",
        "send_to": "telegram:CHAT_ID or telegram (its home channel)"}], "current": None}


def test_a_message_to_another_chat_needs_approval(hermes, profile: Path,
                                                  bot: FakeBotAPI) -> None:
    sent = len(bot.of("sendMessage"))
    result = said(hermes, "send telegram: hello")
    assert result["error"].startswith("refused: this message needs the user's approval "
                                      f"(sends a message to telegram:{HOME_CHAT}, not to "
                                      "this chat) and nobody can approve it")
    assert len(bot.of("sendMessage")) == sent
    audit = (profile / "logs" / "approvals.jsonl").read_text().splitlines()
    assert json.loads(audit[-1])["classes"] == ["message_other_chat"]


@pytest.mark.parametrize(("target", "fragment"), [
    ("discord:456", "platform 'discord' is not configured in this profile (chat platforms: "
                    "telegram); action=list shows the targets"),
    ("telegrm:1", "platform 'telegrm' is not configured in this profile (did you mean "
                  "\"telegram\"?)"),
    ("webhook:1", "platform 'webhook' is not configured"),
    ("telegram:a b", "is not a delivery target"),
])
def test_platforms_not_configured_are_refused_in_one_line(hermes, profile: Path,
                                                          bot: FakeBotAPI, target: str,
                                                          fragment: str) -> None:
    sent = len(bot.of("sendMessage"))
    result = said(hermes, f"send {target}: hi", "--yolo")
    assert fragment in result["error"] and "\n" not in result["error"]
    assert len(bot.of("sendMessage")) == sent


def test_cron_runs_and_profiles_without_chats_do_not_get_the_tool(
        hermes, profile: Path, llm: FakeLLM, root: Path) -> None:
    ok(hermes("chat", "-q", "hello"))
    assert "send_message" in llm.requests[-1].tool_names
    job = ok(hermes("cron", "add", "every 1d", "Summarise", "--deliver", "local")).split()[2]
    ok(hermes("cron", "run", job))
    assert "send_message" not in llm.requests[-1].tool_names
    assert "cronjob" not in llm.requests[-1].tool_names
    configure_messaging(root, llm.openai_base_url, {
        "webhook": {"kind": "webhook", "settings": {"port": 0, "routes": {}}}})
    ok(hermes("chat", "-q", "hello"))
    assert "send_message" not in llm.requests[-1].tool_names


def test_in_the_gateway_another_chat_is_asked_in_the_chat_first(
        environ: dict[str, str], root: Path, llm: FakeLLM, bot: FakeBotAPI) -> None:
    configure_messaging(root, llm.openai_base_url, {"telegram": telegram(bot)},
                        {"TELEGRAM_BOT_TOKEN": TOKEN}, approvals={"chat_timeout": 30})
    with gateway(environ, root, ready=False) as gw:
        platform_detail(gw, "telegram")
        before = len(bot.texts(ADA))
        bot.push(f"send telegram:{ADA}: to myself", user_id=ADA)
        said_here = wait_until(lambda: bot.texts(ADA)[before:] if len(bot.texts(ADA))
                               >= before + 2 else None, 60, "the message and the answer")
        assert [check_markdown_v2(t)[1] for t in said_here][0] == "to myself"  # not asked
        bot.push(f"send telegram:{OTHER_CHAT}: The deploy is done", user_id=ADA)
        question = wait_until(lambda: [t for t in texts(bot, ADA)
                                       if "/approve" in t], 60, "the approval question")
        assert f"send_message to telegram:{OTHER_CHAT}: The deploy is done" in question[-1]
        assert "The deploy is done" not in texts(bot, OTHER_CHAT)
        bot.push("/approve", user_id=ADA)
        wait_until(lambda: "The deploy is done" in texts(bot, OTHER_CHAT), 60, "the message")
        wait_until(lambda: any('"sent_to"' in t for t in texts(bot, ADA)), 60, "the answer")


def test_a_chat_sends_an_email(hermes, root: Path, llm: FakeLLM,
                               mail_servers: MailServers) -> None:
    dovecot, smtp = mail_servers.dovecot, mail_servers.smtp
    for user in (AGENT, ALICE):
        dovecot.add_user(user, f"pw-{user.partition('@')[0]}-0123456789")
    configure_messaging(root, llm.openai_base_url, {"email": {
        "kind": "email", "token": "${secret:EMAIL_PASSWORD}", "allowed_users": [ALICE],
        "settings": {"address": AGENT, "imap_host": "127.0.0.1", "imap_port": dovecot.port,
                     "imap_tls": "none", "smtp_host": "127.0.0.1", "smtp_port": smtp.port,
                     "smtp_tls": "none", "subject": "From your agent",
                     "authserv_id": AUTHSERV}}},
        {"EMAIL_PASSWORD": dovecot.users[AGENT]})
    assert said(hermes, f"send email:{ALICE}: The report is ready.", "--yolo")[
        "sent_to"] == f"email:{ALICE}"
    [mail] = [m for _flags, m in dovecot.inbox(ALICE) if m["Subject"] == "From your agent"]
    assert mail["From"] == AGENT
    assert str(mail.get_content()).strip() == "The report is ready."
