"""Secrets are redacted from tool output: known values and common key shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes.credentials import write_env_file
from hermes.tools.redact import Redactor, build_redactor, secret_values


def test_known_values_from_env_file_and_environment(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    write_env_file(env_file, {"OPENAI_API_KEY": "openai-value-123", "DB_PASSWORD": "pa$$word!",
                              "SHORT": "abc"})
    environ = {"GITHUB_TOKEN": "gh-environ-token", "MY_SECRET": "hush-hush",
               "HOME": "/home/someone", "SLACK_API_KEY": "tiny"}
    values = secret_values(env_file, environ)
    assert set(values) == {"openai-value-123", "pa$$word!", "gh-environ-token", "hush-hush"}
    redact = build_redactor(env_file, environ)
    text = "key=openai-value-123 pw=pa$$word! tok=gh-environ-token s=hush-hush home=/home/someone"
    assert redact(text) == ("key=<redacted> pw=<redacted> tok=<redacted> s=<redacted> "
                            "home=/home/someone")
    assert redact("abc tiny") == "abc tiny"  # shorter than 6 characters: left alone


def test_values_are_redacted_inside_json_too() -> None:
    redact = Redactor(['quote"and\\slash'])
    encoded = json.dumps({"output": 'x quote"and\\slash y'})
    assert json.loads(redact(encoded)) == {"output": "x <redacted> y"}


def test_longest_value_wins() -> None:
    assert Redactor(["secret", "secret-longer"])("a secret-longer b") == "a <redacted> b"


@pytest.mark.parametrize("secret", [
    "sk-abcdefghijklmnop1234567890",
    "sk-proj-AbCdEfGhIjKlMnOpQrStUv_12",
    "sk-ant-api03-abcdefghijklmnopqrstuv",
    "ghp_" + "a1B2" * 9,
    "github_pat_" + "x" * 40,
    "xoxb-1234567890-abcdefghij",
    "xoxp-1234567890-abcdefghij",
    "AKIAIOSFODNN7EXAMPLE",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA (cut off",
])
def test_common_key_shapes(secret: str) -> None:
    redacted = Redactor()(f"before {secret} after" if "BEGIN" not in secret else secret)
    assert "<redacted>" in redacted
    assert secret not in redacted and "abcdefghij" not in redacted


@pytest.mark.parametrize("text", [
    "task-list risk-free sk-short", "ghp_short", "AKIA", "xoxb-", "public key: ssh-ed25519 AAAA",
    "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----",
])
def test_ordinary_text_is_kept(text: str) -> None:
    assert Redactor()(text) == text
