"""Real speech for the voice tests: espeak-ng says a sentence (WAV), ffmpeg makes it a
voice note (OGG/Opus, as Telegram and Element send them); ffprobe tells how long audio
plays."""

from __future__ import annotations

import functools
import subprocess
import tempfile
from pathlib import Path

ESPEAK = "espeak-ng -v {voice} -f {input_path} -w {output_path}"
"""The tts command template the tests (and the packaged ``conf/tts/command.yaml``) use."""


@functools.cache
def spoken(sentence: str) -> bytes:
    """``sentence`` spoken by espeak-ng, as an OGG/Opus voice note."""
    with tempfile.TemporaryDirectory() as scratch:
        wav, ogg = Path(scratch) / "said.wav", Path(scratch) / "said.ogg"
        subprocess.run(["espeak-ng", "-w", str(wav), sentence], check=True, timeout=30)
        subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", str(wav),
                        "-c:a", "libopus", "-f", "ogg", str(ogg)], check=True, timeout=60)
        return ogg.read_bytes()


def seconds(audio: bytes) -> float:
    """How long ``audio`` plays (ffprobe); fails for anything that is no audio."""
    with tempfile.NamedTemporaryFile(suffix=".ogg") as file:  # a pipe has no duration
        file.write(audio)
        file.flush()
        done = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration:"
                               "stream=codec_name", "-of", "default=nw=1", file.name],
                              capture_output=True, check=True, timeout=30)
    fields = dict(line.split("=", 1) for line in done.stdout.decode().split())
    assert fields["codec_name"] == "opus", fields
    return float(fields["duration"])
