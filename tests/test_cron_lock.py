"""The jobs file's lock, with real processes: processes racing to claim many jobs as they
come due never claim one twice, and a real gateway with ``hermes cron tick`` processes on
the same home run a due job once (a second gateway on the home is refused)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from conftest import wait_until
from fakellm import FakeLLM, RecordedRequest, Reply
from gateway_support import configure, gateway

CLAIMER = """
import json, sys, time
from pathlib import Path
from hermes.config.zones import zone_named
from hermes.cron.clock import Clock
from hermes.cron.store import JobStore
store = JobStore(Path(sys.argv[1]), Clock(zone_named("UTC")))
claimed = []
while time.time() < float(sys.argv[2]):
    claimed += [job.id for job in store.claim_due()]
print(json.dumps(claimed))
"""


def test_processes_racing_to_claim_never_claim_a_job_twice(tmp_path: Path,
                                                           environ: dict[str, str]) -> None:
    """Six processes claim in a loop while 300 jobs come due one after another."""
    directory = tmp_path / "cron"
    directory.mkdir()
    start = time.time() + 4  # once every process is claiming
    jobs = [{"id": f"job{n:03d}", "name": f"job {n}", "prompt": "p", "schedule": "every 1h",
             "next_run": datetime.fromtimestamp(start + n * 0.01, UTC).isoformat()}
            for n in range(300)]
    (directory / "jobs.json").write_text(json.dumps({"jobs": jobs}))
    procs = [subprocess.Popen([sys.executable, "-c", CLAIMER, str(directory), str(start + 4)],
                              env=environ, stdout=subprocess.PIPE, text=True)
             for _ in range(6)]
    claimed = [json.loads(proc.communicate(timeout=120)[0]) for proc in procs]
    everything = [job for one in claimed for job in one]
    assert sorted(everything) == sorted(j["id"] for j in jobs)  # each exactly once
    assert sum(1 for one in claimed if one) > 1  # they did race
    stored = json.loads((directory / "jobs.json").read_text())["jobs"]
    assert {j["runs"] for j in stored} == {1}


def test_a_gateway_and_ticks_on_one_home_run_a_due_job_once(
        root: Path, environ: dict[str, str], hermes) -> None:
    def answer(request: RecordedRequest) -> Reply:
        return Reply(text="done", delay=1.0)  # hold the run: the others try meanwhile

    with FakeLLM(fallback=answer, strict=False) as llm:
        configure(root, llm.openai_base_url)
        added = hermes("cron", "add", "every 1h", "Rotate the logs")
        assert added.exit_code == 0, added.stderr
        data = json.loads((root / "cron" / "jobs.json").read_text())
        data["jobs"][0]["next_run"] = "2000-01-01T00:00:00+00:00"  # its time has come
        (root / "cron" / "jobs.json").write_text(json.dumps(data))
        ticks = [subprocess.Popen([sys.executable, "-m", "hermes", "cron", "tick"],
                                  env=environ, stdout=subprocess.PIPE, text=True)
                 for _ in range(2)]
        with gateway(environ, root) as gw:
            second = subprocess.run([sys.executable, "-m", "hermes", "gateway", "run"],
                                    env=environ, capture_output=True, text=True, timeout=120)
            assert second.returncode == 2 and "a gateway already runs for profile default" \
                in second.stderr
            outputs = [tick.communicate(timeout=180)[0] for tick in ticks]
            wait_until(lambda: json.loads((root / "cron" / "jobs.json").read_text())
                       ["jobs"][0]["last_status"] == "ok", 120, "the job's run")
            assert gw.proc.poll() is None
        runs = [r for r in llm.requests if "Rotate the logs" in (r.last_user_text or "")]
        assert len(runs) == 1, (outputs, gw.output())
        job = json.loads((root / "cron" / "jobs.json").read_text())["jobs"][0]
        assert job["runs"] == 1
        assert len(list((root / "cron" / "output" / job["id"]).iterdir())) == 1
