"""The discord platform in a real gateway process against the fake Discord (REST and the
Gateway WebSocket, tests/fake_discord) and the fake LLM: direct messages, pairing, server
channels on mention/reply/thread, slash commands (registered, then invoked), approvals,
images, audio, splitting, 429 with retry_after, RECONNECT (op 7) with RESUME, and the
Message Content intent refused."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_until
from fake_discord import (
    CHANNEL_ID,
    OTHER_CHANNEL_ID,
    ROLE_ID,
    THREAD_ID,
    FakeDiscord,
    serving,
)
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import Gateway, gateway
from images import JPEG, wire_images
from messaging_support import Since, configure_messaging, module_home, platform_detail

TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gabcde.fake-discord-bot-token-0123456789"
WRONG = TOKEN[:-4] + "XXXX"
ADA, BO, EVE = 4200000000000001, 4200000000000002, 9900000000000001  # Eve is not allowed
CODE = "\n".join(f"print({n})  # " + "x" * 40 for n in range(80))
SKILL_TEXT = "Deploy the site to a named environment."
LONG = "\n\n".join(f"Paragraph {n}: " + "word " * 300 for n in range(4))


def script(request: RecordedRequest) -> Reply:
    text = request.last_user_text or ""
    if "delete " in text:
        if not request.tool_results:
            target = text.split("delete ", 1)[1].split()[0]
            return Reply(tool_calls=[ToolCall("terminal", {"command": f"rm -rf {target}"})])
        return Reply(text=f"tool said: {str(request.tool_results[-1].content)[:80]}")
    if "long answer" in text:
        return Reply(text=LONG)
    if "long code" in text:
        return Reply(text=f"Here:\n\n```python\n{CODE}\n```\n\nDone.")
    if "ping all" in text:
        return Reply(text="hey @everyone, **done**")
    return Reply(text=f"re: {text}")


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=script, strict=False) as llm:
        yield llm


@pytest.fixture(scope="module")
def discord() -> Iterator[FakeDiscord]:
    with serving(TOKEN) as fake:
        yield fake


@pytest.fixture(scope="module")
def ops() -> Iterator[FakeDiscord]:
    """Another bot's Discord: the platform ``ops`` answers there in one channel, to one role."""
    with serving(TOKEN) as fake:
        yield fake


@pytest.fixture(scope="module")
def no_intent() -> Iterator[FakeDiscord]:
    """A Discord where the bot's Message Content intent is off."""
    with serving(TOKEN, content_intent=False) as fake:
        yield fake


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspace")


def discord_platform(fake: FakeDiscord, **settings: object) -> dict[str, object]:
    return {"kind": "discord", "token": "${secret:DISCORD_BOT_TOKEN}",
            "allowed_users": [str(ADA), str(BO)],
            "settings": {"api_base": fake.api_base, "send_rate": 50, **settings}}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeLLM, discord: FakeDiscord,
           ops: FakeDiscord, no_intent: FakeDiscord, workspace: Path
           ) -> Iterator[tuple[Gateway, dict[str, str]]]:
    """One gateway for the module, with four discord platforms: ``discord``; ``ops`` (kept
    to a channel and a role); ``nointent`` (refused the Message Content intent) and
    ``wrong`` (a wrong token), both failed."""
    with module_home(tmp_path_factory) as (root, environ):
        skill = root / "skills" / "ops" / "deploy-site"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(f"---\nname: deploy-site\ndescription: {SKILL_TEXT}"
                                        "\n---\n\nBuild, then upload.\n")
        platforms = {
            "discord": discord_platform(discord),
            "ops": discord_platform(ops, allowed_channels=[str(CHANNEL_ID)],
                                    allowed_roles=[str(ROLE_ID)], slash_commands=False),
            "nointent": discord_platform(no_intent),
            "wrong": discord_platform(discord) | {"token": "${secret:WRONG_DISCORD_TOKEN}"}}
        configure_messaging(root, fake_llm.openai_base_url, platforms,
                            {"DISCORD_BOT_TOKEN": TOKEN, "WRONG_DISCORD_TOKEN": WRONG},
                            approvals={"chat_timeout": 8}, environment={"cwd": str(workspace)},
                            vision={"max_bytes": 50_000})
        with gateway(environ, root, ready=False) as gw:
            platform_detail(gw, "discord")
            platform_detail(gw, "ops")
            wait_until(lambda: discord.identified and ops.identified, what="IDENTIFY")
            yield gw, environ


@pytest.fixture
def gw(served: tuple[Gateway, dict[str, str]], discord: FakeDiscord) -> Gateway:
    discord.failures.clear()
    return served[0]


