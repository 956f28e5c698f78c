"""The telegram platform in a real gateway process against the fake Bot API (tests/fakebot)
and the fake LLM: answers, allowlist refusals, pairing, groups, splitting, MarkdownV2
escaping and its plain-text fallback, 429 with retry_after, approvals in the chat, and
reconnecting after the Bot API server restarts."""

from __future__ import annotations

import base64
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
from fakebot import FakeBotAPI, check_markdown_v2, serving
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import Gateway, gateway
from hermes.gateway.messaging.text import utf16_length
from images import GIF, JPEG, png, wire_images
from messaging_support import Since, configure_messaging, module_home, platform_detail

TOKEN = "123456789:AAH-test-token-0123456789abcdefghij"
ADA, BO, EVE = 42, 43, 99  # Ada and Bo are allowed; Eve is not
GROUP = -1001234
LONG = "\n\n".join(f"Paragraph {n}: " + "word " * 300 for n in range(8))
SPECIAL = ("Total: 1.5 + 2 = 3.5! (approx) [docs](http://example.com/a_(b)) **bold** "
           "`a_b*c` _it_ ~~old~~ #tag {x} |y| > z\n# Heading\n```py\nprint('a_b')\n```")


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
def bot() -> Iterator[FakeBotAPI]:
    with serving(TOKEN) as api:
        yield api


def telegram(api: FakeBotAPI, **settings: object) -> dict[str, object]:
    return {"kind": "telegram", "token": "${secret:TELEGRAM_BOT_TOKEN}",
            "allowed_users": [str(ADA), str(BO)],
            "settings": {"base_url": api.url, "poll_timeout": 2, "send_rate": 50, **settings}}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The agent's working directory (where its commands may write)."""
    return tmp_path_factory.mktemp("workspace")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeLLM, bot: FakeBotAPI,
           workspace: Path) -> Iterator[tuple[Gateway, dict[str, str]]]:
    with module_home(tmp_path_factory) as (root, environ):
        configure_messaging(root, fake_llm.openai_base_url, {"telegram": telegram(bot)},
                            {"TELEGRAM_BOT_TOKEN": TOKEN}, approvals={"chat_timeout": 8},
                            environment={"cwd": str(workspace)}, vision={"max_bytes": 50_000})
        with gateway(environ, root, ready=False) as gw:
            platform_detail(gw, "telegram")
            yield gw, environ


@pytest.fixture
def gw(served: tuple[Gateway, dict[str, str]], bot: FakeBotAPI) -> Gateway:
    bot.failures.clear()
    return served[0]


@pytest.fixture
def llm(fake_llm: FakeLLM) -> Since:
    return Since(fake_llm)


def replies(bot: FakeBotAPI, chat: int, count: int, timeout: float = 60) -> list[str]:
    """The first ``count`` texts sent to ``chat`` after the ones already there."""
    before = len(bot.texts(chat))
    got = wait_until(lambda: bot.texts(chat)[before:] if len(bot.texts(chat)) >= before + count
                     else None, timeout=timeout, what=f"{count} message(s) to {chat}")
    return list(got)[:count]  # type: ignore[call-overload]


def say_and_wait(bot: FakeBotAPI, chat: int, text: str, count: int = 1, **who: object
                 ) -> list[str]:
    start = len(bot.texts(chat))
    bot.push(text, **who)  # type: ignore[arg-type]
    wait_until(lambda: len(bot.texts(chat)) >= start + count, timeout=60,
               what=f"{count} answer(s) in chat {chat}")
    return bot.texts(chat)[start:]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def unescape(text: str) -> str:
    error, plain = check_markdown_v2(text)
    assert error is None, error
    return plain


def test_a_direct_message_is_answered_with_typing_shown(gw: Gateway, bot: FakeBotAPI,
                                                        llm: Since) -> None:
    typing_before = len(bot.of("sendChatAction"))
    [answer] = say_and_wait(bot, ADA, "hello there", user_id=ADA)
    assert unescape(answer) == "re: hello there"
    [sent] = bot.sent(ADA)[-1:]
    assert sent.params["parse_mode"] == "MarkdownV2"
    assert llm.requests[-1].last_user_text == "hello there"
    actions = bot.of("sendChatAction")[typing_before:]
    assert actions and actions[0].params["action"] == "typing"
    assert str(actions[0].params["chat_id"]) == str(ADA)


