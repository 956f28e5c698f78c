"""``Voice``: one runtime's speech services (``stt``, ``tts``), the execution environment
their commands run in, and the spoken files its tools made for a chat to send."""

from __future__ import annotations

import threading
from collections import defaultdict

from hermes.config.voice_schema import SttConfig, TtsConfig
from hermes.environments.base import Environment
from hermes.voice import audio, stt, tts
from hermes.voice.base import Audio

KEPT_SESSIONS = 64
"""Sessions whose recordings wait for their chat at most (the oldest are dropped)."""


class Voice:
    """Transcribe, speak, convert; built once per runtime by the container."""

    def __init__(self, stt: SttConfig, tts: TtsConfig, environment: Environment):
        self.stt_settings = stt
        self.tts_settings = tts
        self.environment = environment
        self._made: dict[str, list[Audio]] = defaultdict(list)
        self._lock = threading.Lock()

    @property
    def hears(self) -> bool:
        """Voice messages are transcribed (``stt`` is not ``none``)."""
        return self.stt_settings.backend != "none"

    @property
    def speaks(self) -> bool:
        """Answers can be spoken (``tts`` is not ``none``)."""
        return self.tts_settings.backend != "none"

    def _where(self, session_id: str | None) -> Environment:
        return self.environment.session(session_id) if session_id else self.environment

    def transcribe(self, sound: Audio, session_id: str | None = None) -> str:
        """What was said (``VoiceError`` when it cannot be had); commands run in the
        session's environment."""
        return stt.transcribe(self.stt_settings, sound, self._where(session_id))

    def speak(self, text: str, session_id: str | None = None,
              voice: str | None = None) -> Audio:
        """``text`` spoken, in the backend's format (``convert`` makes a platform's)."""
        return tts.speak(self.tts_settings, text, self._where(session_id), voice)

    def convert(self, sound: Audio, fmt: str) -> Audio:
        """``sound`` in a platform's format (``hermes.voice.audio.FORMATS``)."""
        return audio.convert(sound, fmt)

    def keep(self, session_id: str, sound: Audio) -> None:
        """A spoken file a tool made in ``session_id``, for its chat to send."""
        with self._lock:
            self._made[session_id].append(sound)
            while len(self._made) > KEPT_SESSIONS:  # never taken (a sub-agent's): the oldest go
                del self._made[next(iter(self._made))]

    def take(self, session_id: str) -> list[Audio]:
        """The spoken files made in ``session_id`` since the last ``take``."""
        with self._lock:
            return self._made.pop(session_id, [])