@pytest.fixture
def llm(fake_llm: FakeLLM) -> Since:
    return Since(fake_llm)


def said(fake: FakeDiscord, channel: int, text: str, count: int = 1, **how: Any) -> list[str]:
    """Send ``text`` as a user; the ``count`` messages then posted in ``channel``."""
    start = len(fake.texts(channel))
    fake.say(text, **how)
    wait_until(lambda: len(fake.texts(channel)) >= start + count, timeout=60,
               what=f"{count} answer(s) in {channel}")
    return fake.texts(channel)[start:]


def dm(user: int) -> int:
    return FakeDiscord.dm_channel(user)


def test_a_direct_message_is_answered_with_typing_shown(gw: Gateway, discord: FakeDiscord,
                                                        llm: Since) -> None:
    typing = len(discord.of("POST", "/typing"))
    [answer] = said(discord, dm(ADA), "hello there", user_id=ADA)
    assert answer == "re: hello there"
    assert llm.requests[-1].last_user_text == "hello there"
    assert discord.of("POST", f"channels/{dm(ADA)}/typing")[typing:]
    sent = discord.sent(dm(ADA))[-1].body
    assert sent["allowed_mentions"] == {"parse": []}


def test_pairing_in_a_direct_message(served: tuple[Gateway, dict[str, str]],
                                     discord: FakeDiscord, llm: Since) -> None:
    gw, environ = served
    discord.say("hello from a server", user_id=EVE, guild=True, mention=True)  # ignored
    [offer] = said(discord, dm(EVE), "let me in", user_id=EVE, name="eve")
    code = re.search(r"pairing approve discord ([A-Z0-9]{8})", offer)
    assert code is not None, offer
    approved = subprocess.run([sys.executable, "-m", "hermes", "pairing", "approve", "discord",
                               code[1]], env=environ, text=True, capture_output=True,
                              timeout=120)
    assert approved.returncode == 0, approved.stderr
    [answer] = said(discord, dm(EVE), "now?", user_id=EVE, name="eve")
    assert answer == "re: now?"
    assert [r.last_user_text for r in llm.requests] == ["now?"]
    subprocess.run([sys.executable, "-m", "hermes", "pairing", "revoke", "discord", str(EVE)],
                   env=environ, capture_output=True, timeout=120, check=True)


def test_server_channels_answer_mentions_replies_and_threads(gw: Gateway, discord: FakeDiscord,
                                                             llm: Since) -> None:
    discord.say("just chatting among ourselves", user_id=ADA, guild=True)
    [mentioned] = said(discord, CHANNEL_ID, "what time is it", user_id=ADA, guild=True,
                       mention=True)
    assert mentioned == "re: what time is it"
    reply_to = discord.sent(CHANNEL_ID)[-1].answer  # the bot's message, replied to
    [replied] = said(discord, CHANNEL_ID, "and tomorrow?", user_id=BO, guild=True,
                     reply_to=reply_to)
    assert replied == "re: and tomorrow?"
    [in_thread] = said(discord, THREAD_ID, "in a thread", user_id=ADA, guild=True,
                       channel_id=THREAD_ID, mention=True)
    assert in_thread == "re: in a thread"
    [followed] = said(discord, THREAD_ID, "no mention needed now", user_id=BO, guild=True,
                      channel_id=THREAD_ID)
    assert followed == "re: no mention needed now"
    assert [r.last_user_text for r in llm.requests] == [
        "what time is it", "and tomorrow?", "in a thread", "no mention needed now"]


def test_slash_commands_are_registered_and_answer(gw: Gateway, discord: FakeDiscord) -> None:
    names = {c["name"] for c in discord.commands}
    assert {"new", "reset", "approve", "deny", "model", "usage", "stop", "help"} <= names
    approve = next(c for c in discord.commands if c["name"] == "approve")
    assert approve["options"][0]["type"] == 3 and not approve["options"][0]["required"]
    edits = len(discord.of("PATCH", "/messages/@original"))
    token = discord.command("new", user_id=ADA)
    wait_until(lambda: len(discord.of("PATCH", "/messages/@original")) > edits,
               what="the deferred response filled")
    [callback] = [c for c in discord.of("POST", "interactions/") if token in c.path]
    assert callback.body == {"type": 5}
    edit = discord.of("PATCH", "/messages/@original")[-1]
    assert token in edit.path and edit.body["content"] == "started a new conversation"
    stranger = discord.command("help", user_id=EVE, guild=True)
    wait_until(lambda: [c for c in discord.of("POST", "interactions/") if stranger in c.path],
               what="the stranger told")
    [told] = [c for c in discord.of("POST", "interactions/") if stranger in c.path]
    assert told.body["type"] == 4 and told.body["data"]["flags"] == 64