def test_someone_not_allowed_gets_no_agent_access(gw: Gateway, bot: FakeBotAPI,
                                                  llm: Since) -> None:
    bot.push("@hermes_test_bot do something", user_id=EVE, chat_id=GROUP,
             chat_type="supergroup")  # a group: ignored without a word
    [offer] = say_and_wait(bot, EVE, "let me in", user_id=EVE, username="eve")
    assert "hermes pairing approve telegram " in unescape(offer)
    say_and_wait(bot, ADA, "after eve", user_id=ADA)  # later than Eve's messages
    assert [r.last_user_text for r in llm.requests] == ["after eve"]
    assert bot.texts(GROUP) == []
    log = (gw.home / "logs" / "gateway.log").read_text()
    assert "message refused: sender not allowed" in log and "do something" not in log
    assert "let me in" not in log


def test_pairing_through_the_chat_and_the_cli(served: tuple[Gateway, dict[str, str]],
                                              bot: FakeBotAPI, llm: Since) -> None:
    gw, environ = served
    [offer] = say_and_wait(bot, 1234, "hi, I'm new", user_id=1234, username="newbie")
    code = re.search(r"pairing approve telegram ([A-Z0-9]{8})", unescape(offer))
    assert code is not None, offer
    bot.push("still there?", user_id=1234)  # rate limited: no second code, no answer
    approved = subprocess.run([sys.executable, "-m", "hermes", "pairing", "approve",
                               "telegram", code[1]], env=environ, text=True,
                              capture_output=True, timeout=120)
    assert approved.returncode == 0, approved.stderr
    assert "paired telegram user 1234 (newbie)" in approved.stdout
    [answer] = say_and_wait(bot, 1234, "now?", user_id=1234)
    assert unescape(answer) == "re: now?"
    assert [r.last_user_text for r in llm.requests] == ["now?"]
    assert len(bot.texts(1234)) == 2  # the code, then the answer
    assert code[1] not in (gw.home / "logs" / "gateway.log").read_text()  # only in the chat
    revoked = subprocess.run([sys.executable, "-m", "hermes", "pairing", "revoke", "telegram",
                              "1234"], env=environ, text=True, capture_output=True, timeout=120)
    assert revoked.returncode == 0, revoked.stderr
    bot.push("and now?", user_id=1234)
    say_and_wait(bot, ADA, "marker", user_id=ADA)
    assert "and now?" not in [r.last_user_text for r in llm.requests]


def test_groups_are_answered_only_when_mentioned_or_replied_to(gw: Gateway, bot: FakeBotAPI,
                                                               llm: Since) -> None:
    bot.push("just chatting among ourselves", user_id=ADA, chat_id=GROUP, chat_type="group")
    [mentioned] = say_and_wait(bot, GROUP, "@hermes_test_bot what time is it", user_id=ADA,
                               chat_id=GROUP, chat_type="group")
    assert unescape(mentioned) == "re: what time is it"
    [replied] = say_and_wait(bot, GROUP, "and tomorrow?", user_id=BO, chat_id=GROUP,
                             chat_type="supergroup", reply_to_bot=True, thread_id=7)
    assert unescape(replied) == "re: and tomorrow?"
    assert str(bot.sent(GROUP)[-1].params["message_thread_id"]) == "7"
    assert [r.last_user_text for r in llm.requests] == ["what time is it", "and tomorrow?"]


def test_a_photo_and_an_image_document_reach_the_model_with_their_captions(
        gw: Gateway, bot: FakeBotAPI, llm: Since) -> None:
    [answer] = say_and_wait(bot, ADA, "what is in this photo?", user_id=ADA,
                            attached=bot.photo(JPEG))
    assert unescape(answer) == "re: what is in this photo?"
    asked = llm.requests[-1]
    assert wire_images(asked) == [("image/jpeg", b64(JPEG))]  # the largest size, not the thumb
    assert asked.last_user_text == "what is in this photo?"  # caption and image: one turn
    chart = png(3, 2)
    [answer] = say_and_wait(bot, ADA, "", user_id=ADA,  # no caption: the image alone
                            attached=bot.document(chart, "chart.png", "image/png"))
    assert wire_images(llm.requests[-1]) == [("image/png", b64(chart))]
    [mentioned] = say_and_wait(bot, GROUP, "@hermes_test_bot and this?", user_id=BO,
                               chat_id=GROUP, chat_type="group",
                               attached=bot.document(GIF, "anim.gif", "image/gif"))
    assert unescape(mentioned) == "re: and this?"
    assert wire_images(llm.requests[-1]) == [("image/gif", b64(GIF))]


