"""Secrets are redacted from tool output: known values and common key shapes, the
password inside any URL; ordinary text (hashes, UUIDs, words) is kept, and redacting
twice changes nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from hermes.credentials import write_env_file
from hermes.redact import Redactor, build_redactor, secret_values


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


# Built from parts, so the file itself holds nothing a secret scanner would stop.
SHAPES = [
    "sk-abcdefghijklmnop1234567890",
    "sk-proj-AbCdEfGhIjKlMnOpQrStUv_12",
    "sk-ant-api03-abcdefghijklmnopqrstuv",
    "sk-ant-api03-" + "aB3_xY-" * 14 + "AA",  # '_' and '-' throughout, as real ones
    "ghp_" + "a1B2" * 9, "gho_" + "a1B2" * 9, "ghs_" + "a1B2" * 9,
    "github_pat_" + "x" * 40,
    "xoxb-1234567890-abcdefghij", "xoxp-1234567890-abcdefghij",
    "xoxa-2-1234567890-abcdefghij", "xoxr-1234567890-abcdefghij",
    "xapp-1-A0123456789-abcdefghij", "whsec_" + "a1B2c3D4e5F6" * 3,
    "AKIAIOSFODNN7EXAMPLE",
    "glpat-" + "x1Y2z3_W" * 3,
    "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc", "rk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "sk_" + "test_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz12345678",
    "npm_" + "a1B2c3D4e5" * 3 + "F6g7H8",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFU",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA (cut off",
]


@pytest.mark.parametrize("secret", SHAPES)
def test_common_key_shapes(secret: str) -> None:
    text = f"before {secret} after" if "BEGIN" not in secret else secret
    redacted = Redactor()(text)
    assert "<redacted>" in redacted
    assert secret not in redacted and "abcdefghij" not in redacted and "a1B2" not in redacted
    assert "BEGIN" in secret or secret[-6:] not in redacted  # all of it, not a prefix


@pytest.mark.parametrize(("text", "expected"), [
    ("DATABASE_URL=postgres://u:pw@host/db", "DATABASE_URL=postgres://u:<redacted>@host/db"),
    ("redis://:s3cr3t!@cache:6379/0", "redis://:<redacted>@cache:6379/0"),
    ("git clone https://oauth2:tok%40en@gitlab.example/x.git",
     "git clone https://oauth2:<redacted>@gitlab.example/x.git"),
    ('{"url": "amqp://guest:guest@mq"}', '{"url": "amqp://guest:<redacted>@mq"}'),
    ("mongodb+srv://app:p4ss:w0rd@cluster/x", "mongodb+srv://app:<redacted>@cluster/x"),
])
def test_the_password_in_a_url(text: str, expected: str) -> None:
    assert Redactor()(text) == expected


@pytest.mark.parametrize("text", [
    "task-list risk-free sk-short", "ghp_short", "AKIA", "xoxb-", "public key: ssh-ed25519 AAAA",
    "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----",
    "commit 3f2a9c1e8b7d6f5a4c3b2a1f0e9d8c7b6a5f4e3d", "sha256:" + "ab12" * 16,
    "id 123e4567-e89b-12d3-a456-426614174000", "hf_hub hf_token hf_api_key_name",
    "sk-learn-compatible-estimators", "npm_config_cache", "https://user@host/path",
    "http://host:8080/a@b", "ssh://git@github.com:22/x", "postgres://$USER:$PASSWORD@db/x",
    "f'{scheme}://{user}:{password}@{host}'", "mailto:someone@example.org",
    "amqp://${USER}:${PASS}@mq", "'%(scheme)s://%(user)s:%(password)s@%(host)s'",
    "eyJhbGciOiJIUzI1NiJ9 alone", "AIzaShort", "glpat-short", "sk_live_short",
])
def test_ordinary_text_is_kept(text: str) -> None:
    assert Redactor()(text) == text


@pytest.mark.parametrize("secret", [s for s in SHAPES if "BEGIN" not in s])
def test_a_token_at_the_start_of_a_line_of_json(secret: str) -> None:
    """Tool results are redacted as JSON, where a line's first word follows ``\\n``."""
    encoded = json.dumps({"output": f"one\n{secret}\n\t{secret}\r\n"})
    assert json.loads(Redactor()(encoded)) == {"output": "one\n<redacted>\n\t<redacted>\r\n"}


KNOWN = ["openai-value-123", "pa$$word!", "hush-hush-0001"]
secret = st.sampled_from([*SHAPES[:-2], *KNOWN])
noise = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
separator = st.sampled_from([" ", "\n", "=", ": ", '"', "'", "(", ",", "\t", "/", "@", ":"])


@given(st.lists(st.tuples(noise, separator, secret, separator), max_size=6), noise)
def test_redaction_is_idempotent_and_leaves_no_known_secret(
        parts: list[tuple[str, str, str, str]], tail: str) -> None:
    redact = Redactor(KNOWN)
    text = "".join("".join(part) for part in parts) + tail
    once = redact(text)
    assert redact(once) == once
    for _, _, value, _ in parts:
        assert value not in once


@given(noise, st.sampled_from(["postgres", "https", "redis", "amqp"]),
       st.from_regex(r"[A-Za-z0-9._~%!$&'()*+,;=:-]{1,30}", fullmatch=True))
def test_a_url_password_never_survives(before: str, scheme: str, password: str) -> None:
    """Any password RFC 3986 allows in a URL, but a shell variable kept for scripts."""
    assume(not re.fullmatch(r"\$[A-Z_][A-Z0-9_]*", password))
    text = f"{before} {scheme}://user:{password}@host/db"
    once = Redactor()(text)
    assert f"user:{password}@" not in once and "user:<redacted>@host/db" in once
    assert Redactor()(once) == once
