"""OpenAI's audio endpoints in their wire format: ``POST …/audio/transcriptions``
(multipart: ``file``, ``model``, ``language``, ...) answers ``{"text": ...}``;
``POST …/audio/speech`` (JSON: ``model``, ``input``, ``voice``, ``response_format``)
answers the audio's bytes. Not part of the chat script: ``llm.audio.transcript`` is what
every transcription says, ``llm.audio.speech`` what every speech request returns;
``llm.audio.requests`` records both."""

from __future__ import annotations

import email.parser
import email.policy
import io
import json
import wave
from dataclasses import dataclass, field
from typing import Any

TRANSCRIPTIONS = "/audio/transcriptions"
SPEECH = "/audio/speech"
CONTENT_TYPES = {"mp3": "audio/mpeg", "wav": "audio/wav", "opus": "audio/ogg",
                 "flac": "audio/flac", "aac": "audio/aac", "pcm": "audio/pcm"}


def silent_wav(seconds: float = 0.5, rate: int = 16_000) -> bytes:
    """A valid mono 16-bit WAV of silence (what the fake speaks unless told otherwise)."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\0\0" * int(seconds * rate))
    return buffer.getvalue()


@dataclass(frozen=True)
class AudioRequest:
    """One audio request: its endpoint, its form or JSON fields, the uploaded file."""

    path: str
    fields: dict[str, Any]
    file: bytes = b""
    file_name: str = ""
    headers: dict[str, str] = field(default_factory=dict, repr=False)


class FakeAudio:
    """The scripted answers of the audio endpoints and what they were sent."""

    def __init__(self) -> None:
        self.transcript = ""
        """What every transcription returns."""
        self.speech = silent_wav()
        """The bytes every speech request returns (whatever format it asked for)."""
        self.requests: list[AudioRequest] = []

    @staticmethod
    def handles(path: str) -> bool:
        return path.endswith((TRANSCRIPTIONS, SPEECH))

    def answer(self, path: str, headers: dict[str, str], raw: bytes
               ) -> tuple[int, str, bytes]:
        """``(status, content type, body)`` for one request, recorded."""
        if path.endswith(SPEECH):
            fields = json.loads(raw or b"{}")
            self.requests.append(AudioRequest(path, fields, headers=headers))
            kind = CONTENT_TYPES.get(str(fields.get("response_format") or "mp3"), "audio/mpeg")
            return 200, kind, self.speech
        fields, file, name = _multipart(headers.get("content-type", ""), raw)
        self.requests.append(AudioRequest(path, fields, file, name, headers))
        if not file:
            return 400, "application/json", json.dumps({"error": {
                "message": "fake LLM: no file in the transcription request",
                "type": "invalid_request_error", "param": "file", "code": None}}).encode()
        return 200, "application/json", json.dumps({"text": self.transcript}).encode()


def _multipart(content_type: str, raw: bytes) -> tuple[dict[str, Any], bytes, str]:
    """The fields and the file of a ``multipart/form-data`` body."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    fields: dict[str, Any] = {}
    file, name = b"", ""
    for part in message.iter_parts():
        key = part.get_param("name", header="content-disposition")
        data = part.get_payload(decode=True) or b""
        if part.get_filename() is not None:
            file, name = data, str(part.get_filename())
        elif key:
            fields[str(key)] = data.decode(errors="replace")
    return fields, file, name
