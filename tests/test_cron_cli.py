"""``hermes cron list | add | edit | pause | resume | remove | run | tick`` through the real
CLI, the agent answering from the fake LLM."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ok, refused, write_fake_provider
from fakellm import FakeLLM, Fault, Reply


@pytest.fixture
def llm(root: Path) -> Iterator[FakeLLM]:
    with FakeLLM(strict=False) as fake:
        write_fake_provider(root, fake.openai_base_url)
        yield fake


def jobs_file(root: Path) -> Path:
    return root / "cron" / "jobs.json"


def stored(root: Path) -> list[dict[str, Any]]:
    jobs: list[dict[str, Any]] = json.loads(jobs_file(root).read_text())["jobs"]
    return jobs


def make_due(root: Path, job_id: str) -> None:
    """As if the job's time had come (the file is the jobs' format: times with offsets)."""
    data = json.loads(jobs_file(root).read_text())
    for job in data["jobs"]:
        if job["id"] == job_id:
            job["next_run"] = "2000-01-01T00:00:00+00:00"
    jobs_file(root).write_text(json.dumps(data))


def added_id(output: str) -> str:
    assert output.startswith("added job "), output
    return output.split()[2]


def test_add_list_edit_pause_resume_remove(hermes, root: Path, llm: FakeLLM) -> None:
    assert ok(hermes("cron", "list")).startswith("no jobs; add one: hermes cron add")
    job = added_id(ok(hermes("cron", "add", "every 2h", "Check the build", "-n", "build")))
    daily = added_id(ok(hermes("cron", "add", "0 9 * * 1-5", "Morning summary",
                               "--skill", "commit-message", "--repeat", "3")))
    listing = ok(hermes("cron", "list"))
    assert listing.splitlines()[0].split() == ["ID", "NAME", "SCHEDULE", "STATE", "NEXT",
                                               "RUN", "LAST", "RUN", "STATUS", "DELIVER"]
    assert f"{job}  build " in listing and "every 2h" in listing
    assert "cron 0 9 * * 1-5" in listing and "Morning summary" in listing
    assert stored(root)[1]["skills"] == ["commit-message"] and stored(root)[1]["repeat"] == 3
    assert jobs_file(root).stat().st_mode & 0o777 == 0o600

    out = ok(hermes("cron", "edit", "build", "--schedule", "every 30m", "--prompt", "Check CI"))
    assert out.startswith(f"changed job {job} (build): every 30m, scheduled")
    assert stored(root)[0]["prompt"] == "Check CI" and stored(root)[0]["schedule"] == "every 30m"
    assert ok(hermes("cron", "edit", daily, "--no-skills")) and stored(root)[1]["skills"] == []
    assert ok(hermes("cron", "pause", job)) == f"paused job {job} (build)\n"
    assert stored(root)[0]["state"] == "paused"
    assert ok(hermes("cron", "resume", job)).startswith(f"resumed job {job} (build): next run ")
    assert ok(hermes("cron", "remove", daily)) == f"removed job {daily} (Morning summary)\n"
    assert [j["id"] for j in stored(root)] == [job]


REFUSALS = {
    "bad schedule": (["add", "whenever", "x"], "cannot read the schedule 'whenever': write "
                     "30m, 2h or 1d (once, from now), every 2h (repeating)"),
    "past time": (["add", "2001-01-01T10:00", "x"], "'2001-01-01T10:00' is in the past"),
    "unknown target": (["add", "1h", "x", "--deliver", "telegram"],
                       "deliver: no platform 'telegram' is enabled (enabled: none)"),
    "unknown skill": (["add", "1h", "x", "--skill", "nosuch"], "skills: no skill 'nosuch'"),
    "empty prompt": (["add", "1h", "  "], "prompt: empty; a job needs one"),
    "unknown job": (["pause", "nosuch"], "no job 'nosuch'; `hermes cron list` shows the jobs"),
    "edit nothing": (["edit", "JOB"], "nothing to change: pass --schedule"),
    "edit bad schedule": (["edit", "JOB", "--schedule", "every 5s"],
                          "cannot read the interval of 'every 5s'"),
    "resume a scheduled job": (["resume", "JOB"], "is scheduled, not paused"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_bad_input_is_refused_in_one_line_and_nothing_is_written(hermes, root: Path,
                                                                 llm: FakeLLM, case: str) -> None:
    job = added_id(ok(hermes("cron", "add", "every 1h", "Keep me")))
    before = jobs_file(root).read_text()
    args, fragment = REFUSALS[case]
    refused(hermes("cron", *[job if a == "JOB" else a for a in args]), fragment)
    assert jobs_file(root).read_text() == before


def test_the_time_zone_is_checked_and_used(hermes, root: Path, llm: FakeLLM) -> None:
    refused(hermes("config", "set", "cron.timezone", "Europe/Berln"),
            "cron.timezone", "unknown time zone 'Europe/Berln' (did you mean "
            '"Europe/Berlin"?)')
    ok(hermes("config", "set", "cron.timezone", "Asia/Kolkata"))
    ok(hermes("cron", "add", "2099-01-31T09:00", "New year's plan"))
    assert stored(root)[0]["next_run"] == "2099-01-31T09:00:00+05:30"


def test_run_runs_now_and_leaves_the_schedule(hermes, root: Path, llm: FakeLLM) -> None:
    job = added_id(ok(hermes("cron", "add", "every 1d", "Say hello")))
    next_run = stored(root)[0]["next_run"]
    llm.script.push(Reply(text="Hello from cron."))
    out = ok(hermes("cron", "run", job))
    assert out.startswith(f"job {job} (Say hello): ok; output ")
    output = root / out.split("; output ")[1].strip()
    assert "Hello from cron." in output.read_text()
    assert output.parent == root / "cron" / "output" / job
    record = stored(root)[0]
    assert (record["next_run"], record["runs"], record["last_status"]) == (next_run, 0, "ok")
    assert "Say hello" in (llm.requests[-1].last_user_text or "")


def test_tick_runs_what_is_due_once(hermes, root: Path, llm: FakeLLM) -> None:
    assert ok(hermes("cron", "tick")) == "no job is due\n"
    due = added_id(ok(hermes("cron", "add", "every 1h", "Count the open issues")))
    later = added_id(ok(hermes("cron", "add", "every 1h", "Not yet")))
    make_due(root, due)
    llm.script.push(Reply(text="Seven."))
    out = ok(hermes("cron", "tick"))
    assert out.startswith(f"job {due} (Count the open issues): ok; output ")
    assert later not in out and len(llm.requests) == 1
    assert ok(hermes("cron", "tick")) == "no job is due\n"
    assert [j["runs"] for j in stored(root)] == [1, 0]


def test_tick_exits_1_when_a_run_failed(hermes, root: Path, llm: FakeLLM) -> None:
    job = added_id(ok(hermes("cron", "add", "every 1h", "Check the build")))
    make_due(root, job)
    llm.script.push(Fault.server_error())
    result = hermes("cron", "tick")
    assert result.exit_code == 1
    assert result.stdout.startswith(f"job {job} (Check the build): error; output ")
    assert stored(root)[0]["last_status"] == "error" and stored(root)[0]["last_error"]
    listing = ok(hermes("cron", "list"))
    assert f"{job}: error: " in listing  # the error is shown under the table


def test_a_target_without_chats_is_not_delivered(hermes, root: Path, llm: FakeLLM) -> None:
    (root / "config.yaml").write_text((root / "config.yaml").read_text() + (
        "platforms:\n  enabled:\n    api_server:\n      kind: api_server\n"
        "      token: cron-test-key-0123456789\n"  # the API server never runs without one
        "      home_channel: somewhere\n"))
    job = added_id(ok(hermes("cron", "add", "every 1h", "Report", "--deliver", "api_server")))
    llm.script.push(Reply(text="The report."))
    result = hermes("cron", "run", job)
    assert result.exit_code == 1
    assert "undelivered" in result.stdout and "has no chats to send to" in result.stdout
    assert stored(root)[0]["last_error"] == ("not delivered: cannot deliver to "
                                             "api_server:somewhere: platform 'api_server' "
                                             "has no chats to send to")


def test_times_are_shown_in_the_profiles_zone_with_the_zone_named(hermes, root: Path,
                                                                   llm: FakeLLM) -> None:
    """Two jobs at different instants, one written with its own offset, the other in
    ``cron.timezone``: each is shown in that zone, named, not both at 09:00."""
    ok(hermes("config", "set", "cron.timezone", "Asia/Kolkata"))
    utc = ok(hermes("cron", "add", "2099-01-31T09:00+00:00", "In UTC", "-n", "utc"))
    local = ok(hermes("cron", "add", "2099-01-31T09:00", "In Kolkata", "-n", "local"))
    assert "once at 2099-01-31 14:30 IST, next run 2099-01-31 14:30 IST" in utc, utc
    assert "once at 2099-01-31 09:00 IST, next run 2099-01-31 09:00 IST" in local, local
    daily = ok(hermes("cron", "add", "0 9 * * *", "Daily", "-n", "daily"))
    assert "cron 0 9 * * * (Asia/Kolkata), next run " in daily and " 09:00 IST," in daily
    listing = ok(hermes("cron", "list")).splitlines()
    row = {line.split()[1]: line for line in listing[1:]}
    assert "2099-01-31 14:30 IST" in row["utc"] and "09:00 IST" not in row["utc"]
    assert "2099-01-31 09:00 IST" in row["local"]
    assert "(Asia/Kolkata)" in row["daily"]
