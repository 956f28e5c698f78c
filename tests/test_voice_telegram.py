"""Voice on Telegram, in a real gateway process against the fake Bot API and the fake LLM
(its OpenAI transcription endpoint): a voice note is transcribed (shown as 🎤 and run as
the turn), answered in text; ``/voice on`` adds a spoken answer (an OGG/Opus voice note
made by espeak-ng through ``tts.command`` and ffmpeg), ``/voice only`` sends it alone;
``text_to_speech`` recordings reach the chat."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import wait_until
from fakebot import FakeBotAPI, check_markdown_v2, serving
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import Gateway, gateway
from messaging_support import Since, configure_messaging, module_home, platform_detail
from voice_support import ESPEAK, seconds, spoken

TOKEN = "123456789:AAH-voice-token-0123456789abcdefghij"
ADA, EVE = 42, 99  # Ada is allowed; Eve is not
SAID = "what is the weather in Paris"


def answer(request: RecordedRequest) -> Reply:
    text = request.last_user_text or ""
    if "say it aloud" in text and not request.tool_results:
        return Reply(tool_calls=[ToolCall("text_to_speech", {"text": "Bonjour Ada"})])
    if request.tool_results:
        return Reply(text=f"spoken: {str(request.tool_results[-1].content)[:200]}")
    return Reply(text=f"re: {text}")


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=answer, strict=False) as llm:
        llm.audio.transcript = f"  {SAID}  "
        yield llm


@pytest.fixture(scope="module")
def bot() -> Iterator[FakeBotAPI]:
    with serving(TOKEN) as api:
        yield api


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeLLM, bot: FakeBotAPI
       ) -> Iterator[Gateway]:
    telegram = {"kind": "telegram", "token": "${secret:TELEGRAM_BOT_TOKEN}",
                "allowed_users": [str(ADA)],
                "settings": {"base_url": bot.url, "poll_timeout": 2, "send_rate": 50}}
    with module_home(tmp_path_factory) as (root, environ):
        workspace = tmp_path_factory.mktemp("workspace")
        configure_messaging(
            root, fake_llm.openai_base_url, {"telegram": telegram},
            {"TELEGRAM_BOT_TOKEN": TOKEN, "STT_KEY": "sk-stt-secret-1234"},
            environment={"cwd": str(workspace)},
            stt={"name": "openai", "backend": "openai", "model": "whisper-1",
                 "api_base": fake_llm.openai_base_url, "api_key": "${secret:STT_KEY}"},
            tts={"name": "command", "backend": "command", "command": ESPEAK, "voice": "en"})
        with gateway(environ, root, ready=False) as served:
            platform_detail(served, "telegram")
            yield served


@pytest.fixture
def llm(fake_llm: FakeLLM) -> Since:
    return Since(fake_llm)


def texts_after(bot: FakeBotAPI, before: int, count: int) -> list[str]:
    """The next ``count`` texts Ada got, as she reads them (MarkdownV2 parsed)."""
    got = wait_until(lambda: bot.texts(ADA)[before:] if len(bot.texts(ADA)) >= before + count
                     else None, timeout=60, what=f"{count} message(s) to Ada")
    return [check_markdown_v2(text)[1] for text in got]  # type: ignore[attr-defined]


def command(bot: FakeBotAPI, text: str) -> str:
    before = len(bot.texts(ADA))
    bot.push(text, user_id=ADA)
    return texts_after(bot, before, 1)[0]


def test_a_voice_note_is_transcribed_shown_and_answered_in_text(
        gw: Gateway, bot: FakeBotAPI, fake_llm: FakeLLM, llm: Since) -> None:
    note = spoken(SAID)
    heard = len(fake_llm.audio.requests)
    before = len(bot.texts(ADA))
    bot.push("", user_id=ADA, attached=bot.voice(note))
    shown, answered = texts_after(bot, before, 2)
    assert shown == f"🎤 {SAID}"
    assert answered == f"re: {SAID}"
    [request] = fake_llm.audio.requests[heard:]
    assert request.path == "/v1/audio/transcriptions"
    assert request.file == note  # the voice note as the user sent it
    assert request.fields["model"] == "whisper-1"
    assert request.headers["authorization"] == "Bearer sk-stt-secret-1234"
    assert [r.last_user_text for r in llm.requests] == [SAID]  # what the session stores
    assert bot.voices(ADA) == []  # voice is off in this chat: no spoken answer


def test_voice_on_adds_a_spoken_answer_and_only_sends_it_alone(
        gw: Gateway, bot: FakeBotAPI) -> None:
    assert command(bot, "/voice") == "voice: off (/voice on, /voice only or /voice off)"
    assert command(bot, "/voice on") == "voice on: answers come as text and speech"
    before, voices = len(bot.texts(ADA)), len(bot.voices(ADA))
    bot.push("", user_id=ADA, attached=bot.voice(spoken(SAID)))
    assert texts_after(bot, before, 2) == [f"🎤 {SAID}", f"re: {SAID}"]
    [voice] = wait_until(lambda: bot.voices(ADA)[voices:], timeout=60, what="a voice note")
    assert seconds(voice) > 1.0  # espeak-ng said "re: what is the weather in Paris"

    assert command(bot, "/voice only") == "voice only: answers come as speech"
    before, voices = len(bot.texts(ADA)), len(bot.voices(ADA))
    bot.push("hello there", user_id=ADA)
    wait_until(lambda: bot.voices(ADA)[voices:], timeout=60, what="a spoken answer")
    assert bot.texts(ADA)[before:] == []  # speech alone
    assert command(bot, "/voice off") == "voice off: answers come as text"
    assert command(bot, "/voice loud").startswith("unknown voice mode 'loud'")


def test_text_to_speech_makes_a_file_and_the_chat_gets_it(
        gw: Gateway, bot: FakeBotAPI, llm: Since) -> None:
    before, voices = len(bot.texts(ADA)), len(bot.voices(ADA))
    bot.push("say it aloud please", user_id=ADA)
    [text] = texts_after(bot, before, 1)
    assert text.startswith('spoken: {"path": "/tmp/hermes-speech/speech-')
    assert '"format": "audio/ogg"' in text
    [voice] = wait_until(lambda: bot.voices(ADA)[voices:], timeout=60, what="the recording")
    assert seconds(voice) > 0.3


def test_a_voice_note_from_someone_not_allowed_is_never_downloaded(
        gw: Gateway, bot: FakeBotAPI, fake_llm: FakeLLM, llm: Since) -> None:
    heard = len(fake_llm.audio.requests)
    attached = bot.voice(spoken(SAID))
    before = len(bot.texts(EVE))
    bot.push("", user_id=EVE, username="eve", attached=attached)
    wait_until(lambda: len(bot.texts(EVE)) > before, timeout=60, what="the pairing offer")
    command(bot, "/voice")  # Ada's command after Eve's message: Eve's was handled by then
    file_path = bot.files[attached["voice"]["file_id"]].path
    assert file_path not in bot.downloads
    assert fake_llm.audio.requests[heard:] == [] and llm.requests == []


def test_the_voice_command_is_listed_in_help(gw: Gateway, bot: FakeBotAPI) -> None:
    assert "/voice [on|off|only] — answers in this chat as text" in command(bot, "/help")


def test_nothing_secret_is_in_the_home_voice_state(gw: Gateway) -> None:
    state = Path(gw.home) / "gateway_voice.json"
    assert not state.exists() or "sk-" not in state.read_text()
