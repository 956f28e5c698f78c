"""Speech to text (config group ``stt``): ``openai`` through litellm's transcription, or
``command`` run in the profile's execution environment. The transcript is what a person
said, to be treated as untrusted input like any message."""

from __future__ import annotations

from pathlib import Path

from hermes.config.voice_schema import SttConfig
from hermes.environments.base import Environment
from hermes.voice.base import Audio, CommandRun, VoiceError, litellm_model

AUTO_LANGUAGE = "auto"
"""``{language}`` when ``stt.language`` is unset."""


def transcribe_openai(settings: SttConfig, audio: Audio) -> str:
    """The transcript from an OpenAI-compatible ``/audio/transcriptions`` endpoint."""
    from hermes.models.errors import first_line
    from hermes.models.litellm_client import import_litellm

    litellm = import_litellm()
    assert settings.model is not None  # the schema requires it for openai
    try:
        response = litellm.transcription(
            model=litellm_model(settings.model), file=(f"voice{audio.suffix}", audio.data,
                                                       audio.mime),
            language=settings.language, api_base=settings.api_base,
            api_key=settings.api_key, timeout=settings.timeout, max_retries=1)
    except Exception as exc:  # noqa: BLE001 - litellm's and httpx's errors, one line each
        raise VoiceError(f"stt: {settings.model} could not transcribe the voice message: "
                         f"{first_line(exc)}") from exc
    return str(getattr(response, "text", "") or "")


def transcribe_command(settings: SttConfig, audio: Audio, environment: Environment) -> str:
    """The transcript from ``stt.command``: a ``.txt`` file it wrote in ``{output_dir}``,
    else its output."""
    assert settings.command is not None  # the schema requires it for command
    with CommandRun(environment, "stt", settings.timeout) as run:
        path = run.put(f"voice{audio.suffix}", audio.data)
        output_dir = f"{run.dir}/out"
        printed = run.run(settings.command, {"input_path": path, "output_dir": output_dir,
                                             "language": settings.language or AUTO_LANGUAGE})
        texts = [name for name in run.names(output_dir) if name.endswith(".txt")]
        written = run.get(f"{output_dir}/{texts[0]}") if texts else None
    return written.decode(errors="replace") if written is not None else printed


def transcribe(settings: SttConfig, audio: Audio, environment: Environment) -> str:
    """What was said, stripped; ``VoiceError`` when it cannot be had (or is empty)."""
    if settings.backend == "none":
        raise VoiceError(off_hint())
    text = transcribe_openai(settings, audio) if settings.backend == "openai" else \
        transcribe_command(settings, audio, environment)
    text = " ".join(text.split())
    if not text:
        raise VoiceError("no speech was recognised in the voice message; say it again or "
                         "type it")
    return text


def off_hint() -> str:
    """The one line a voice message gets while ``stt`` is ``none``."""
    return ("(voice messages are off here — turn them on with `hermes config set stt openai` "
            "and OPENAI_API_KEY, or `hermes config set stt command`; then restart the gateway)")


def read_audio(path: Path, mime: str = "") -> Audio:
    """A file on this machine as ``Audio``."""
    return Audio(path.read_bytes(), path.suffix or ".ogg", mime or "application/octet-stream")
