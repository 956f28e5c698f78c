"""Every secret the runtime loads is redacted before the model or state.db sees it:
the home's ``.env``, environment variables with secret-shaped names (``*_KEY``,
``*_PASSWORD``, ``*_CREDENTIALS``...), and the variables the image's entrypoint
loaded from ``NAME_FILE`` files (named in ``HERMES_SECRET_NAMES``). Through the real
CLI: the fake LLM asks the terminal for ``env`` and for ``cat`` of the secret files."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall
from hermes.credentials import is_secret_name
from test_safety_redact import SHAPES

SECRETS = {
    "API_SERVER_KEY": "k-api-server-0123456789abcdef",  # as `docker run -e API_SERVER_KEY`
    "DB_PASSWORD": "pw-database-0123456789",
    "SMTP_PASSWD": "pw-smtp-0123456789",
    "IMAP_PASS": "pw-imap-0123456789",
    "GCP_CREDENTIALS": "cred-gcp-0123456789",
    "SIGNING_KEY": "signing-0123456789",
}
# loaded from DATABASE_URL_FILE by the image's entrypoint, which names it for the runtime
FROM_FILE = {"DATABASE_URL": "postgres://app:db-url-secret-0123456789@db/app"}


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.mark.parametrize("name", [*SECRETS, "OPENAI_API_KEY", "TELEGRAM_BOT_TOKEN",
                                  "WEBHOOK_SECRET", "aws_secret_access_key"])
def test_secret_shaped_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["HOME", "PATH", "KEY", "MONKEY", "KEYBOARD_LAYOUT",
                                  "PASSWORD_HINT_URL", "COMPASS", "provider.api_key",
                                  "agent.max_iterations", "DATABASE_URL"])
def test_other_names(name: str) -> None:
    assert not is_secret_name(name)


def state_dump(db: Path) -> str:
    connection = sqlite3.connect(db)
    try:
        return "\n".join(connection.iterdump())
    finally:
        connection.close()


def test_environment_and_file_secrets_never_reach_the_model_or_state_db(
        environ: dict[str, str], root: Path, llm: FakeLLM, tmp_path: Path) -> None:
    write_fake_provider(root, llm.openai_base_url)
    work = tmp_path / "work"  # mounted secrets, in the directory the commands run in
    work.mkdir()
    (work / "database_url").write_text(FROM_FILE["DATABASE_URL"] + "\n")
    (work / "api_server_key").write_text(SECRETS["API_SERVER_KEY"])
    env = environ | SECRETS | FROM_FILE | {"HERMES_SECRET_NAMES": "DATABASE_URL"}
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": "env"})]),
             Reply(tool_calls=[ToolCall("terminal", {"command": "cat database_url; echo; "
                                                     "cat api_server_key"})]),
             Reply(text="done"))
    proc = subprocess.run([sys.executable, "-m", "hermes", "-z", "show me the environment"],
                          env=env, cwd=work, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    results = [str(r.content) for request in llm.requests for r in request.tool_results]
    # commands do not even get them (credentials.command_environment): nothing to redact
    assert "HOME=" in results[0] and "API_SERVER_KEY" not in results[0]
    assert "DB_PASSWORD" not in results[0] and "DATABASE_URL=" not in results[0], results[0]
    assert results[-1].count("<redacted>") == 2, results[-1]  # both files were read
    sent = json.dumps([request.body for request in llm.requests])
    stored = state_dump(root / "state.db")
    assert "cat " in stored and "HOME=" in stored  # the turn was stored
    for value in [*SECRETS.values(), *FROM_FILE.values(), "sk-fake-test-key-1234"]:
        assert value not in sent and json.dumps(value)[1:-1] not in sent, value
        assert value not in stored, value
        assert value not in proc.stdout + proc.stderr, value


def test_secrets_by_shape_in_command_output_reach_the_model_redacted(
        environ: dict[str, str], root: Path, llm: FakeLLM, tmp_path: Path) -> None:
    """Values the runtime never loaded, recognised by their shape: a project's settings
    file with a database URL and tokens of every kind the redactor knows."""
    write_fake_provider(root, llm.openai_base_url)
    work = tmp_path / "work"
    work.mkdir()
    tokens = [s for s in SHAPES if "BEGIN" not in s]
    lines = ["DATABASE_URL=postgres://app:pw@db.internal:5432/app",
             *(f"TOKEN_{i}={token}" for i, token in enumerate(tokens)), *tokens]
    (work / "settings.env").write_text("\n".join(lines) + "\n")
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": "cat settings.env"})]),
             Reply(text="done"))
    proc = subprocess.run([sys.executable, "-m", "hermes", "-z", "show me the settings"],
                          env=environ, cwd=work, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    output = json.loads(str(llm.requests[1].tool_results[0].content))["output"]
    assert output.splitlines() == [  # a token alone on its line too
        "DATABASE_URL=postgres://app:<redacted>@db.internal:5432/app",
        *(f"TOKEN_{i}=<redacted>" for i in range(len(tokens))), *["<redacted>"] * len(tokens)]
    sent = json.dumps([request.body for request in llm.requests])
    stored = state_dump(root / "state.db")
    assert "TOKEN_0=<redacted>" in stored  # the turn was stored
    for value in [*tokens, "app:pw@"]:
        assert value not in sent and value not in stored, value
