"""Jobs run by the cron service of a real runtime against the fake LLM, on a fake clock:
what a run is asked and offered, its output file, each delivery target, ``[SILENT]``,
missed runs after downtime, a failing job, completion, a run abandoned by a dead
process."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from dependency_injector import providers

from conftest import write_fake_provider
from fakellm import FakeLLM, Fault, Reply
from hermes.chats import Target
from hermes.config import compose_config
from hermes.config.zones import zone_named
from hermes.container import Runtime, build_runtime
from hermes.cron.clock import Clock
from hermes.cron.jobs import JobError
from hermes.cron.manage import Jobs, NewJob
from hermes.cron.service import CronService
from hermes.cron.store import JobStore
from hermes.home import Home, resolve_home
from messaging_support import FakeClock

PLATFORMS = {"telegram": {"kind": "telegram", "token": "${secret:TELEGRAM_BOT_TOKEN}",
                          "home_channel": "555"}}


@dataclass
class Cron:
    """A profile's jobs and cron service on a fake clock, and what was delivered."""

    home: Home
    runtime: Runtime
    clock: FakeClock
    jobs: Jobs
    service: CronService
    sent: list[tuple[Target, str]]

    def deliver(self, target: Target, text: str) -> None:
        self.sent.append((target, text))

    def tick(self) -> list[Any]:
        return self.service.tick(self.deliver)

    def job(self, job_id: str) -> Any:
        return self.jobs.get(job_id)


def profile(root: Path, llm: FakeLLM) -> None:
    """The fake LLM's profile with a telegram platform (home channel 555), in Berlin."""
    write_fake_provider(root, llm.openai_base_url)
    config = yaml.safe_load((root / "config.yaml").read_text())
    config |= {"platforms": {"enabled": PLATFORMS}, "cron": {"timezone": "Europe/Berlin"}}
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    with (root / ".env").open("a") as env:
        env.write("TELEGRAM_BOT_TOKEN=123:fake\n")


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(strict=False) as fake:
        yield fake


@pytest.fixture
def cron(root: Path, environ: dict[str, str], llm: FakeLLM) -> Iterator[Cron]:
    profile(root, llm)
    home = resolve_home(None, environ).ensure()
    clock = FakeClock()
    with build_runtime(home, compose_config(home, environ).config, environ) as runtime:
        store = JobStore(home.cron_dir, Clock(zone_named("Europe/Berlin"), clock))
        runtime.container.cron_store.override(providers.Object(store))
        yield Cron(home, runtime, clock, runtime.container.jobs(), runtime.container.cron(),
                   [])


def test_a_due_job_runs_in_a_fresh_session_without_the_cron_tool(cron: Cron,
                                                                 llm: FakeLLM) -> None:
    job = cron.jobs.create(NewJob("Check the build and report failures", "every 1h",
                                  deliver="telegram:42"))
    assert cron.tick() == [] and llm.requests == []  # not due yet
    llm.script.push(Reply(text="All green."))
    cron.clock.advance(3600)
    (report,) = cron.tick()
    assert report.status == "ok" and report.delivered_to == "telegram:42"
    request = llm.requests[-1]
    message = request.last_user_text or ""
    assert message.endswith("Check the build and report failures")
    assert "[SILENT]" in message and "nobody can answer questions" in message
    assert "cronjob" not in request.tool_names and "terminal" in request.tool_names
    assert cron.sent == [(Target("telegram", "42"), "All green.")]
    output = cron.home.path / str(cron.job(job.id).last_output)
    assert output.parent == cron.home.cron_dir / "output" / job.id
    assert "All green." in output.read_text() and output.stat().st_mode & 0o777 == 0o600
    stored = cron.job(job.id)
    assert (stored.last_status, stored.runs, stored.state) == ("ok", 1, "scheduled")
    session = cron.runtime.container.sessions().get_session(str(report.outcome.session_id))
    assert session.source == "cron"
    assert cron.tick() == []  # claimed and moved on: not run again


