"""The shared rules of the one conversation path, door by door (issue 26): a session the
model never answered (its endpoint failing) is discarded when the door ends it, and a
provider without its key is refused in one line before a session exists. Each door is
driven for real: the CLI (`hermes cron`, `hermes ab`), the MCP SDK's client against
`hermes mcp serve`, the ACP SDK's client against `hermes acp`, a plugin's
`dispatch_tool`, all against the fake LLM."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp import RequestError

from acp_support import Editor, connect, prompt_of
from conftest import ok, refused, write_fake_provider
from fakellm import FakeLLM, Fault, Reply
from mcp_support import write_profile
from plugin_support import write_plugin
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


# -- hermes ab -------------------------------------------------------------------------

UNREACHABLE = "http://127.0.0.1:9/v1"
"""The discard port: nothing listens, the connection is refused at once."""


def ab_runs(root: Path, stderr: str) -> tuple[Path, list[dict[str, object]]]:
    eid = stderr.split("experiment ", 1)[1].split(":", 1)[0]
    db = sqlite3.connect(root / "experiments" / eid / "results.db")
    db.row_factory = sqlite3.Row
    try:
        rows = [dict(r) for r in db.execute("select * from runs order by arm_index")]
    finally:
        db.close()
    return root / "experiments" / eid, rows


def test_ab_discards_a_run_s_session_the_model_never_answered(hermes, root: Path,
                                                              llm: FakeLLM) -> None:
    write_fake_provider(root, llm.openai_base_url)
    llm.script.push(Reply(text="4"))
    result = hermes("ab", f"provider.api_base={llm.openai_base_url},{UNREACHABLE}",
                    "-q", "What is 2+2?")
    experiment, rows = ab_runs(root, result.stderr)
    answered, unanswered = rows
    assert (answered["exit_reason"], unanswered["exit_reason"]) == ("completed", "error")
    assert unanswered["session_id"] is None
    assert sessions(experiment / "state.db") == [(answered["session_id"], "ab")]
    listed = ok(hermes("ab", "show", experiment.name, "--runs"))
    assert "session -" in listed and "session None" not in listed


def test_ab_refuses_a_missing_key_before_anything_starts(hermes, root: Path,
                                                         llm: FakeLLM) -> None:
    write_fake_provider(root, llm.openai_base_url)
    without_key(root)
    refused(hermes("ab", "provider.model=a,b", "-q", "What is 2+2?"),
            "no API key for provider custom", "CUSTOM_API_KEY")
    assert not (root / "experiments").exists() and llm.requests == []


# -- a plugin's dispatch_tool outside a session -----------------------------------------

PINGER = """
def register(ctx):
    ctx.register_hook("post_llm_call", lambda assistant_response, **kw: ctx.dispatch_tool(
        "no_such_tool", {}) and None)
"""


def test_a_plugin_s_own_session_ends_with_the_runtime(hermes, root: Path,
                                                       llm: FakeLLM) -> None:
    write_fake_provider(root, llm.openai_base_url)
    write_plugin(root, "pinger", PINGER)
    with (root / "config.yaml").open("a") as config:
        config.write("plugins:\n  enabled: [pinger]\n")
    llm.script.push(Reply(text="Hello."))
    assert "Hello." in ok(hermes("-z", "Say hello"))
    # the hook's dispatch_tool ran in a session of the plugins' own, which the model
    # never answered: it went with the runtime, the chat's session stayed
    assert [source for _, source in sessions(root / "state.db")] == ["cli"]


# -- acp -------------------------------------------------------------------------------


def test_acp_discards_a_session_the_model_never_answered(environ, root: Path, llm: FakeLLM,
                                                         tmp_path: Path) -> None:
    write_fake_provider(root, llm.openai_base_url)
    llm.script.push(*[Fault.server_error()] * 3)
    editor = Editor()

    async def scenario() -> None:
        async with connect(editor, environ, stderr=tmp_path / "acp.log") as (conn, _):
            session = await conn.new_session(cwd=str(tmp_path))
            with pytest.raises(RequestError):
                await conn.prompt(session_id=session.session_id,
                                  prompt=prompt_of("Capital of France?"))
            assert [sid for sid, _ in sessions(root / "state.db")] == [session.session_id]

    asyncio.run(scenario())
    assert sessions(root / "state.db") == []  # ended when the editor went


def test_acp_refuses_a_missing_key_before_anything_starts(hermes_subprocess, root: Path,
                                                          llm: FakeLLM) -> None:
    write_fake_provider(root, llm.openai_base_url)
    without_key(root)
    result = hermes_subprocess("acp", input="")
    assert (result.returncode, result.stdout) == (2, "")
    line = result.stderr.strip()
    assert line.startswith(f"error: {NO_KEY}") and "\n" not in line
    assert sessions(root / "state.db") == [] and llm.requests == []
