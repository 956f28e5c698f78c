"""Voice on Signal, in a real gateway process against the fake signal-cli daemon and the
fake LLM (its OpenAI transcription endpoint): a voice note is transcribed (shown as 🎤
and run as the turn) and answered in text; with ``/voice on`` the spoken answer
(espeak-ng through ``tts.command``, then ffmpeg to OGG/Opus) follows as an attachment."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest

from conftest import wait_until
from fake_signal import FakeSignalDaemon, serving
from fakellm import FakeLLM, RecordedRequest, Reply
from gateway_support import Gateway, gateway
from messaging_support import configure_messaging, module_home, platform_detail
from voice_support import ESPEAK, seconds, spoken

ACCOUNT, ADA = "+15550000001", "+15550000042"
SAID = "what is the weather in Paris"


def answer(request: RecordedRequest) -> Reply:
    return Reply(text=f"re: {request.last_user_text}")


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=answer, strict=False) as llm:
        llm.audio.transcript = SAID
        yield llm


@pytest.fixture(scope="module")
def daemon() -> Iterator[FakeSignalDaemon]:
    with serving(ACCOUNT) as fake:
        yield fake


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeLLM, daemon: FakeSignalDaemon
       ) -> Iterator[Gateway]:
    platform = {"kind": "signal", "allowed_users": [ADA],
                "settings": {"account": ACCOUNT, "url": daemon.url, "send_rate": 50}}
    with module_home(tmp_path_factory) as (root, environ):
        configure_messaging(
            root, fake_llm.openai_base_url, {"signal": platform}, {"STT_KEY": "sk-stt-1234"},
            stt={"name": "openai", "backend": "openai", "model": "whisper-1",
                 "api_base": fake_llm.openai_base_url, "api_key": "${secret:STT_KEY}"},
            tts={"name": "command", "backend": "command", "command": ESPEAK, "voice": "en"})
        with gateway(environ, root, ready=False) as served:
            platform_detail(served, "signal")
            wait_until(lambda: daemon.listening, what="the event stream")
            yield served


def texts_after(daemon: FakeSignalDaemon, before: int, count: int) -> list[str]:
    got = wait_until(lambda: daemon.texts(ADA)[before:]
                     if len([t for t in daemon.texts(ADA) if t]) >= before + count else None,
                     timeout=60, what=f"{count} message(s) to Ada")
    return [text for text in got if text]  # type: ignore[union-attr]


def voice_note(daemon: FakeSignalDaemon) -> bytes:
    data = spoken(SAID)
    note = daemon.attachment(data, "", "audio/ogg") | {"filename": None}
    daemon.push("", number=ADA, attachments=[note])
    return data


def attachments_sent(daemon: FakeSignalDaemon) -> list[str]:
    return [uri for call in daemon.of("send") if call.ok
            for uri in call.params.get("attachments") or ()]


def test_a_voice_note_is_transcribed_and_answered_then_spoken_with_voice_on(
        gw: Gateway, daemon: FakeSignalDaemon, fake_llm: FakeLLM) -> None:
    heard, before = len(fake_llm.audio.requests), len([t for t in daemon.texts(ADA) if t])
    sent = voice_note(daemon)
    assert texts_after(daemon, before, 2) == [f"🎤 {SAID}", f"re: {SAID}"]
    [request] = fake_llm.audio.requests[heard:]
    assert request.file == sent  # as the person sent it
    assert attachments_sent(daemon) == []  # voice is off: no spoken answer
    before = len([t for t in daemon.texts(ADA) if t])
    daemon.push("/voice on", number=ADA)
    assert texts_after(daemon, before, 1) == ["voice on: answers come as text and speech"]
    before = len([t for t in daemon.texts(ADA) if t])
    voice_note(daemon)
    assert texts_after(daemon, before, 2) == [f"🎤 {SAID}", f"re: {SAID}"]
    [uri] = wait_until(lambda: attachments_sent(daemon), timeout=60,
                       what="the spoken answer")  # type: ignore[misc]
    head, _, payload = uri.partition(";base64,")
    assert head == "data:audio/ogg;filename=answer.ogg"
    audio = base64.b64decode(payload)
    assert audio[:4] == b"OggS" and seconds(audio) > 1.0
