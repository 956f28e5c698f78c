"""Real speech for the voice tests: espeak-ng says a sentence (WAV), ffmpeg makes it a
voice note (OGG/Opus, as Telegram and Element send them); ffprobe tells how long audio
plays."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ESPEAK = "espeak-ng -v {voice} -f {input_path} -w {output_path}"
"""The tts command template the tests (and the packaged ``conf/tts/command.yaml``) use."""


@functools.cache
def spoken(sentence: str) -> bytes:
    """``sentence`` spoken by espeak-ng, as an OGG/Opus voice note (the test skips, saying
    what to install, where espeak-ng or ffmpeg is missing; on CI it fails)."""
    missing = [tool for tool in ("espeak-ng", "ffmpeg", "ffprobe") if not shutil.which(tool)]
    if missing:
        import pytest

        reason = f"{', '.join(missing)} not installed (apt-get install espeak-ng ffmpeg)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}: .ci/run installs them")
        pytest.skip(reason)
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