def test_a_slash_command_whose_response_cannot_be_filled_is_answered_in_the_channel(
        gw: Gateway, discord: FakeDiscord) -> None:
    discord.fail("PATCH", "/messages/@original", 404, "Unknown Webhook", code=10015)
    start = len(discord.texts(dm(ADA)))
    discord.command("help", user_id=ADA)
    wait_until(lambda: len(discord.texts(dm(ADA))) > start, what="/help in the channel")
    assert discord.texts(dm(ADA))[start].startswith("/new or /reset")


def test_a_skill_is_a_slash_command(gw: Gateway, discord: FakeDiscord, llm: Since) -> None:
    [registered] = [c for c in discord.commands if c["name"] == "deploy-site"]
    assert registered["description"] == SKILL_TEXT
    edits = len(discord.of("PATCH", "/messages/@original"))
    discord.command("deploy-site", "staging", user_id=BO)
    wait_until(lambda: len(discord.of("PATCH", "/messages/@original")) > edits,
               what="the skill's answer")
    answer = discord.of("PATCH", "/messages/@original")[-1].body["content"]
    assert answer.startswith("re: The user ran the skill command /deploy-site.")
    asked = llm.requests[-1].last_user_text or ""
    assert "Build, then upload." in asked and asked.endswith("Request: staging")


def test_a_tool_call_approved_by_slash_command_and_by_message(
        gw: Gateway, discord: FakeDiscord, workspace: Path) -> None:
    victim, other = workspace / "victim", workspace / "other"
    victim.mkdir()
    other.mkdir()
    [question] = said(discord, CHANNEL_ID, f"delete {victim} now", user_id=ADA, guild=True,
                      mention=True)
    assert f"rm -rf {victim}" in question and "/approve" in question
    edits = len(discord.of("PATCH", "/messages/@original"))
    start = len(discord.texts(CHANNEL_ID))
    discord.command("approve", user_id=EVE, guild=True)  # not allowed: told, nothing runs
    discord.command("approve", "once", user_id=BO, guild=True)
    wait_until(lambda: len(discord.texts(CHANNEL_ID)) > start, what="the tool's answer")
    ack = discord.of("PATCH", "/messages/@original")[edits:]
    assert [c.body["content"] for c in ack] == ["approved (once): running it"]
    assert discord.texts(CHANNEL_ID)[-1].startswith("tool said:") and not victim.exists()
    said(discord, dm(ADA), f"delete {other} please", user_id=ADA)
    [ack_text, done] = said(discord, dm(ADA), "/approve", count=2, user_id=ADA)
    assert ack_text == "approved (once): running it" and not other.exists()
    assert done.startswith("tool said:")


def test_an_image_goes_to_vision_and_audio_without_stt_gets_one_line(
        gw: Gateway, discord: FakeDiscord, llm: Since) -> None:
    photo = discord.image("photo.jpg", JPEG, "image/jpeg")
    [answer] = said(discord, dm(ADA), "what is in this photo?", user_id=ADA,
                    attachments=[photo])
    assert answer == "re: what is in this photo?"
    assert wire_images(llm.requests[-1]) == [("image/jpeg", base64.b64encode(JPEG).decode())]
    voice = discord.image("voice-message.ogg", b"OggS fake", "audio/ogg")
    [line] = said(discord, dm(ADA), "", user_id=ADA, attachments=[voice])
    assert line.startswith("(voice messages are off here — turn them on with `hermes config set "
                           "stt openai`")  # stt: none, the default
    assert len(llm.requests) == 1


def test_long_answers_are_split_code_blocks_kept_and_mass_mentions_not_sent(gw: Gateway,
                                                          discord: FakeDiscord) -> None:
    texts = said(discord, dm(BO), "a long answer please", count=4, user_id=BO)
    assert "\n\n".join(texts) == LONG and all(len(t) <= 2000 for t in texts)
    assert all(t.startswith("Paragraph") for t in texts)
    parts = said(discord, dm(BO), "long code please", count=5, user_id=BO)
    assert all(len(p) <= 2000 for p in parts) and parts[0] == "Here:" and parts[-1] == "Done."
    blocks = parts[1:-1]  # each a whole code block: closed where cut, reopened after
    assert all(b.startswith("```python\n") and b.endswith("\n```") for b in blocks)
    assert "\n".join(b[len("```python\n"):-len("\n```")] for b in blocks) == CODE
    [pinged] = said(discord, dm(BO), "ping all", user_id=BO)
    assert pinged == "hey @\u200beveryone, **done**"


