"""One run (a cell: arm × task × repeat): a scratch home, one session, one turn, scored.

The run's runtime comes from ``open_runtime`` and its session is a ``Conversation``: a
session the model never answered (an unreachable endpoint) is discarded at its end, and
the run's record then names no session."""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes.config.schema import HermesConfig
from hermes.environments.local import LocalEnvironment
from hermes.errors import HermesError
from hermes.experiments.expectations import SHELL_TIMEOUT, Judge, Observed, evaluate
from hermes.experiments.isolation import fingerprint, keep_changes, scratch_copy
from hermes.experiments.results import RunRecord, cell_key
from hermes.experiments.store import Experiment
from hermes.experiments.tasks import Task
from hermes.home import Home

INTERRUPT_GRACE = 30.0
"""Seconds an interrupted turn may take to wind down."""


@dataclass(frozen=True)
class Cell:
    arm_index: int
    task: Task
    repeat: int

    @property
    def key(self) -> str:
        return cell_key(self.arm_index, self.task.id, self.repeat)


@dataclass
class CellEnv:
    """What every run of an experiment shares."""

    experiment: Experiment
    configs: list[HermesConfig]
    sources: list[Home]
    """Each arm's profile home (copied, never written unless ``keep``)."""
    environ: Mapping[str, str]
    judge: Judge | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    """Set on Ctrl-C: running turns are interrupted and their cells left to resume."""
    keep_lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class _Watch:
    """Stream and tool events of one turn: first-token time and tools called."""

    started: float = field(default_factory=time.monotonic)
    first: float | None = None
    total: float = 0.0
    tools: list[str] = field(default_factory=list)

    def token(self, *_: Any) -> None:
        if self.first is None:
            self.first = time.monotonic() - self.started

    def tool(self, call: Any) -> None:
        self.tools.append(call.name)


def run_cell(cell: Cell, env: CellEnv) -> RunRecord | None:
    """Run ``cell`` in isolation; its record, or None if Ctrl-C stopped it first."""
    if env.stop.is_set():
        return None
    # Outside the Hermes root: the run's tools treat the root as another profile's.
    work = Path(tempfile.mkdtemp(prefix=f"hermes-ab-{cell.key.replace('/', '-')}-"))
    try:
        return _run(cell, env, work)
    except HermesError as exc:  # e.g. a sandbox that would not start: this run failed
        return RunRecord(cell=cell.key, arm_index=cell.arm_index,
                         arm=env.experiment.arms[cell.arm_index].name, task=cell.task.id,
                         repeat=cell.repeat, exit_reason="error", passed=False,
                         error=str(exc), started_at=time.time())
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(cell: Cell, env: CellEnv, work: Path) -> RunRecord | None:
    from hermes.container import open_runtime

    source = env.sources[cell.arm_index]
    home = scratch_copy(source, work / "home", env.experiment.transcripts_db)
    cwd = work / "cwd"
    for name, text in cell.task.files.items():
        (cwd / name).parent.mkdir(parents=True, exist_ok=True)
        (cwd / name).write_text(text, encoding="utf-8")
    cwd.mkdir(parents=True, exist_ok=True)
    baseline = fingerprint(home)
    config = _in_directory(env.configs[cell.arm_index], cwd)
    started_at = time.time()
    with contextlib.closing(open_runtime(home, config, env.environ)) as runtime:
        turn, watch, conversation, reason = _turn(runtime, cell.task.prompt, env)
        usage, kept = _end(runtime.container.sessions(), conversation)
    if reason == "stopped":
        return None
    if env.experiment.settings.keep:
        with env.keep_lock:
            keep_changes(home, baseline, source)
    shell = _shell(config, home, cwd, env.environ)
    try:
        record = _record(cell, env, turn, watch, usage, reason, shell, started_at)
    finally:
        shell.stop()
    return record if kept else dataclasses.replace(record, session_id=None)