def test_missed_runs_after_downtime_run_once(cron: Cron, llm: FakeLLM) -> None:
    job = cron.jobs.create(NewJob("Summarise the inbox", "every 1h"))
    first_due = cron.job(job.id).next_time()
    cron.clock.advance(5 * 3600 + 600)  # down for five slots and ten minutes
    llm.script.push(Reply(text="Summary."))
    assert len(cron.tick()) == 1
    assert cron.tick() == []
    assert len(llm.requests) == 1
    assert cron.job(job.id).next_time() == first_due + timedelta(hours=5)  # after now


def test_silent_answers_are_saved_but_not_delivered(cron: Cron, llm: FakeLLM) -> None:
    job = cron.jobs.create(NewJob("Any new issues?", "every 1h", deliver="telegram"))
    llm.script.push(Reply(text="Nothing new. [SILENT]"))
    cron.clock.advance(3600)
    (report,) = cron.tick()
    assert report.status == "silent" and report.delivered_to is None and cron.sent == []
    assert "Nothing new. [SILENT]" in (cron.home.path / str(cron.job(job.id).last_output)
                                       ).read_text()


def test_a_failing_job_records_its_error_and_keeps_its_schedule(cron: Cron,
                                                               llm: FakeLLM) -> None:
    job = cron.jobs.create(NewJob("Check the build", "every 1h", deliver="telegram"))
    llm.script.push(Fault.server_error())
    cron.clock.advance(3600)
    (report,) = cron.tick()
    stored = cron.job(job.id)
    assert report.status == stored.last_status == "error"
    assert stored.last_error and "error" in stored.last_error
    assert stored.state == "scheduled" and stored.next_time() is not None
    assert (cron.sent[0][0], cron.sent[0][1].startswith("(scheduled job 'Check the build' "
                                                        "failed:")) == (
        Target("telegram", "555"), True)
    llm.script.push(Reply(text="Fixed."))
    cron.clock.advance(3600)
    assert [r.status for r in cron.tick()] == ["ok"]
    assert cron.job(job.id).last_error is None


def test_each_delivery_target(cron: Cron, llm: FakeLLM) -> None:
    origin = {"platform": "telegram", "chat_id": "77", "chat_type": "group",
              "user_id": "u1", "user_name": "", "thread_id": "9"}
    made = [cron.jobs.create(NewJob("local", "every 1h", deliver="local")),
            cron.jobs.create(NewJob("home", "every 1h", deliver="telegram")),
            cron.jobs.create(NewJob("chat", "every 1h", deliver="telegram:42:7")),
            cron.jobs.create(NewJob("origin", "every 1h", origin=origin))]
    assert [j.deliver for j in made] == ["local", "telegram", "telegram:42:7", "origin"]
    llm.script.push(*(Reply(text=f"answer {n}") for n in range(4)))
    cron.clock.advance(3600)
    reports = cron.tick()
    assert [r.delivered_to for r in reports] == [None, "telegram:555", "telegram:42:7",
                                                 "telegram:77:9"]
    assert sorted(str(target) for target, _ in cron.sent) == [
        "telegram:42:7", "telegram:555", "telegram:77:9"]


def test_a_delivery_that_fails_is_recorded_and_the_output_kept(cron: Cron,
                                                              llm: FakeLLM) -> None:
    job = cron.jobs.create(NewJob("Report", "every 1h", deliver="telegram"))

    def refuse(target: Target, text: str) -> None:
        raise ConnectionError("telegram is unreachable")

    llm.script.push(Reply(text="The report."))
    cron.clock.advance(3600)
    (report,) = cron.service.tick(refuse)
    stored = cron.job(job.id)
    assert report.status == stored.last_status == "undelivered"
    assert stored.last_error == "not delivered: telegram is unreachable"
    assert "The report." in (cron.home.path / str(stored.last_output)).read_text()


BAD_TARGETS = {
    "unknown platform": ("slack", "deliver: no platform 'slack' is enabled"),
    "misspelt": ("telegarm:1", 'no platform \'telegarm\' is enabled (did you mean "telegram"?)'),
    "origin outside a chat": ("origin", "deliver origin: the job was not created from a chat"),
    "not a target": ("telegram:", "deliver: 'telegram:' is not a delivery target"),
}


