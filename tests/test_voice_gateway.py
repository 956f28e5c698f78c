"""Voice messages with ``stt: command`` and ``stt: none``, in one real gateway serving two
profiles, each with its own bot at the fake Bot API: the command template runs in the
profile's execution environment on the voice note (its paths quoted), its transcript is
a message like any other (a spoken "/new" is not a command); without stt the chat gets
one line saying how to turn voice on, and nothing is downloaded or asked of the model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import wait_until
from fakebot import FakeBotAPI, check_markdown_v2, serving
from fakellm import FakeLLM, RecordedRequest, Reply
from gateway_support import Gateway, gateway
from hermes.chats import MessageSource
from hermes.config.voice_schema import SttConfig, TtsConfig
from hermes.gateway.voice import ChatVoice
from hermes.voice import Voice
from messaging_support import Since, configure_messaging, module_home, platform_detail
from voice_support import ESPEAK, spoken

TOKENS = {"default": "111111:AAH-voice-command-0123456789abcdef",
          "quiet": "222222:AAH-voice-none-0123456789abcdefgh"}
ADA = 42
# Checks that the voice note is real audio, then says a line beginning with a slash.
TEMPLATE = ("ffprobe -v error {input_path} && printf '/new lights on %s\\n' {language} "
            "> {output_dir}/said.txt")


def answer(request: RecordedRequest) -> Reply:
    return Reply(text=f"re: {request.last_user_text}")


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=answer, strict=False) as llm:
        yield llm


@pytest.fixture(scope="module")
def bots() -> Iterator[dict[str, FakeBotAPI]]:
    with serving(TOKENS["default"]) as default, serving(TOKENS["quiet"]) as quiet:
        yield {"default": default, "quiet": quiet}


def telegram(bot: FakeBotAPI) -> dict[str, object]:
    return {"kind": "telegram", "token": "${secret:TELEGRAM_BOT_TOKEN}",
            "allowed_users": [str(ADA)],
            "settings": {"base_url": bot.url, "poll_timeout": 2, "send_rate": 50}}


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeLLM,
       bots: dict[str, FakeBotAPI]) -> Iterator[Gateway]:
    with module_home(tmp_path_factory) as (root, environ):
        configure_messaging(root, fake_llm.openai_base_url, {"telegram": telegram(
            bots["default"])}, {"TELEGRAM_BOT_TOKEN": TOKENS["default"]},
            stt={"name": "command", "backend": "command", "command": TEMPLATE,
                 "language": "en"})
        configure_messaging(root / "profiles" / "quiet", fake_llm.openai_base_url,
                            {"telegram": telegram(bots["quiet"])},
                            {"TELEGRAM_BOT_TOKEN": TOKENS["quiet"]})
        with gateway(environ, root, ["--profiles", "default,quiet"], ready=False) as served:
            platform_detail(served, "telegram")
            wait_until(lambda: bots["quiet"].of("getUpdates"), timeout=60,
                       what="the quiet profile's bot polling")
            yield served


def said(bot: FakeBotAPI, count: int, **message: object) -> list[str]:
    """Push a message from Ada; the next ``count`` texts she gets, as she reads them."""
    before = len(bot.texts(ADA))
    bot.push("", user_id=ADA, **message)  # type: ignore[arg-type]
    got = wait_until(lambda: bot.texts(ADA)[before:] if len(bot.texts(ADA)) >= before + count
                     else None, timeout=60, what=f"{count} message(s) to Ada")
    return [check_markdown_v2(text)[1] for text in got]  # type: ignore[attr-defined]


def test_the_command_transcribes_in_the_environment_and_its_text_is_no_command(
        gw: Gateway, bots: dict[str, FakeBotAPI], fake_llm: FakeLLM) -> None:
    llm = Since(fake_llm)
    bot = bots["default"]
    shown, answered = said(bot, 2, attached=bot.voice(spoken("lights on")))
    assert shown == "🎤 /new lights on en"
    assert answered == "re: /new lights on en"  # a turn, not the /new command
    assert [r.last_user_text for r in llm.requests] == ["/new lights on en"]
    assert fake_llm.audio.requests == []  # the command heard it, not an endpoint


def test_a_failing_command_is_one_line_and_runs_no_turn(
        gw: Gateway, bots: dict[str, FakeBotAPI], fake_llm: FakeLLM) -> None:
    llm = Since(fake_llm)
    bot = bots["default"]
    [line] = said(bot, 1, attached=bot.voice(b"OggS not really audio"))
    assert line.startswith("stt.command failed (exit code 1)"), line
    assert "\n" not in line and llm.requests == []


def test_without_stt_the_chat_is_told_how_to_turn_voice_on(
        gw: Gateway, bots: dict[str, FakeBotAPI], fake_llm: FakeLLM) -> None:
    llm = Since(fake_llm)
    bot = bots["quiet"]
    attached = bot.voice(spoken("hello"))
    [line] = said(bot, 1, attached=attached)
    assert line == ("(voice messages are off here — turn them on with hermes config set stt "
                    "openai and OPENAI_API_KEY, or hermes config set stt command; then "
                    "restart the gateway)")  # the commands shown as code
    assert bot.files[attached["voice"]["file_id"]].path not in bot.downloads
    assert llm.requests == []


def test_voice_on_without_tts_says_how_to_turn_it_on(gw: Gateway,
                                                      bots: dict[str, FakeBotAPI]) -> None:
    bot = bots["quiet"]
    before = len(bot.texts(ADA))
    bot.push("/voice on", user_id=ADA)
    [line] = wait_until(lambda: bot.texts(ADA)[before:], timeout=60, what="the answer")
    assert check_markdown_v2(line)[1].startswith(
        "(spoken answers are off — turn them on with hermes config set tts openai")


def test_voice_on_is_refused_where_the_platform_sends_no_voice(tmp_path: Path) -> None:
    """A platform without a ``voice_format`` (email, say) keeps its chats' answers text."""
    speaking = Voice(SttConfig(), TtsConfig(name="command", backend="command",
                                            command=ESPEAK), None)  # type: ignore[arg-type]
    chats = ChatVoice(speaking, tmp_path, reply=None)  # type: ignore[arg-type]
    mail = MessageSource("email", "ada@example.org")
    assert chats.command(mail, "/voice on", adapter=object()) == \
        "email sends no voice messages here; answers stay text"
    assert chats.mode(mail) == "off" and not (tmp_path / "gateway_voice.json").exists()