def _end(sessions: Any, conversation: Any) -> tuple[Any, bool]:
    """End the run's conversation: the session's totals (every call of the turn, priced,
    interrupted ones too) and whether it was kept (a discarded one cost nothing)."""
    before = sessions.get_session(conversation.session_id)
    kept = conversation.end().kept
    return (sessions.get_session(conversation.session_id) if kept else before), kept


def _in_directory(config: HermesConfig, cwd: Path) -> HermesConfig:
    """``config`` working in ``cwd`` (a sandbox's working directory is its own)."""
    if config.environment.kind != "local":
        return config
    environment = config.environment.model_copy(update={"cwd": str(cwd)})
    return config.model_copy(update={"environment": environment})


def _turn(runtime: Any, prompt: str, env: CellEnv) -> tuple[Any, _Watch, Any, str | None]:
    """Run one turn of a new conversation, interrupting it on Ctrl-C (``stopped``) or at
    the time limit (``timeout``); the conversation is left for the caller to end."""
    from hermes.agent.factory import Interaction
    from hermes.agent.loop import AgentEvents
    from hermes.models.types import StreamCallbacks

    watch = _Watch()
    stream = StreamCallbacks(on_text=watch.token, on_reasoning=watch.token,
                             on_tool_call=watch.token)
    how = Interaction(interactive=False, yolo=env.experiment.settings.yolo, stream=True,
                      events=AgentEvents(stream=stream, on_tool_start=watch.tool), source="ab")
    conversation = runtime.container.conversations().open(how)
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["turn"] = conversation.run(prompt)
        finally:
            done.set()

    threading.Thread(target=work, name="ab-turn", daemon=True).start()
    reason = _wait(done, env.stop, env.experiment.settings.timeout, watch.started)
    watch.total = time.monotonic() - watch.started
    if reason is not None:
        conversation.interrupt()
        done.wait(INTERRUPT_GRACE)
    return box.get("turn"), watch, conversation, reason


def _wait(done: threading.Event, stop: threading.Event, timeout: float | None,
          started: float) -> str | None:
    while not done.wait(0.05):
        if stop.is_set():
            return "stopped"
        if timeout is not None and time.monotonic() - started > timeout:
            return "timeout"
    return None


def _record(cell: Cell, env: CellEnv, turn: Any, watch: _Watch, usage: Any,
            reason: str | None, shell: LocalEnvironment, started_at: float) -> RunRecord:
    latency = watch.total
    answer = turn.text if turn is not None else ""
    exit_reason = reason or (turn.exit_reason if turn is not None else "error")
    cost = usage.cost_usd
    checks = evaluate(cell.task, Observed(answer or "", watch.tools, cost, latency, shell),
                      env.judge)
    rubric = checks.get("rubric", {})
    return RunRecord(
        cell=cell.key, arm_index=cell.arm_index, arm=env.experiment.arms[cell.arm_index].name,
        task=cell.task.id, repeat=cell.repeat, exit_reason=exit_reason,
        passed=exit_reason == "completed" and all(c["passed"] for c in checks.values()),
        answer=answer or "", error=_error(turn, reason, env.experiment.settings.timeout),
        latency_first_token=watch.first, latency_total=latency,
        input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
        cached_tokens=usage.cache_read_tokens, cost=cost,
        tool_calls=len(watch.tools), tool_names=watch.tools,
        iterations=turn.iterations if turn is not None else 0, session_id=usage.id,
        checks=checks, judge_verdict=rubric.get("verdict"), judge_reason=rubric.get("reason"),
        started_at=started_at)


def _shell(config: HermesConfig, home: Home, cwd: Path, environ: Mapping[str, str]
           ) -> LocalEnvironment:
    """Where a shell expectation runs: the arm's sandbox, in the run's directory (tasks
    with a shell check are refused for arms that do not run locally)."""
    return LocalEnvironment(home, str(cwd), SHELL_TIMEOUT, dict(environ),
                            config.environment.local.sandbox)


def _error(turn: Any, reason: str | None, timeout: float | None) -> str | None:
    if reason == "timeout":
        return f"timed out after {timeout:g} s (--timeout)"
    return turn.error if turn is not None else "the turn ended without a result"