@pytest.mark.parametrize("case", BAD_TARGETS)
def test_bad_targets_are_refused_and_nothing_is_written(cron: Cron, case: str) -> None:
    deliver, fragment = BAD_TARGETS[case]
    with pytest.raises(JobError) as caught:
        cron.jobs.create(NewJob("x", "every 1h", deliver=deliver))
    assert fragment in str(caught.value) and "\n" not in str(caught.value)
    assert not (cron.home.cron_dir / "jobs.json").exists()


def test_a_platform_without_home_channel_is_refused(root: Path, environ: dict[str, str],
                                                    llm: FakeLLM) -> None:
    profile(root, llm)
    config = yaml.safe_load((root / "config.yaml").read_text())
    del config["platforms"]["enabled"]["telegram"]["home_channel"]
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    home = resolve_home(None, environ)
    expected = ("platform 'telegram' has no home channel; set one (`hermes config set "
                "platforms.enabled.telegram.home_channel CHAT_ID`)")
    with build_runtime(home, compose_config(home, environ).config, environ) as runtime, \
            pytest.raises(JobError) as caught:
        runtime.container.jobs().create(NewJob("x", "every 1h", deliver="telegram"))
    assert expected in str(caught.value)


def test_once_and_repeat_complete_the_job(cron: Cron, llm: FakeLLM) -> None:
    once = cron.jobs.create(NewJob("Remind me to stretch", "30m"))
    twice = cron.jobs.create(NewJob("Ping", "every 1h", repeat=2))
    llm.script.push(*(Reply(text="ok") for _ in range(3)))
    cron.clock.advance(3600)
    assert len(cron.tick()) == 2
    assert (cron.job(once.id).state, cron.job(once.id).next_run) == ("completed", None)
    assert cron.job(twice.id).state == "scheduled"
    cron.clock.advance(3600)
    assert len(cron.tick()) == 1
    assert cron.job(twice.id).state == "completed" and cron.job(twice.id).runs == 2
    cron.clock.advance(86400)
    assert cron.tick() == []


def test_a_jobs_skills_are_loaded_into_its_run(cron: Cron, llm: FakeLLM) -> None:
    cron.jobs.create(NewJob("Write the release notes", "every 1h",
                            skills=["commit-message", "/release-checklist"]))
    llm.script.push(Reply(text="Notes."))
    cron.clock.advance(3600)
    cron.tick()
    message = llm.requests[-1].last_user_text or ""
    assert '<skill name="commit-message"' in message
    assert '<skill name="release-checklist"' in message
    assert message.index("<skill") < message.rindex("Write the release notes")
    skills = cron.runtime.container.skills()
    assert skills.usage("commit-message").uses == 1
    with pytest.raises(JobError, match="skills: no skill 'comit-message' \\(did you mean "
                                       '"commit-message"\\?\\)'):
        cron.jobs.create(NewJob("x", "every 1h", skills=["comit-message"]))


def test_a_run_left_by_a_dead_process_is_failed_and_the_job_runs_on(cron: Cron,
                                                                   llm: FakeLLM) -> None:
    job = cron.jobs.create(NewJob("Backup", "every 1h"))
    dead = subprocess.Popen(["true"])
    dead.wait()
    cron.clock.advance(3600)
    cron.service.store.claim_due()  # this process claims it...
    data = json.loads(cron.service.store.path.read_text())
    data["jobs"][0]["running_pid"] = dead.pid  # ...as if a gateway that died had
    cron.service.store.path.write_text(json.dumps(data))
    assert cron.service.store.claim_due() == []  # nothing due; the dead run is failed
    stored = cron.job(job.id)
    assert (stored.last_status, stored.running_pid) == ("error", None)
    assert stored.last_error == "interrupted: the process running it ended during the run"
    cron.clock.advance(3600)
    llm.script.push(Reply(text="Backed up."))
    (report,) = cron.tick()
    assert report.status == "ok" and len(llm.requests) == 1
