"""`hermes ab` as a user runs it: the real CLI, arms against the fake LLM over HTTP
(litellm's own code), scratch homes, real SQLite."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ok, refused, write_fake_provider
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall, Turn
from fakellm.by_model import answer, by_model, tool_then_answer

MEMORY_NOTE = "the user takes tea without sugar"


def _judge(request: RecordedRequest) -> str:
    text = request.last_user_text or ""
    verdict = "pass" if "## Answer\nThe answer is 4." in text else "fail"
    return json.dumps({"verdict": verdict, "reason": f"judged {verdict}"})


def _intrude(request: RecordedRequest) -> Turn:
    """Try to overwrite the file named at the end of the prompt."""
    if request.tool_results:
        return Reply(text="done")
    target = (request.last_user_text or "").split()[-1]
    return Reply(tool_calls=[ToolCall("write_file", {"path": target, "content": "pwned"})])


BEHAVIOURS = {
    "intruder": _intrude,
    "good": answer("The answer is 4."),
    "wrongtool": tool_then_answer("terminal", {"command": "echo 4"}, "4, I think"),
    "slow": answer("4", delay=8),
    "slowish": answer("The answer is 4.", delay=2.5),
    "memo": tool_then_answer("memory", {"action": "add", "target": "memory",
                                        "content": MEMORY_NOTE}, "The answer is 4."),
    "judge": answer(_judge),
    "gpt-4o": answer("The answer is 4."),
}


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=by_model(BEHAVIOURS)) as fake:
        yield fake


@pytest.fixture
def configured(root: Path, llm: FakeLLM) -> Path:
    write_fake_provider(root, llm.openai_base_url)
    (root / "memories").mkdir(parents=True)
    (root / "memories" / "MEMORY.md").write_text("The user works on Hermes.\n")
    (root / "skills" / "notes").mkdir(parents=True)
    (root / "skills" / "notes" / "SKILL.md").write_text("---\nname: notes\n"
                                                        "description: take notes\n---\nbody\n")
    return root


def write_tasks(path: Path, *tasks: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return path


SUM = {"id": "sum", "prompt": "What is 2+2?",
       "expect": {"contains": "4", "tool_not_called": "terminal"}}
FILE = {"id": "file", "prompt": "Is data.txt there?", "files": {"data.txt": "alpha\n"},
        "expect": {"shell": "grep -q alpha data.txt", "max_latency": 20}}


def experiment_id(stderr: str) -> str:
    return stderr.split("experiment ", 1)[1].split(":", 1)[0]


def runs(root: Path, eid: str) -> list[dict[str, object]]:
    db = sqlite3.connect(root / "experiments" / eid / "results.db")
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute("select * from runs order by arm_index, task")]
    finally:
        db.close()


def tree_digest(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def test_arms_that_behave_differently_are_scored_apart(hermes, configured: Path,
                                                       tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", SUM, FILE)
    ok(hermes("-z", "hello"))  # the profile has a session of its own
    real = {name: tree_digest(configured / name) for name in ("memories", "skills")}
    real_db = {p.name: p.read_bytes() for p in configured.glob("state.db*")}
    result = hermes("ab", "provider.model=good,wrongtool,slow", "--tasks", str(tasks),
                    "--timeout", "3", "--concurrency", "3")
    table = ok(result)
    eid = experiment_id(result.stderr)
    rows = {(r["arm"], r["task"]): r for r in runs(configured, eid)}
    assert len(rows) == 6
    good, wrong = rows["provider.model=good", "sum"], rows["provider.model=wrongtool", "sum"]
    assert (good["passed"], good["exit_reason"], good["answer"]) == (1, "completed",
                                                                     "The answer is 4.")
    assert good["tool_calls"] == 0 and good["latency_first_token"] is not None
    assert good["input_tokens"] == 10 and good["output_tokens"] == 5
    assert (wrong["passed"], wrong["check_contains"], wrong["check_tool_not_called"]) == (0, 1, 0)
    assert json.loads(wrong["tool_names"]) == ["terminal"] and wrong["iterations"] == 2
    for task in ("sum", "file"):
        slow = rows["provider.model=slow", task]
        assert (slow["passed"], slow["exit_reason"]) == (0, "timeout")
        assert 3 <= slow["latency_total"] < 8
    assert rows["provider.model=wrongtool", "file"]["check_shell"] == 1  # files were placed
    assert "provider.model=good" in table and "100% [34%–100%] *" in table
    assert "0% [0%–66%]" in table
    # isolation: the profile's memories, skills and sessions are byte-identical
    assert {name: tree_digest(configured / name) for name in ("memories", "skills")} == real
    assert {p.name: p.read_bytes() for p in configured.glob("state.db*")} == real_db
    assert "state.db" in real_db
    report = Path(ok(hermes("ab", "report", eid)).strip()).read_text()
    latency = report.split('id="chart-latency"')[1].split("</svg>")[0]
    assert latency.count('class="run"') == 6 and "timed out after 3 s" in report
    listed = ok(hermes("ab", "show", eid, "--runs"))
    assert "provider.model=wrongtool  sum#1  FAIL tool_not_called" in listed
    assert "provider.model=slow  file#1  FAIL timeout" in listed
    assert "transcripts: `hermes sessions show SESSION`" in listed
    # the session id opens the transcript in the experiment's own database
    shown = hermes("sessions", "show", str(good["session_id"]),
                   env={"HERMES_HOME": str(configured / "experiments" / eid)})
    assert "The answer is 4." in ok(shown)
    # and from the profile itself: the run's session is found in its experiment
    shown = ok(hermes("sessions", "show", str(good["session_id"])))
    assert "The answer is 4." in shown and f"run of    experiment {eid}" in shown
    config = (configured / "experiments" / eid / "arms" / "2.yaml").read_text()
    assert "model: wrongtool" in config and "${secret:CUSTOM_API_KEY}" in config
    assert "sk-fake" not in config


def test_invalid_arms_and_task_lines_are_all_refused_before_anything_runs(
        hermes, configured: Path, llm: FakeLLM, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(SUM) + "\n{oops\n" + json.dumps({"id": "x"}) + "\n")
    result = hermes("ab", "agent.max_iterations=0,5", "toolsets=minimal,nosuch",
                    "--tasks", str(tasks))
    line = refused(result, "5 problems, nothing ran", "tasks.jsonl:2: not JSON",
                   "tasks.jsonl:3: prompt: Field required",
                   "arm 1 (agent.max_iterations=0 toolsets=minimal): ",
                   "agent.max_iterations: input should be greater than 0",
                   "arm 4 (agent.max_iterations=5 toolsets=nosuch): ")
    assert "arm 3 " not in line
    assert not (configured / "experiments").exists() and llm.requests == []
    refused(hermes("ab", "provider.model=a,b"), "-q PROMPT or --tasks FILE.jsonl")
    refused(hermes("ab", "provider.model=[a", "-q", "hi"), "bad override 'provider.model=[a'")
    refused(hermes("ab", "--profiles", "nobody", "-q", "hi"), 'no profile named "nobody"')
    refused(hermes("ab", "show", "nope"), "'nope' is not an experiment")
    refused(hermes("ab", "-q", "hi", "--format", "yaml"), "--format 'yaml'")
    files = write_tasks(tmp_path / "files.jsonl", FILE)
    refused(hermes("ab", "environment=local,docker", "--tasks", str(files)),
            "arm environment=docker: environment docker cannot see task 'file'")
    rubric = write_tasks(tmp_path / "rubric.jsonl", {"id": "r", "prompt": "p",
                                                     "expect": {"rubric": "good"}})
    refused(hermes("ab", "--tasks", str(rubric)), "--judge-model")
    assert not (configured / "experiments").exists() and llm.requests == []


def test_profiles_are_arms_and_keep_writes_memories_back(hermes, configured: Path,
                                                        llm: FakeLLM) -> None:
    work = configured / "profiles" / "work"
    write_fake_provider(work, llm.openai_base_url, model="memo")
    result = hermes("ab", "--profiles", "default,work", "-q", "What is 2+2?")
    eid = experiment_id(ok(result) and result.stderr)
    assert [(r["arm"], r["passed"]) for r in runs(configured, eid)] == [("default", 1),
                                                                        ("work", 1)]
    assert not (work / "memories").exists()  # the memory tool wrote to the scratch copy
    ok(hermes("ab", "--profiles", "work", "-q", "What is 2+2?", "--keep"))
    assert MEMORY_NOTE in (work / "memories" / "MEMORY.md").read_text()


def test_rubrics_are_judged_by_the_judge_model(hermes, configured: Path, llm: FakeLLM,
                                               tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "t.jsonl", {"id": "r", "prompt": "What is 2+2?",
                                               "expect": {"rubric": "Says 4, in words."}})
    result = hermes("ab", "provider.model=good,wrongtool", "--tasks", str(tasks),
                    "--judge-model", "judge")
    eid = experiment_id(ok(result) and result.stderr)
    verdicts = [(r["arm"], r["judge_verdict"], r["judge_reason"], r["passed"])
                for r in runs(configured, eid)]
    assert verdicts == [("provider.model=good", "pass", "judged pass", 1),
                        ("provider.model=wrongtool", "fail", "judged fail", 0)]
    judged = [r for r in llm.requests if r.model == "judge"]
    assert len(judged) == 2 and "Says 4, in words." in (judged[0].last_user_text or "")


def test_budget_stops_starting_runs(hermes, configured: Path, tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "t.jsonl", *({"id": f"t{i}", "prompt": "2+2?"}
                                                for i in range(4)))
    result = hermes("ab", "provider.model=gpt-4o", "--tasks", str(tasks), "--budget",
                    "0.0001")
    ok(result)
    assert "budget reached" in result.stderr
    # gpt-4o at 10 input + 5 output tokens costs $0.000075 a run: the second run crosses it
    eid = experiment_id(result.stderr)
    assert len(runs(configured, eid)) == 2
    assert f"hermes ab resume {eid} --budget MORE" in result.stderr
    more = hermes("ab", "resume", eid, "--budget", "1")
    assert "budget reached" not in ok(more) + more.stderr
    assert len(runs(configured, eid)) == 4


def test_rerun_uses_byte_identical_configs_and_tasks(hermes, configured: Path,
                                                      tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "t.jsonl", SUM)
    first = experiment_id(ok(result := hermes("ab", "provider.model=good,wrongtool",
                                              "--tasks", str(tasks))) and result.stderr)
    (configured / "config.yaml").write_text(  # the profile changes; the rerun must not
        (configured / "config.yaml").read_text().replace("timeout: 10", "timeout: 11"))
    again = hermes("ab", "rerun", first[:15])
    second = experiment_id(ok(again) and again.stderr)
    assert second != first
    base = configured / "experiments"
    for name in ("arms/1.yaml", "arms/2.yaml", "tasks.jsonl"):
        assert (base / first / name).read_bytes() == (base / second / name).read_bytes()
    assert len(runs(configured, second)) == 2
    listed = ok(hermes("ab", "list"))
    assert first in listed and f"rerun of {first}" in listed
    diff = ok(hermes("ab", "diff", first, second))
    assert "arm provider.model=good: config identical" in diff
    assert "provider.model=wrongtool: pass rate 0% → 0%" in diff
    third = experiment_id(ok(result := hermes("ab", "provider.model=good,wrongtool",
                                              "agent.max_iterations=7", "--tasks",
                                              str(tasks))) and result.stderr)
    changed = ok(hermes("ab", "diff", first, third)).splitlines()
    assert "arm provider.model=good: config differs" in changed
    assert "-  max_iterations: 90" in changed and "+  max_iterations: 7" in changed


def _rows_when(root: Path, stderr_file: Path, count: int, timeout: float = 60) -> str:
    """Wait until the running experiment has ``count`` rows; its id."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = stderr_file.read_text()
        if "experiment " in text:
            eid = experiment_id(text)
            try:
                if len(runs(root, eid)) >= count:
                    return eid
            except sqlite3.OperationalError:  # not created yet
                pass
        time.sleep(0.05)
    raise TimeoutError(f"no {count} rows within {timeout}s: {stderr_file.read_text()}")


