"""Voice in the gateway: voice messages heard before the turn, answers spoken after it.

A platform puts an ``IncomingAudio`` on a ``MessageEvent`` for a voice note or an audio
file; it is downloaded once the gate let the sender in, transcribed (``stt``), shown to
the chat as ``🎤 <transcript>`` and run as the turn's message — what the session stores.
The transcript is a message like any other (a spoken "/approve" is text, not a command).
With ``stt: none`` the chat gets one line saying how to turn voice on, and no turn runs.

``/voice on`` (text and a spoken answer), ``/voice only`` (a spoken answer alone),
``/voice off``: per chat (or thread), kept in the home (``gateway_voice.json``). Spoken
answers go out through the adapter's outbox in its ``voice_format``; a chat whose
answer cannot be spoken gets the text and one line saying why. Recordings the
``text_to_speech`` tool made during a turn are sent to the chat after the answer.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from hermes.agent.attachments import ImageRefused
from hermes.agent.commands import parse
from hermes.fsutil import atomic_write
from hermes.gateway.base import MessageEvent, MessageSource
from hermes.voice import Voice, VoiceError, off_hint
from hermes.voice.base import Audio
from hermes.voice.tts import off_hint as tts_off_hint

Mode = Literal["off", "on", "only"]
MODES: tuple[Mode, ...] = ("off", "on", "only")
VOICE_FILE = "gateway_voice.json"
HEARD = "🎤 "
"""Before the transcript shown to the chat."""
Reply = Callable[[MessageSource, str], Awaitable[None]]


@dataclass(frozen=True)
class IncomingAudio:
    """A voice note or audio file a message carries, not downloaded yet."""

    name: str
    """How the user knows it (``voice message``, a file name), for one-line refusals."""
    fetch: Callable[[int], Awaitable[bytes]]
    """``fetch(max_bytes) -> bytes`` through the platform's API; raises ``ImageRefused``
    (one line) past ``max_bytes`` or when it cannot be had, as image downloads do."""
    size: int | None = None
    mime: str = ""
    suffix: str = ".ogg"


class ChatVoice:
    """One profile's voice in its chats: the per-chat modes and both directions."""

    def __init__(self, voice: Voice, home: Path, reply: Reply):
        self.voice = voice
        self.reply = reply
        self._path = home / VOICE_FILE
        self._modes: dict[str, Mode] = _load(self._path)

    def mode(self, source: MessageSource) -> Mode:
        return self._modes.get(source.session_key, "off")

    def command(self, source: MessageSource, text: str, adapter: Any = None) -> str:
        """``/voice [on|off|only]``: set (or show) how this chat's answers come (``adapter``:
        the chat's platform, which may send no voice messages)."""
        word = parse(text)[1].lower()
        if not word:
            return f"voice: {self.mode(source)} (/voice on, /voice only or /voice off)"
        if word not in MODES:
            return f"unknown voice mode {word!r}; use /voice on, /voice only or /voice off"
        if word != "off" and not self.voice.speaks:
            return f"({tts_off_hint()})"
        if word != "off" and getattr(adapter, "voice_format", None) is None:
            return f"{source.platform} sends no voice messages here; answers stay text"
        self._modes.pop(source.session_key, None)
        if word != "off":
            self._modes[source.session_key] = word
        atomic_write(self._path, json.dumps(self._modes, indent=2), mode=0o600)
        return {"on": "voice on: answers come as text and speech",
                "only": "voice only: answers come as speech",
                "off": "voice off: answers come as text"}[word]

    async def refused(self, event: MessageEvent) -> bool:
        """A voice message while ``stt`` is ``none``: the chat is told (True: no turn)."""
        if event.audio and not self.voice.hears:
            await self.reply(event.source, off_hint())
            return True
        return False

    async def hear(self, event: MessageEvent, session_id: str) -> str | None:
        """The turn's message: the caption and what was said (shown to the chat first);
        None when the audio could not be had (the chat is told why)."""
        if not event.audio:
            return event.text
        try:
            heard = [await self._transcribe(audio, session_id) for audio in event.audio]
        except VoiceError as exc:
            await self.reply(event.source, str(exc))
            return None
        said = "\n".join(heard)
        await self.reply(event.source, HEARD + said)
        return f"{event.text.strip()}\n\n{said}" if event.text.strip() else said

    async def _transcribe(self, audio: IncomingAudio, session_id: str) -> str:
        limit = self.voice.stt_settings.max_bytes
        if audio.size is not None and audio.size > limit:
            raise VoiceError(f"{audio.name}: {audio.size:,} bytes, over stt.max_bytes "
                             f"({limit:,}); send a shorter one")
        try:
            data = await audio.fetch(limit)
        except ImageRefused as exc:  # the platform's download refused it: one line
            raise VoiceError(str(exc)) from exc
        sound = Audio(data, audio.suffix, audio.mime or "application/octet-stream")
        return await asyncio.to_thread(self.voice.transcribe, sound, session_id)

    async def answer(self, adapter: Any, source: MessageSource, text: str,
                     session_id: str | None) -> None:
        """Send the turn's answer as the chat's mode says, then the recordings its
        tools made."""
        made = self.voice.take(session_id) if session_id else []
        alone = self.mode(source) == "only"
        if not alone:
            await self.reply(source, text)
        if not await self._spoken(adapter, source, text, session_id) and alone:
            await self.reply(source, text)
        for sound in made:
            await self._send(adapter, source, functools.partial(_same, sound))

    async def _spoken(self, adapter: Any, source: MessageSource, text: str,
                      session_id: str | None) -> bool:
        """The answer spoken into the chat (True), or why not told in it (False)."""
        if self.mode(source) == "off" or not text.strip():
            return False
        if getattr(adapter, "voice_format", None) is None:
            await self.reply(source, f"({source.platform} takes no voice messages here)")
            return False
        return await self._send(adapter, source,
                                functools.partial(self.voice.speak, text, session_id))

    async def _send(self, adapter: Any, source: MessageSource, make: Callable[[], Audio]
                    ) -> bool:
        """``make()``'s sound, in the adapter's format, queued for the chat (True); a
        failure told in one line (False)."""
        fmt = getattr(adapter, "voice_format", None)
        if fmt is None:
            return False
        try:
            sound = await asyncio.to_thread(lambda: self.voice.convert(make(), fmt))
        except VoiceError as exc:
            await self.reply(source, f"(not spoken: {exc})")
            return False
        await adapter.send_voice(source, sound)
        return True


def _same(sound: Audio) -> Audio:
    return sound


def _load(path: Path) -> dict[str, Mode]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(key): value for key, value in data.items() if value in ("on", "only")}
