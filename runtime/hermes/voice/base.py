"""What the voice modules share: their error, the litellm model name, and a command
template run in the profile's execution environment with files in and out."""

from __future__ import annotations

import secrets
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from hermes.environments.base import Environment
from hermes.errors import HermesError

WORK_DIR = "/tmp"
"""Where a command's files go, in the commands' view (a local sandbox's /tmp is the
session's own directory)."""
OUTPUT_CHARS = 300
"""Of a failed command's output, this much is shown."""


class VoiceError(HermesError):
    """Audio could not be transcribed, spoken or converted: one line for the user."""


@dataclass(frozen=True)
class Audio:
    """Sound in memory: its bytes and what they are."""

    data: bytes
    suffix: str
    """The file name's extension, with its dot (``.ogg``, ``.wav``, ``.mp3``)."""
    mime: str = "application/octet-stream"


def litellm_model(model: str) -> str:
    """``whisper-1`` → ``openai/whisper-1``: an OpenAI-compatible endpoint unless the name
    carries a litellm provider prefix."""
    return model if "/" in model else f"openai/{model}"


def fill(template: str, values: Mapping[str, str]) -> str:
    """The template with every placeholder replaced by its value, shell-quoted: a value
    (a path, a language) never becomes shell syntax."""
    return template.format_map({name: shlex.quote(value) for name, value in values.items()})


class CommandRun:
    """One run of a command template: a scratch directory in the environment, files
    written there and read back, the directory removed at the end (``with``)."""

    def __init__(self, environment: Environment, group: str, timeout: float):
        self.environment = environment
        self.group = group
        self.timeout = timeout
        self.dir = f"{WORK_DIR}/hermes-{group}-{secrets.token_hex(6)}"

    def __enter__(self) -> CommandRun:
        self._shell(f"mkdir -m 700 -p {shlex.quote(self.dir)}/out")
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        self.environment.run(f"rm -rf {shlex.quote(self.dir)}", timeout=self.timeout)
        if isinstance(exc, HermesError) and not isinstance(exc, VoiceError):
            # the sandbox refused a path, the environment failed: one line all the same
            raise VoiceError(f"{self.group}.command: {exc}") from exc

    def put(self, name: str, data: bytes) -> str:
        """``data`` written as ``name`` in the scratch directory; its path there."""
        path = f"{self.dir}/{name}"
        files = self.environment.files()
        real, _ = files.locate(path, write=True)
        files.write(real, data, 0o600)
        return path

    def get(self, path: str) -> bytes | None:
        """A file the command wrote, None when it wrote none."""
        files = self.environment.files()
        real, _ = files.locate(path)
        info = files.info(real)
        return files.read(real) if info is not None and info.kind == "file" else None

    def names(self, directory: str) -> list[str]:
        files = self.environment.files()
        return sorted(files.names(files.locate(directory)[0]))

    def run(self, template: str, values: Mapping[str, str]) -> str:
        """The filled template run; its output, or ``VoiceError`` naming the failure."""
        return self._shell(fill(template, values))

    def _shell(self, command: str) -> str:
        result = self.environment.run(command, timeout=self.timeout)
        if result.timed_out:
            raise VoiceError(f"{self.group}.command timed out after {self.timeout:g} s")
        if result.exit_code != 0:
            tail = " ".join(result.output.split())[-OUTPUT_CHARS:]
            raise VoiceError(f"{self.group}.command failed (exit code {result.exit_code})"
                             + (f": {tail}" if tail else ""))
        return result.output
