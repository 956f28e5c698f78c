"""The shared rules of the one conversation path, door by door (issue 26): a session the
model never answered (its endpoint failing) is discarded when the door ends it, and a
provider without its key is refused in one line before a session exists. Each door is
driven for real: the CLI (`hermes cron`, `hermes ab`), the MCP SDK's client against
`hermes mcp serve`, the ACP SDK's client against `hermes acp`, a plugin's
`dispatch_tool`, all against the fake LLM."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ok, refused, write_fake_provider
from fakellm import FakeLLM, Fault, Reply
from mcp_support import write_profile
from test_mcp_serve import call, run, stdio_client

NO_KEY = "no API key for provider custom"


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(strict=False) as fake:
        yield fake


def sessions(db: Path) -> list[tuple[str, str]]:
    """(id, source) of every session stored in ``db`` (none when it does not exist)."""
    if not db.exists():
        return []
    connection = sqlite3.connect(db)
    try:
        return [tuple(row) for row in connection.execute("select id, source from sessions")]
    finally:
        connection.close()


def without_key(root: Path) -> None:
    """The profile's provider loses its key (the .env held only that)."""
    (root / ".env").write_text("")


# -- cron ------------------------------------------------------------------------------


def add_job(hermes, prompt: str = "Check the build") -> str:
    out = ok(hermes("cron", "add", "every 1h", prompt))
    return out.split()[2]


def make_due(root: Path) -> None:
    path = root / "cron" / "jobs.json"
    data = json.loads(path.read_text())
    for job in data["jobs"]:
        job["next_run"] = "2000-01-01T00:00:00+00:00"
    path.write_text(json.dumps(data))


def test_cron_discards_a_session_the_model_never_answered(hermes, root: Path,
                                                          llm: FakeLLM) -> None:
    write_fake_provider(root, llm.openai_base_url)
    job = add_job(hermes)
    llm.script.push(Fault.server_error(), Fault.server_error())
    result = hermes("cron", "run", job)
    assert result.exit_code == 1 and f"job {job} (Check the build): error" in result.stdout
    assert sessions(root / "state.db") == []
    output = next((root / "cron" / "output" / job).glob("*.md")).read_text()
    assert "- session: -" in output  # no id of a session that is gone
    llm.script.push(Reply(text="All green."))
    ok(hermes("cron", "run", job))
    assert [source for _, source in sessions(root / "state.db")] == ["cron"]


def test_cron_run_refuses_a_missing_key_before_anything_starts(hermes, root: Path,
                                                               llm: FakeLLM) -> None:
    write_fake_provider(root, llm.openai_base_url)
    job = add_job(hermes)
    without_key(root)
    jobs = (root / "cron" / "jobs.json").read_text()
    refused(hermes("cron", "run", job), NO_KEY, "CUSTOM_API_KEY")
    assert (root / "cron" / "jobs.json").read_text() == jobs  # not even claimed
    assert sessions(root / "state.db") == [] and llm.requests == []


def test_cron_tick_fails_each_due_job_with_the_one_line(hermes, root: Path,
                                                        llm: FakeLLM) -> None:
    write_fake_provider(root, llm.openai_base_url)
    without_key(root)
    assert ok(hermes("cron", "tick")) == "no job is due\n"  # nothing to refuse
    job = add_job(hermes)
    make_due(root)
    result = hermes("cron", "tick")
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert f"job {job} (Check the build): error" in result.stdout and NO_KEY in result.stdout
    stored = json.loads((root / "cron" / "jobs.json").read_text())["jobs"][0]
    assert stored["last_error"].startswith(NO_KEY)
    assert sessions(root / "state.db") == [] and llm.requests == []


# -- mcp serve -------------------------------------------------------------------------


def test_mcp_ask_discards_a_session_the_model_never_answered(environ, root: Path,
                                                             llm: FakeLLM) -> None:
    write_profile(root, llm.openai_base_url, {})
    llm.script.push(*[Fault.server_error()] * 3)

    async def session() -> None:
        async with stdio_client(environ) as client:
            failed = await call(client, "ask", message="Capital of France?")
            assert failed["exit_reason"] == "error" and failed["session_id"] is None
            assert (await call(client, "sessions_list"))["sessions"] == []

    run(session)
    assert sessions(root / "state.db") == []


def test_mcp_ask_refuses_a_missing_key_and_the_session_tools_still_work(
        environ, root: Path, llm: FakeLLM) -> None:
    write_profile(root, llm.openai_base_url, {})
    without_key(root)

    async def session() -> None:
        async with stdio_client(environ) as client:
            assert (await call(client, "sessions_list"))["sessions"] == []
            refused = await client.call_tool("ask", {"message": "Capital of France?"})
            assert refused.is_error
            line = refused.content[0].text
            assert f"ask: {NO_KEY}" in line and "CUSTOM_API_KEY" in line and "\n" not in line

    run(session)
    assert sessions(root / "state.db") == [] and llm.requests == []