@pytest.mark.parametrize(("attached", "line", "downloaded"), [
    (lambda bot: bot.document(b"%PDF-1.7 ...", "report.pdf", "application/pdf"),
     "report.pdf: application/pdf is no image; send a PNG, JPEG, GIF or WebP image", False),
    (lambda bot: bot.document(png(), "scan.heic", "image/heic"),
     "scan.heic: image/heic images are not read here; send a PNG, JPEG, GIF or WebP image",
     False),
    (lambda bot: bot.photo(JPEG, size=30_000_000),  # declared: refused before getFile
     "photo: the image is 30,000,000 bytes, over vision.max_bytes (50,000); send a smaller "
     "one", False),
    (lambda bot: bot.photo(JPEG[:-2] + b"\0" * 60_000, size=None),  # getFile says so
     "photo: the image is 60,", False),
    (lambda bot: bot.photo(JPEG[:-2] + b"\0" * 60_000, size=900),  # the download is cut
     "photo: the image is more than 50,000 bytes, over vision.max_bytes (50,000)", True),
    (lambda bot: bot.document(JPEG[:-2], "cut.jpg", "image/jpeg"),
     "cut.jpg: unreadable image: the JPEG is cut short (no end marker); attach a whole file",
     True),
    (lambda bot: (bot.fail("getFile", 400, "Bad Request: file is too big"),
                  bot.document(png(), "big.png", "image/png"))[1],
     "big.png: could not download it from Telegram (", False),
], ids=["pdf", "heic", "declared-too-large", "getfile-too-large", "download-cut",
        "cut-short", "getfile-refused"])
def test_an_image_that_cannot_be_attached_gets_one_line_and_no_turn(
        gw: Gateway, bot: FakeBotAPI, llm: Since, attached: Any, line: str,
        downloaded: bool) -> None:
    before = len(bot.downloads)
    [answer] = say_and_wait(bot, ADA, "look at this", user_id=ADA, attached=attached(bot))
    assert unescape(answer).startswith(line), answer
    assert "\n" not in unescape(answer) and llm.requests == []  # the caption did not run
    assert (len(bot.downloads) > before) is downloaded


def test_a_model_that_takes_no_images_refuses_them_in_one_line(gw: Gateway, bot: FakeBotAPI,
                                                               llm: Since) -> None:
    say_and_wait(bot, BO, "/model gpt-3.5-turbo", user_id=BO)  # a model without vision
    try:
        [answer] = say_and_wait(bot, BO, "what is this?", user_id=BO, attached=bot.photo(JPEG))
    finally:
        say_and_wait(bot, BO, "/new", user_id=BO)
    assert unescape(answer) == ("the model gpt-3.5-turbo takes no images; set vision.model to "
                                "one that does (hermes config set vision.model NAME), or "
                                "provider.vision: true if it does")
    assert llm.requests == []


def test_an_image_from_someone_not_allowed_is_never_downloaded(gw: Gateway, bot: FakeBotAPI,
                                                               llm: Since) -> None:
    files, downloads = len(bot.of("getFile")), len(bot.downloads)
    bot.push("@hermes_test_bot what is this", user_id=EVE, chat_id=GROUP,
             chat_type="supergroup", attached=bot.photo(JPEG))
    bot.push("", user_id=ADA, chat_id=GROUP, chat_type="group",  # not addressed to the bot
             attached=bot.photo(JPEG))
    [offer] = say_and_wait(bot, 4321, "see my photo", user_id=4321, username="mallory",
                           attached=bot.document(png(), "me.png", "image/png"))
    assert "hermes pairing approve telegram " in unescape(offer)
    say_and_wait(bot, ADA, "after their photos", user_id=ADA)
    assert (len(bot.of("getFile")), len(bot.downloads)) == (files, downloads)
    assert [r.last_user_text for r in llm.requests] == ["after their photos"]


def test_long_answers_are_split_on_paragraphs(gw: Gateway, bot: FakeBotAPI) -> None:
    texts = [unescape(t) for t in say_and_wait(bot, ADA, "a long answer please", count=4,
                                               user_id=ADA)]
    assert "\n\n".join(texts) == LONG
    assert all(utf16_length(t) <= 4096 for t in texts) and len(texts) > 1
    assert all(t.startswith("Paragraph") for t in texts)  # cut between paragraphs


def test_markdown_v2_is_escaped_so_telegram_takes_it(gw: Gateway, bot: FakeBotAPI) -> None:
    [answer] = say_and_wait(bot, ADA, "something special", user_id=ADA)
    assert bot.sent(ADA)[-1].params["parse_mode"] == "MarkdownV2"
    plain = unescape(answer)  # the fake's parser accepted it
    for literal in ("Total: 1.5 + 2 = 3.5! (approx)", "#tag {x} |y| > z", "a_b*c",
                    "print('a_b')", "docs", "bold", "Heading"):
        assert literal in plain, (literal, plain)
    assert "**" not in plain and "~~" not in plain


