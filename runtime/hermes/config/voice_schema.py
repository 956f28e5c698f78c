"""The ``stt`` and ``tts`` config groups: how voice messages are heard and answers spoken
(``hermes.voice``).

One option per backend under ``conf/stt/`` and ``conf/tts/``: ``none`` (the default),
``openai`` (any OpenAI-compatible endpoint, through litellm) and ``command`` (a shell
template run in the profile's execution environment). ``hermes config set stt openai``
switches; nothing here imports the voice modules.
"""

from __future__ import annotations

import string
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from hermes.config.learning_schema import Duration
from hermes.config.sections import NonBlank, Section
from hermes.config.web_schema import HttpUrl

VoiceBackend = Literal["none", "openai", "command"]
STT_PLACEHOLDERS = ("input_path", "output_dir", "language")
"""What ``stt.command`` may name; ``{input_path}`` is required."""
TTS_PLACEHOLDERS = ("input_path", "output_path", "voice")
"""What ``tts.command`` may name; ``{input_path}`` and ``{output_path}`` are required."""


def check_template(template: str, allowed: tuple[str, ...], required: tuple[str, ...]) -> str:
    """A command template names only ``allowed`` placeholders, and every ``required`` one."""
    shown = ", ".join("{" + name + "}" for name in allowed)
    try:
        named = {field for _, field, _, _ in string.Formatter().parse(template)
                 if field is not None}
    except ValueError as exc:
        raise PydanticCustomError("as_written", "{problem} — placeholders are " + shown,
                                  {"problem": str(exc)}) from None
    for name in sorted(named - set(allowed)):
        raise PydanticCustomError("as_written", "unknown placeholder {name}; use " + shown,
                                  {"name": "{" + name + "}"})
    for name in required:
        if name not in named:
            raise PydanticCustomError("as_written", "missing {name}; the template names "
                                      + shown + " (replaced by quoted values)",
                                      {"name": "{" + name + "}"})
    return template


SttCommand = Annotated[str, AfterValidator(
    lambda value: check_template(value, STT_PLACEHOLDERS, ("input_path",)))]
TtsCommand = Annotated[str, AfterValidator(
    lambda value: check_template(value, TTS_PLACEHOLDERS, ("input_path", "output_path")))]


class _VoiceBackendConfig(Section):
    """What both groups share: the backend, its endpoint and key, or its command."""

    name: NonBlank = "none"
    """The option's name (the YAML file under ``conf/stt/`` or ``conf/tts/``)."""
    backend: VoiceBackend = "none"
    """``none`` (off), ``openai`` (an OpenAI-compatible endpoint through litellm: ``model``,
    ``api_base``, ``api_key``) or ``command`` (``command``, run in the profile's execution
    environment)."""
    model: str | None = None
    """``openai``: the model, e.g. ``whisper-1`` or ``tts-1`` (``openai/`` is added when no
    litellm provider prefix is given)."""
    api_base: HttpUrl | None = None
    """``openai``: the endpoint's base URL (``…/v1``); unset: OpenAI's own."""
    api_key: str | None = None
    """``openai``: the key, by reference to the home's ``.env``:
    ``${secret:OPENAI_API_KEY}``."""
    timeout: Duration = 120.0
    """Seconds one transcription or one spoken answer may take."""

    def _check_backend(self, group: str, command: str | None) -> None:
        if self.backend == "openai" and not self.model:
            raise PydanticCustomError("as_written", "model missing — the openai backend needs "
                                      f"one: `hermes config set {group}.model NAME`")
        if self.backend == "command" and not command:
            raise PydanticCustomError("as_written", "command missing — the command backend "
                                      f"needs a template: `hermes config set {group}.command "
                                      "'…'`")


class SttConfig(_VoiceBackendConfig):
    """Speech to text: voice messages are transcribed before the turn."""

    command: SttCommand | None = None
    """``command``: a shell template naming ``{input_path}`` (the audio), ``{output_dir}``
    (where it may write ``<name>.txt``; else its standard output is the transcript) and
    ``{language}``; they are replaced by quoted values (do not quote them yourself)."""
    language: str | None = None
    """The spoken language (ISO 639-1, e.g. ``en``); unset: detected (``{language}`` is
    then ``auto``)."""
    max_bytes: int = Field(25_000_000, gt=0)
    """Largest voice message accepted, in bytes."""

    @model_validator(mode="after")
    def _complete(self) -> SttConfig:
        self._check_backend("stt", self.command)
        return self


class TtsConfig(_VoiceBackendConfig):
    """Text to speech: spoken answers (``/voice on``) and the ``text_to_speech`` tool."""

    command: TtsCommand | None = None
    """``command``: a shell template naming ``{input_path}`` (a UTF-8 text file),
    ``{output_path}`` (the audio to write, ``.wav``) and ``{voice}``; they are replaced by
    quoted values (do not quote them yourself)."""
    voice: NonBlank = "alloy"
    """The voice: ``openai``'s (``alloy``, ``nova``, ...), or ``{voice}`` of the command
    (e.g. an espeak-ng voice such as ``en``)."""
    format: Literal["mp3", "wav", "opus", "flac", "aac"] = "mp3"
    """``openai``: the audio format asked for (converted for each platform with ffmpeg)."""
    max_chars: Annotated[int, Field(gt=0)] = 4000
    """Longest text spoken; a longer answer is spoken up to here."""

    @model_validator(mode="after")
    def _complete(self) -> TtsConfig:
        self._check_backend("tts", self.command)
        return self
