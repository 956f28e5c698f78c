"""Voice on Discord, in a real gateway process against the fake Discord and the fake LLM
(its OpenAI transcription endpoint): a voice message is transcribed (shown as 🎤 and run
as the turn) and answered in text; with ``/voice on`` the spoken answer (espeak-ng through
``tts.command``, then ffmpeg to OGG/Opus) follows as an audio file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conftest import wait_until
from fake_discord import FakeDiscord, serving
from fakellm import FakeLLM, RecordedRequest, Reply
from gateway_support import Gateway, gateway
from messaging_support import configure_messaging, module_home, platform_detail
from voice_support import ESPEAK, seconds, spoken

TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gvoice.fake-discord-voice-token-01234567"
ADA = 4200000000000001
SAID = "what is the weather in Paris"
VOICE_MESSAGE = 1 << 13


def answer(request: RecordedRequest) -> Reply:
    return Reply(text=f"re: {request.last_user_text}")


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=answer, strict=False) as llm:
        llm.audio.transcript = SAID
        yield llm


@pytest.fixture(scope="module")
def discord() -> Iterator[FakeDiscord]:
    with serving(TOKEN) as fake:
        yield fake


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeLLM, discord: FakeDiscord
       ) -> Iterator[Gateway]:
    platform = {"kind": "discord", "token": "${secret:DISCORD_BOT_TOKEN}",
                "allowed_users": [str(ADA)],
                "settings": {"api_base": discord.api_base, "send_rate": 50}}
    with module_home(tmp_path_factory) as (root, environ):
        configure_messaging(
            root, fake_llm.openai_base_url, {"discord": platform},
            {"DISCORD_BOT_TOKEN": TOKEN, "STT_KEY": "sk-stt-secret-1234"},
            stt={"name": "openai", "backend": "openai", "model": "whisper-1",
                 "api_base": fake_llm.openai_base_url, "api_key": "${secret:STT_KEY}"},
            tts={"name": "command", "backend": "command", "command": ESPEAK, "voice": "en"})
        with gateway(environ, root, ready=False) as served:
            platform_detail(served, "discord")
            wait_until(lambda: discord.identified, what="IDENTIFY")
            yield served


def texts_after(discord: FakeDiscord, before: int, count: int) -> list[str]:
    channel = discord.dm_channel(ADA)
    got = wait_until(lambda: discord.texts(channel)[before:]
                     if len(discord.texts(channel)) >= before + count else None,
                     timeout=60, what=f"{count} message(s) to Ada")
    return list(got)  # type: ignore[call-overload]


def voice_message(discord: FakeDiscord) -> None:
    note = discord.image("voice-message.ogg", spoken(SAID), "audio/ogg")
    discord.say("", user_id=ADA, attachments=[note], flags=VOICE_MESSAGE)


def test_a_voice_message_is_transcribed_and_answered_then_spoken_with_voice_on(
        gw: Gateway, discord: FakeDiscord, fake_llm: FakeLLM) -> None:
    channel = discord.dm_channel(ADA)
    heard, before = len(fake_llm.audio.requests), len(discord.texts(channel))
    voice_message(discord)
    assert texts_after(discord, before, 2) == [f"🎤 {SAID}", f"re: {SAID}"]
    [request] = fake_llm.audio.requests[heard:]
    assert request.file == discord.files["voice-message.ogg"]  # as the user sent it
    assert discord.uploads(channel) == []  # voice is off: no spoken answer
    before = len(discord.texts(channel))
    discord.say("/voice on", user_id=ADA)
    assert texts_after(discord, before, 1) == ["voice on: answers come as text and speech"]
    before = len(discord.texts(channel))
    voice_message(discord)
    assert texts_after(discord, before, 2) == [f"🎤 {SAID}", f"re: {SAID}"]
    [upload] = wait_until(lambda: discord.uploads(channel), timeout=60,
                          what="the spoken answer")  # type: ignore[misc]
    assert upload["filename"] == "answer.ogg" and upload["data"][:4] == b"OggS"
    assert seconds(upload["data"]) > 1.0