def test_rejected_markup_is_sent_again_as_plain_text(gw: Gateway, bot: FakeBotAPI) -> None:
    bot.fail("sendMessage", 400, "Bad Request: can't parse entities: Can't find end of Bold "
             "entity at byte offset 3", when=lambda p: p.get("parse_mode") == "MarkdownV2")
    [answer] = say_and_wait(bot, ADA, "something special again", user_id=ADA)
    assert answer == SPECIAL  # the model's text as it was
    assert "parse_mode" not in bot.sent(ADA)[-1].params


def test_a_429_is_retried_after_retry_after(gw: Gateway, bot: FakeBotAPI) -> None:
    bot.fail("sendMessage", 429, "Too Many Requests: retry after 2", retry_after=2)
    start = len(bot.of("sendMessage"))
    [answer] = say_and_wait(bot, ADA, "rate me", user_id=ADA)
    assert unescape(answer) == "re: rate me"
    refused, delivered = bot.of("sendMessage")[start:start + 2]
    assert "ok" not in refused.params and delivered.params["ok"]
    assert delivered.at - refused.at >= 1.9


def test_approval_in_a_group_from_allowed_and_disallowed_users(
        gw: Gateway, bot: FakeBotAPI, workspace: Path) -> None:
    victim = workspace / "victim"
    victim.mkdir()
    [question] = say_and_wait(bot, GROUP, f"@hermes_test_bot delete {victim} now",
                              user_id=ADA, chat_id=GROUP, chat_type="group")
    question = unescape(question)
    assert f"rm -rf {victim}" in question and "recursive delete" in question
    assert "/approve" in question and "/deny" in question
    bot.push("/approve@hermes_test_bot", user_id=EVE, chat_id=GROUP, chat_type="group")
    [ack, done] = say_and_wait(bot, GROUP, "/approve@hermes_test_bot", count=2, user_id=BO,
                               chat_id=GROUP, chat_type="group")
    assert unescape(ack) == "approved (once): running it"
    assert unescape(done).startswith("tool said:") and not victim.exists()
    audit = (gw.home / "logs" / "approvals.jsonl").read_text().splitlines()
    assert json.loads(audit[-1])["by"] == "user (once)"


def test_deny_and_timeout_in_a_direct_chat(gw: Gateway, bot: FakeBotAPI,
                                           workspace: Path) -> None:
    kept = workspace / "kept"
    kept.mkdir()
    say_and_wait(bot, ADA, f"delete {kept} please", user_id=ADA)
    [ack, done] = say_and_wait(bot, ADA, "/deny", count=2, user_id=ADA)
    assert unescape(ack) == "denied: the command will not run"
    assert "the user denied this command" in unescape(done) and kept.exists()
    say_and_wait(bot, ADA, "/new", user_id=ADA)  # a fresh conversation: the tool call again
    say_and_wait(bot, ADA, f"delete {kept} again", user_id=ADA)
    [timed_out, done] = replies(bot, ADA, 2, timeout=30)  # approvals.chat_timeout: 8
    assert unescape(timed_out) == "No answer within 8 s: the command was refused."
    assert "denied" in unescape(done) and kept.exists()
    [nothing] = say_and_wait(bot, ADA, "/approve", user_id=ADA)
    assert unescape(nothing) == "nothing is waiting for approval here"


def test_reconnects_after_the_server_restarts_without_losing_replies(
        gw: Gateway, bot: FakeBotAPI, script: Scripted, llm: Since) -> None:
    script.hold.clear()
    start = len(bot.texts(ADA))
    try:
        bot.push("a slow question", user_id=ADA)
        wait_until(lambda: [r for r in llm.requests if r.last_user_text == "a slow question"],
                   what="the turn to start")
        bot.stop()
        wait_until(lambda: _state(gw) == "reconnecting", what="status reconnecting")
    finally:
        script.hold.set()  # the answer is ready while the server is down: it must wait
    bot.push("sent while it was down", user_id=ADA)  # the server hands it out once back
    bot.start()
    wait_until(lambda: len(bot.texts(ADA)) >= start + 2, timeout=90, what="both answers")
    assert [unescape(t) for t in bot.texts(ADA)[start:]] == [
        "re: a slow question", "re: sent while it was down"]
    wait_until(lambda: _state(gw) == "running", what="status running again")
    log = (gw.home / "logs" / "gateway.log").read_text()
    assert "connection lost" in log and "reconnected" in log and TOKEN not in log


def _state(gw: Gateway) -> str:
    return str(json.loads((gw.home / "gateway.json").read_text())["platforms"]["telegram"]
               ["state"])
