"""The ``stt`` and ``tts`` config groups through the real CLI: defaults, every option,
the README's set-up lines, keys by reference, bad values in one line (exit 2, nothing
written), and the text_to_speech tool offered only where speech is configured."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ok, refused, write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall
from voice_support import ESPEAK


def test_voice_is_off_by_default(hermes) -> None:
    assert ok(hermes("config", "explain", "stt")).splitlines()[0] == "stt = none"
    assert ok(hermes("config", "explain", "tts")).splitlines()[0] == "tts = none"
    assert ok(hermes("config", "get", "stt.backend")).strip() == "none"
    assert ok(hermes("config", "get", "tts.backend")).strip() == "none"


@pytest.mark.parametrize("group", ["stt", "tts"])
@pytest.mark.parametrize("option", ["none", "openai", "command"])
def test_every_option_composes_and_names_itself(hermes, group: str, option: str) -> None:
    ok(hermes("config", "set", group, option))
    assert ok(hermes("config", "get", f"{group}.backend")).strip() == option
    ok(hermes("config", "validate"))


def test_the_readme_lines_set_up_openai_voice_without_showing_the_key(hermes, root) -> None:
    ok(hermes("config", "set", "stt", "openai"))
    ok(hermes("config", "set", "tts", "openai"))
    ok(hermes("config", "set", "OPENAI_API_KEY", "sk-voice-secret-value-123"))
    ok(hermes("config", "set", "stt.api_base", "http://127.0.0.1:8000/v1"))
    assert ok(hermes("config", "get", "stt.model")).strip() == "whisper-1"
    assert ok(hermes("config", "get", "tts.model")).strip() == "tts-1"
    for shown in (ok(hermes("config", "show")), ok(hermes("config", "explain", "stt.api_key"))):
        assert "sk-voice-secret-value-123" not in shown
    assert "sk-voice-secret-value-123" not in (root / "config.yaml").read_text()


@pytest.mark.parametrize(("setting", "fragments"), [
    (("stt.command", "whisper {input} --out {output_dir}"),
     ("stt.command", "unknown placeholder {input}; use {input_path}, {output_dir}, {language}")),
    (("stt.command", "whisper --out {output_dir}"),
     ("stt.command", "missing {input_path}")),
    (("tts.command", "espeak-ng -f {input_path}"), ("tts.command", "missing {output_path}")),
    (("tts.command", "say {input_path} > {output_path"), ("tts.command", "placeholders are")),
    (("stt.backend", "whisper"), ("stt.backend", "'none', 'openai' or 'command'")),
    (("tts.format", "ogg"), ("tts.format", "'mp3', 'wav', 'opus', 'flac' or 'aac'")),
    (("stt.timeout", "soon"), ("stt.timeout", "expected a duration")),
    (("stt.api_base", "ftp://x"), ("stt.api_base", "is no http(s) URL")),
])
def test_a_bad_value_is_one_line_exit_2_and_nothing_written(hermes, root, setting, fragments
                                                           ) -> None:
    refused(hermes("config", "set", *setting), *fragments)
    assert not (root / "config.yaml").exists()


def test_an_option_without_what_it_needs_is_refused_in_one_line(hermes, root) -> None:
    ok(hermes("config", "set", "tts", "openai"))
    before = (root / "config.yaml").read_text()
    refused(hermes("config", "set", "tts.model", "null"), "tts", "model missing",
            "hermes config set tts.model NAME")
    assert (root / "config.yaml").read_text() == before
    (root / "config.yaml").write_text("defaults:\n  - override stt: command\n"
                                      "stt:\n  command: null\n")
    refused(hermes("config", "validate"), str(root / "config.yaml"), "stt",
            "command missing", "hermes config set stt.command")


@pytest.fixture
def llm(root: Path) -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        write_fake_provider(root, fake.openai_base_url)
        yield fake


def test_text_to_speech_is_offered_only_with_tts_and_writes_a_voice_note(
        hermes, llm: FakeLLM) -> None:
    llm.push(Reply(text="ok"))
    ok(hermes("chat", "-q", "hi"))
    assert "text_to_speech" not in llm.requests[-1].tool_names  # tts: none
    ok(hermes("config", "set", "tts", "command"))
    assert ok(hermes("config", "get", "tts.command")).strip() == ESPEAK
    llm.push(Reply(tool_calls=[ToolCall("text_to_speech", {"text": "Hello from Hermes"})]),
             Reply(text="done"))
    ok(hermes("chat", "-q", "say hello"))
    assert "text_to_speech" in llm.requests[-2].tool_names
    [result] = llm.requests[-1].tool_results
    path = str(result.content)
    assert '"format": "audio/ogg"' in path and "/tmp/hermes-speech/speech-" in path


def test_without_ffmpeg_a_voice_note_cannot_be_made_and_the_line_says_so(tmp_path: Path
                                                                          ) -> None:
    """``hermes.voice.speak`` to OGG/Opus on a machine without ffmpeg (an empty PATH)."""
    program = ("from hermes.config.voice_schema import SttConfig, TtsConfig\n"
               "from hermes.voice import Audio, Voice, VoiceError\n"
               "try:\n"
               "    Voice(SttConfig(), TtsConfig(), None).convert(Audio(b'RIFF', '.wav'),\n"
               "                                                  'ogg-opus')\n"
               "except VoiceError as exc:\n"
               "    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          env={"PATH": str(tmp_path)}, timeout=60, check=True)
    assert done.stdout == ("ffmpeg is not installed, and voice messages here need it "
                           "(OGG/Opus) — install it (apt-get install ffmpeg) or turn spoken "
                           "answers off: /voice off\n")