def test_a_429_is_waited_out_for_retry_after(gw: Gateway, discord: FakeDiscord) -> None:
    discord.fail("POST", f"channels/{dm(ADA)}/messages", 429, "You are being rate limited.",
                 retry_after=1.5)
    start = len(discord.of("POST", f"channels/{dm(ADA)}/messages"))
    [answer] = said(discord, dm(ADA), "rate me", user_id=ADA)
    assert answer == "re: rate me"
    refused, delivered = discord.of("POST", f"channels/{dm(ADA)}/messages")[start:start + 2]
    assert (refused.status, delivered.status) == (429, 200)
    assert delivered.at - refused.at >= 1.4


def test_a_reconnect_request_is_resumed(gw: Gateway, discord: FakeDiscord) -> None:
    resumed = discord.resumed
    discord.reconnect()
    wait_until(lambda: discord.resumed > resumed, what="RESUME after op 7")
    [answer] = said(discord, dm(ADA), "still there?", user_id=ADA)
    assert answer == "re: still there?"
    assert _platform(gw)["state"] == "running"  # type: ignore[index]


def test_reconnects_after_discord_comes_back(gw: Gateway, discord: FakeDiscord) -> None:
    identified = discord.identified
    discord.stop()
    wait_until(lambda: (_platform(gw) or {}).get("state") == "reconnecting", timeout=30,
               what="status reconnecting")
    discord.start()
    wait_until(lambda: discord.identified > identified, timeout=60, what="IDENTIFY again")
    wait_until(lambda: (_platform(gw) or {}).get("state") == "running", what="running again")
    [answer] = said(discord, dm(ADA), "back again?", user_id=ADA)
    assert answer == "re: back again?"
    log = (gw.home / "logs" / "gateway.log").read_text()
    assert "connection lost" in log and "reconnected" in log and TOKEN not in log


def test_channels_outside_allowed_channels_and_roles_are_ignored(gw: Gateway,
                                                                  ops: FakeDiscord) -> None:
    ops.say("elsewhere", user_id=ADA, guild=True, channel_id=OTHER_CHANNEL_ID, mention=True,
            roles=(ROLE_ID,))
    ops.say("no role", user_id=ADA, guild=True, mention=True)
    [answer] = said(ops, CHANNEL_ID, "with the role", user_id=ADA, guild=True, mention=True,
                    roles=(ROLE_ID,))
    assert answer == "re: with the role"
    assert ops.texts(OTHER_CHANNEL_ID) == [] and ops.commands == []
    assert len(ops.texts(CHANNEL_ID)) == 1
    token = ops.command("help", user_id=ADA, guild=True, channel_id=OTHER_CHANNEL_ID,
                        roles=(ROLE_ID,))
    told = wait_until(lambda: [c for c in ops.of("POST", "interactions/") if token in c.path],
                      what="told where not to ask")
    assert told[0].body["data"] == {  # type: ignore[index]
        "content": "I don't answer in this channel.", "flags": 64}


def test_without_the_message_content_intent_the_platform_fails_saying_how(
        gw: Gateway, no_intent: FakeDiscord) -> None:
    failed = wait_until(lambda: (p := _platform(gw, "nointent")) and p["state"] == "failed"
                        and p, timeout=60, what="nointent failed")
    assert "Message Content Intent" in failed["detail"]  # type: ignore[index]
    assert no_intent.identified == 0
    assert TOKEN not in (gw.home / "logs" / "gateway.log").read_text()


def test_a_wrong_token_fails_the_platform_and_the_doctor_row(
        served: tuple[Gateway, dict[str, str]]) -> None:
    gw, environ = served
    failed = wait_until(lambda: (p := _platform(gw, "wrong")) and p["state"] == "failed" and p,
                        timeout=60, what="wrong failed")
    assert "rejected the bot token" in failed["detail"]  # type: ignore[index]
    doctor = subprocess.run([sys.executable, "-m", "hermes", "doctor"], env=environ,
                            text=True, capture_output=True, timeout=120)
    [wrong] = [line for line in doctor.stdout.splitlines() if "platform wrong" in line]
    [right] = [line for line in doctor.stdout.splitlines() if "platform discord" in line]
    assert "refused the bot token (401)" in wrong and "bot @hermes" in right, doctor.stdout
    assert WRONG not in doctor.stdout + (gw.home / "logs" / "gateway.log").read_text()


def _platform(gw: Gateway, name: str = "discord") -> dict[str, Any] | None:
    """A platform's row of ``gateway status`` (None before it is written)."""
    try:
        return dict(json.loads((gw.home / "gateway.json").read_text())["platforms"][name])
    except (OSError, ValueError, KeyError):
        return None
