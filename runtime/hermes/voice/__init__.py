"""Voice: speech in (config group ``stt``) and out (config group ``tts``).

A chat platform that receives a voice message, or wants to send a spoken answer, calls:

    from hermes.voice import transcribe, speak

    text = transcribe(runtime, Path("note.ogg"), "audio/ogg", session_id=None)
    path = speak(runtime, "Hello there", fmt="ogg-opus")   # the caller removes the file

``runtime`` is a running ``hermes.container.Runtime`` (or its ``Voice``). Both raise
``VoiceError`` with one line for the user (what failed and the fix); ``transcribe``'s
answer is what a person said — untrusted input like any message. ``stt: none`` raises
with ``off_hint()``. Commands (``stt.command``, ``tts.command``) run in the profile's
execution environment (the session's, given ``session_id``) with their placeholders
shell-quoted. ``fmt`` is a key of ``hermes.voice.audio.FORMATS`` (``ogg-opus``: Telegram
voice notes, Matrix voice messages); None keeps the backend's format. Conversion needs
ffmpeg; without it ``VoiceError`` says so.

The gateway's side (voice notes in, ``/voice on|off|only``, spoken answers out) is
``hermes.gateway.voice``: an adapter sets ``voice_format`` and implements
``deliver_voice`` (``hermes.gateway.messaging.adapter``), and puts ``IncomingAudio`` on
its ``MessageEvent.audio``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hermes.voice.base import Audio, VoiceError
from hermes.voice.service import Voice
from hermes.voice.stt import off_hint, read_audio

__all__ = ["Audio", "Voice", "VoiceError", "off_hint", "speak", "transcribe"]


def _voice(runtime: Any) -> Voice:
    return runtime if isinstance(runtime, Voice) else runtime.container.voice()


def transcribe(runtime: Any, path: Path, mime: str = "", *,
               session_id: str | None = None) -> str:
    """What was said in the audio file at ``path`` (``VoiceError`` when it cannot be had)."""
    return _voice(runtime).transcribe(read_audio(path, mime), session_id)


def speak(runtime: Any, text: str, *, fmt: str | None = None, voice: str | None = None,
          session_id: str | None = None, directory: Path | None = None) -> Path:
    """``text`` spoken into a new file (in ``directory``, else the system's temporary
    one), converted to ``fmt`` when given; the caller removes it."""
    service = _voice(runtime)
    sound = service.speak(text, session_id, voice)
    if fmt is not None:
        sound = service.convert(sound, fmt)
    with tempfile.NamedTemporaryFile(prefix="hermes-speech-", suffix=sound.suffix,
                                     dir=directory, delete=False) as file:
        file.write(sound.data)
    return Path(file.name)
