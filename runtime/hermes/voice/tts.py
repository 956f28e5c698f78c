"""Text to speech (config group ``tts``): ``openai`` through litellm's speech, or
``command`` (espeak-ng, piper, ...) run in the profile's execution environment."""

from __future__ import annotations

from hermes.config.voice_schema import TtsConfig
from hermes.environments.base import Environment
from hermes.voice.base import Audio, CommandRun, VoiceError, litellm_model

MIME = {"mp3": "audio/mpeg", "wav": "audio/wav", "opus": "audio/ogg", "flac": "audio/flac",
        "aac": "audio/aac"}
SUFFIX = {"opus": ".ogg"}


def speak_openai(settings: TtsConfig, text: str) -> Audio:
    """Speech from an OpenAI-compatible ``/audio/speech`` endpoint."""
    from hermes.models.errors import first_line
    from hermes.models.litellm_client import import_litellm

    litellm = import_litellm()
    assert settings.model is not None  # the schema requires it for openai
    try:
        response = litellm.speech(
            model=litellm_model(settings.model), input=text, voice=settings.voice,
            api_base=settings.api_base, api_key=settings.api_key, timeout=settings.timeout,
            response_format=settings.format, max_retries=1)
        data = response.content
    except Exception as exc:  # noqa: BLE001 - litellm's and httpx's errors, one line each
        raise VoiceError(f"tts: {settings.model} could not speak the answer: "
                         f"{first_line(exc)}") from exc
    return Audio(bytes(data), SUFFIX.get(settings.format, f".{settings.format}"),
                 MIME[settings.format])


def speak_command(settings: TtsConfig, text: str, environment: Environment,
                  voice: str) -> Audio:
    """Speech from ``tts.command``: the text in ``{input_path}``, the sound it writes to
    ``{output_path}``."""
    assert settings.command is not None  # the schema requires it for command
    with CommandRun(environment, "tts", settings.timeout) as run:
        path = run.put("text.txt", text.encode())
        output = f"{run.dir}/out/speech.wav"
        run.run(settings.command, {"input_path": path, "output_path": output, "voice": voice})
        data = run.get(output)
    if not data:
        raise VoiceError("tts.command wrote nothing to {output_path}; check the template: "
                         "`hermes config get tts.command`")
    return Audio(data, ".wav", "audio/wav")


def speak(settings: TtsConfig, text: str, environment: Environment,
          voice: str | None = None) -> Audio:
    """``text`` (up to ``tts.max_chars``) spoken; ``VoiceError`` when it cannot be."""
    if settings.backend == "none":
        raise VoiceError(off_hint())
    text = text.strip()[:settings.max_chars]
    if not text:
        raise VoiceError("nothing to speak: the text is empty")
    if settings.backend == "openai":
        return speak_openai(settings, text)
    return speak_command(settings, text, environment, voice or settings.voice)


def off_hint() -> str:
    """The one line spoken answers get while ``tts`` is ``none``."""
    return ("spoken answers are off — turn them on with `hermes config set tts openai` and "
            "OPENAI_API_KEY, or `hermes config set tts command` (espeak-ng, piper)")
