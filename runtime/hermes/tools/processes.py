"""Background processes started by the ``terminal`` tool, managed by ``process``.

A ``ProcessTable`` belongs to one runtime's tool context (never a module
global), so two runtimes in one process never see each other's jobs. Close it
when the runtime stops; that kills whatever is still running.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from hermes.environments.base import BackgroundProcess, Environment
from hermes.errors import ToolError, did_you_mean, one_of


@dataclass
class Job:
    """One background process and what the model has already seen of its output."""

    id: str
    command: str
    process: BackgroundProcess
    started: float = field(default_factory=time.time)
    read_offset: int = 0
    """Bytes of the log already returned by ``poll``."""
    ended: float | None = None
    """When the job was first seen to have exited."""

    def status(self) -> str:
        code = self.process.poll()
        return "running" if code is None else f"exited {code}"

    def output(self, start: int = 0) -> str:
        """The log from byte ``start`` on."""
        try:
            with open(self.process.log_path, "rb") as log:
                log.seek(start)
                return log.read().decode(errors="replace")
        except FileNotFoundError:
            return ""

    def new_output(self) -> str:
        """Output written since the previous call."""
        try:
            size = self.process.log_path.stat().st_size
        except FileNotFoundError:
            return ""
        text = self.output(self.read_offset)
        self.read_offset = size
        return text

    def describe(self) -> dict[str, object]:
        code = self.process.poll()
        if code is not None and self.ended is None:
            self.ended = time.time()
        return {"id": self.id, "command": self.command, "pid": self.process.pid,
                "status": self.status(), "exit_code": code,
                "running_seconds": round((self.ended or time.time()) - self.started, 1)}


class ProcessTable:
    """The background jobs of one runtime."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._counter = 0

    def start(self, environment: Environment, command: str, log_dir: Path) -> Job:
        """Spawn ``command`` in ``environment`` with its output logged under ``log_dir``."""
        self._counter += 1
        job_id = f"proc_{self._counter}"
        process = environment.spawn(command, log_path=log_dir / f"{job_id}.log")
        job = Job(job_id, command, process)
        self._jobs[job_id] = job
        return job

    def get(self, job_id: str) -> Job:
        job = self._jobs.get(job_id)
        if job is None:
            raise ToolError(f'no background process "{job_id}"{did_you_mean(job_id, self._jobs)};'
                            f" known: {one_of(self._jobs)}")
        return job

    def jobs(self) -> list[Job]:
        return list(self._jobs.values())

    def close(self) -> None:
        """Kill every job still running."""
        for job in self._jobs.values():
            job.process.kill()
