"""``text_to_speech(text, voice)`` (toolset ``voice``): the text spoken, as an audio file
in the session's environment; in a chat that takes voice messages it is also sent there
after the turn."""

from __future__ import annotations

import contextlib
import json
import secrets
from typing import Any

from hermes.errors import ToolError
from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.context import ToolContext
from hermes.tools.targets import environment_errors
from hermes.voice.audio import OGG_OPUS
from hermes.voice.base import VoiceError
from hermes.voice.service import Voice

DESCRIPTION = (
    "Speak a text aloud: makes an audio file (OGG/Opus where ffmpeg is installed) and "
    "returns its path; in a chat, the recording is sent there as a voice message after "
    "your answer. Use when the user asks to hear something.")
PARAMETERS = object_schema(
    ("text",),
    text={"type": "string", "description": "What to say (plain text, no markup)."},
    voice={"type": "string", "description": "A voice name of the configured backend "
           "(default: tts.voice)."},
)
OUT_DIR = "/tmp/hermes-speech"


def text_to_speech_tool(voice: Voice | None) -> ToolSpec:
    """The tool over the runtime's ``Voice``; hidden while ``tts`` is ``none``."""

    @environment_errors
    def handle(args: dict[str, Any], *, ctx: ToolContext, **_: Any) -> str:
        assert voice is not None  # the check hides the tool without it
        try:
            sound = voice.speak(str(args.get("text") or ""), ctx.session_id,
                                str(args.get("voice") or "").strip() or None)
            with contextlib.suppress(VoiceError):  # no ffmpeg: the backend's format is kept
                sound = voice.convert(sound, OGG_OPUS)
        except VoiceError as exc:
            raise ToolError(str(exc)) from exc
        files = ctx.files or ctx.environment.files()
        real, shown = files.locate(f"{OUT_DIR}/speech-{secrets.token_hex(4)}{sound.suffix}",
                                   write=True)
        files.write(real, sound.data, 0o644)
        if ctx.origin is not None:  # a chat's turn: the gateway sends it after the answer
            voice.keep(ctx.session_id, sound)
        return json.dumps({"path": shown, "format": sound.mime, "bytes": len(sound.data)})

    return ToolSpec("text_to_speech", "voice", DESCRIPTION, PARAMETERS, handle,
                    check=lambda: voice is not None and voice.speaks)
