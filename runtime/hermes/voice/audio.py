"""Audio converted to what a platform plays (``ffmpeg``, run on this machine on audio
the runtime made itself, arguments as a list: no shell)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from hermes.voice.base import Audio, VoiceError

OGG_OPUS = "ogg-opus"
"""Telegram's voice notes and Matrix voice messages: Opus in an Ogg container."""
FORMATS: dict[str, tuple[str, str, list[str]]] = {
    OGG_OPUS: (".ogg", "audio/ogg", ["-c:a", "libopus", "-b:a", "32k", "-ac", "1",
                                     "-ar", "48000", "-f", "ogg"]),
}
"""Platform formats: file suffix, MIME type, ffmpeg output options."""
TIMEOUT = 120.0


def convert(audio: Audio, fmt: str) -> Audio:
    """``audio`` in format ``fmt`` (``FORMATS``); ``VoiceError`` (one line) without ffmpeg
    or when ffmpeg cannot read it."""
    suffix, mime, options = FORMATS[fmt]
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise VoiceError("ffmpeg is not installed, and voice messages here need it (OGG/Opus) "
                         "— install it (apt-get install ffmpeg) or turn spoken answers off: "
                         "/voice off")
    with tempfile.TemporaryDirectory(prefix="hermes-voice-") as scratch:
        source, target = Path(scratch) / f"in{audio.suffix}", Path(scratch) / f"out{suffix}"
        source.write_bytes(audio.data)
        try:
            done = subprocess.run([ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error",
                                   "-y", "-i", str(source), "-vn", *options, str(target)],
                                  capture_output=True, timeout=TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise VoiceError(f"ffmpeg took over {TIMEOUT:g} s to convert the audio") from None
        if done.returncode != 0 or not target.exists():
            why = " ".join(done.stderr.decode(errors="replace").split())[-200:]
            raise VoiceError(f"ffmpeg could not convert the audio: {why or 'no output'}")
        return Audio(target.read_bytes(), suffix, mime)


def seconds(audio: Audio) -> float | None:
    """How long ``audio`` plays (ffprobe), None when that cannot be told."""
    ffprobe = shutil.which("ffprobe")
    if ffprobe is None:
        return None
    with tempfile.NamedTemporaryFile(suffix=audio.suffix) as file:
        file.write(audio.data)
        file.flush()
        done = subprocess.run([ffprobe, "-v", "error", "-show_entries", "format=duration",
                               "-of", "csv=p=0", file.name], capture_output=True,
                              timeout=30, check=False)
    try:
        return float(done.stdout.decode().strip())
    except ValueError:
        return None