def test_ctrl_c_then_resume_runs_only_the_missing_cells(environ, hermes, configured: Path,
                                                        llm: FakeLLM, tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    tasks = write_tasks(tmp_path / "t.jsonl", *({"id": f"t{i}", "prompt": "What is 2+2?",
                                                 "expect": {"contains": "4"}}
                                                for i in range(3)))
    stderr = tmp_path / "stderr"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with stderr.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "hermes", "ab",
                                 "provider.model=good,slowish", "--tasks", str(tasks),
                                 "--repeat", "2"], env=environ | {"TMPDIR": str(scratch)},
                                stdout=subprocess.PIPE,
                                stderr=err, text=True)
        eid = _rows_when(configured, stderr, 2)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr.read_text()
    assert f"finish with `hermes ab resume {eid}`" in stderr.read_text()
    before = {r["cell"]: r for r in runs(configured, eid)}
    assert 2 <= len(before) < 12
    assert list(scratch.iterdir()) == []  # interrupted runs' scratch homes are gone
    result = hermes("ab", "resume", eid)
    ok(result)
    after = {r["cell"]: r for r in runs(configured, eid)}
    expected = {f"{arm}/t{i}/{repeat}" for arm in (1, 2) for i in range(3) for repeat in (1, 2)}
    assert set(after) == expected and len(runs(configured, eid)) == 12
    for cell, row in before.items():  # finished cells were not run again
        assert after[cell] == row
    assert all(row["passed"] for row in after.values())
    sessions = sqlite3.connect(configured / "experiments" / eid / "state.db")
    stored = {row[0] for row in sessions.execute("select id from sessions")}
    sessions.close()
    assert {row["session_id"] for row in after.values()} <= stored


def test_a_run_cannot_write_into_the_real_profile(hermes, configured: Path,
                                                  llm: FakeLLM) -> None:
    memory = configured / "memories" / "MEMORY.md"
    before = memory.read_bytes()
    ok(hermes("ab", "provider.model=intruder", "-q", f"overwrite {memory}", "--yolo"))
    assert memory.read_bytes() == before
    (result,) = [r for request in llm.requests for r in request.tool_results]
    assert "Hermes root" in str(result.content) and "memory tool" in str(result.content)
