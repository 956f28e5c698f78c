"""The curator's timings with a fake clock: the first tick records only, the interval and
the idle time are honoured, stale at 30 days and archived (never deleted) at 90, pinned
and cron skills exempt, a dry run changes nothing; and `hermes curator` at the CLI."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from conftest import ok
from hermes.config.learning_schema import CuratorConfig
from hermes.learning.curator import Curator, cron_skills
from hermes.skills.store import SkillsStore

DAY = 86400.0
T0 = 1_700_000_000.0


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def days(self, count: float) -> None:
        self.now = T0 + count * DAY


def skill_md(name: str) -> str:
    return f"---\nname: {name}\ndescription: The {name} procedure.\n---\n# {name}\n\n1. Do it.\n"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> SkillsStore:
    return SkillsStore(tmp_path / "skills", bundled=None, clock=clock)


class Activity:
    """The profile's last turn, as the curator asks for it."""

    def __init__(self) -> None:
        self.at: float | None = None

    def __call__(self) -> float | None:
        return self.at


def curator(store: SkillsStore, clock: Clock, activity: Activity | None = None,
            cron: set[str] | None = None) -> Curator:
    return Curator(store, CuratorConfig(), last_activity=activity or Activity(),
                   cron_skills=lambda: set(cron or ()), clock=clock)


def make(store: SkillsStore, *names: str) -> None:
    for name in names:
        store.create(name, skill_md(name), by="user")


def test_the_first_tick_only_records_its_time(store: SkillsStore, clock: Clock) -> None:
    make(store, "old")
    clock.days(200)
    keeper = curator(store, clock)
    first = keeper.tick()
    assert first is not None and first.first and not first.changed
    assert store.find("old") is not None and store.stale() == set()
    assert json.loads(keeper.state_file.read_text())["last_run"] == clock.now
    assert keeper.tick() is None  # the interval counts from that first tick


def test_the_interval_and_the_idle_time_are_honoured(store: SkillsStore, clock: Clock) -> None:
    make(store, "old")
    activity = Activity()
    keeper = curator(store, clock, activity)
    keeper.tick()  # day 0: recorded
    clock.days(6.9)
    assert keeper.tick() is None  # within the 7-day interval
    clock.days(200)
    activity.at = clock.now - 3600  # a turn an hour ago: not idle for 2 h
    assert keeper.tick() is None
    assert store.find("old") is not None
    activity.at = clock.now - 2 * 3600
    done = keeper.tick()
    assert done is not None and done.archived == ("old",)
    assert keeper.tick() is None  # and the next interval starts now


def test_stale_at_30_days_archived_never_deleted_at_90(store: SkillsStore,
                                                      clock: Clock) -> None:
    make(store, "deploy", "busy")
    keeper = curator(store, clock)
    for day in (29.9, 30, 60, 89.9):
        clock.days(day)
        store.record_use("busy")
        keeper.run()
        if day == 29.9:
            assert store.stale() == set()
    assert store.stale() == {"deploy"} and store.find("deploy") is not None
    clock.days(90)
    done = keeper.run()
    assert done.archived == ("deploy",) and store.find("deploy") is None
    assert store.archived() == ["deploy"]
    assert (store.archive_dir / "deploy" / "SKILL.md").read_text() == skill_md("deploy")
    assert store.find("busy") is not None and "busy" not in store.stale()
    assert [e.action for e in store.history() if e.by == "curator"] == ["stale", "archive"]


def test_a_use_clears_the_stale_mark_and_restarts_the_clock(store: SkillsStore,
                                                            clock: Clock) -> None:
    make(store, "deploy")
    keeper = curator(store, clock)
    clock.days(40)
    assert keeper.run().stale == ("deploy",)
    store.record_use("deploy")  # a skill_view or a slash command
    assert store.stale() == set()
    clock.days(100)
    done = keeper.run()
    assert done.archived == () and done.stale == ("deploy",)


def test_pinned_and_cron_skills_are_exempt(store: SkillsStore, clock: Clock,
                                           tmp_path: Path) -> None:
    make(store, "pinned", "nightly", "idle")
    store.pin("pinned")
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps({"jobs": [{"id": "a1", "prompt": "report",
                                          "skills": ["nightly"], "state": "paused"}]}))
    keeper = Curator(store, CuratorConfig(), last_activity=Activity(),
                     cron_skills=lambda: cron_skills(jobs), clock=clock)
    clock.days(365)
    done = keeper.run()
    assert done.archived == ("idle",)
    assert sorted(done.exempt) == ["nightly", "pinned"]
    assert store.find("pinned") is not None and store.find("nightly") is not None
    assert store.stale() == set()


def test_cron_jobs_name_their_skills_in_any_shape(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.json"
    assert cron_skills(jobs) == set()  # no cron yet
    jobs.write_text(json.dumps([{"skills": ["a", "/b"]}, {"skills": "c"}, {"prompt": "x"}]))
    assert cron_skills(jobs) == {"a", "b", "c"}
    jobs.write_text(json.dumps({"jobs": {"id1": {"skills": ["d"]}}}))
    assert cron_skills(jobs) == {"d"}
    jobs.write_text("{not json")
    assert cron_skills(jobs) == set()


def test_a_dry_run_changes_nothing(store: SkillsStore, clock: Clock) -> None:
    make(store, "old", "older")
    clock.days(40)
    store.record_use("old")
    keeper = curator(store, clock)
    clock.days(100)
    before = (store.directory / ".state.json").read_text()
    plan = keeper.run(dry_run=True)
    assert plan.dry_run and plan.stale == ("old",) and plan.archived == ("older",)
    assert (store.directory / ".state.json").read_text() == before
    assert store.find("older") is not None and not keeper.state_file.exists()


def test_the_cli_shows_the_status_and_runs_it(hermes, root: Path) -> None:
    long_ago = time.time() - 100 * DAY
    store = SkillsStore(root / "skills", bundled=None, clock=lambda: long_ago)
    make(store, "forgotten")
    status = ok(hermes("curator", "status"))
    assert "last run: never" in status
    assert "a run now would: archive forgotten" in status
    dry = ok(hermes("curator", "run", "--dry-run"))
    assert "dry run, nothing changed; a run would: archive forgotten" in dry
    assert (root / "skills" / "forgotten" / "SKILL.md").exists()
    done = ok(hermes("curator", "run"))
    assert "curated: archive forgotten" in done
    assert (root / "skills" / ".archive" / "forgotten" / "SKILL.md").exists()
    assert "a run now would: change nothing" in ok(hermes("curator", "status"))
    line = json.loads((root / "logs" / "learning.jsonl").read_text().splitlines()[-1])
    assert line["event"] == "curator" and line["archived"] == ["forgotten"]


def test_a_run_on_a_fresh_profile_makes_only_private_directories(hermes, root: Path) -> None:
    assert "curated: change nothing" in ok(hermes("curator", "run"))
    made = [root, *(path for path in root.rglob("*") if path.is_dir())]
    assert root / "skills" in made
    assert [str(path) for path in made if path.stat().st_mode & 0o077] == []
