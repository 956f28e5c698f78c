"""Running a batch of children: at most ``limit`` at once, each within its time, all of
them stopped when the parent is interrupted.

The calling thread (the parent's tool call) watches while pool threads run the
children: every ``POLL`` seconds it interrupts the running children once the parent
is cancelled, and a child whose time is up. It repeats the interrupt on every pass,
so a child that was just starting its turn when the first one came is stopped too.
Tasks not yet started when the parent is cancelled never start.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait

from hermes.delegation.report import ChildReport, crashed, not_started
from hermes.delegation.tasks import ChildTask

POLL = 0.05


class Child(ABC):
    """One sub-agent of a batch: runs its task once, and can be stopped from outside."""

    def __init__(self, task: ChildTask):
        self.task = task
        self.timed_out = False

    @abstractmethod
    def run(self) -> ChildReport:
        """Work on the task until it ends; never called twice."""

    @abstractmethod
    def interrupt(self) -> None:
        """Stop the work (from another thread); ``run`` then returns soon."""

    def time_out(self) -> None:
        self.timed_out = True
        self.interrupt()


class Batch:
    """Runs ``children`` and returns their reports in task order."""

    def __init__(self, children: Sequence[Child], *, limit: int, timeout: float,
                 cancelled: Callable[[], bool]):
        self.children = children
        self.limit = limit
        self.timeout = timeout
        self.cancelled = cancelled
        self._lock = threading.Lock()
        self._started: dict[int, float] = {}
        """Running children by index: when each started (monotonic)."""
        self._stopped = False

    def run(self) -> list[ChildReport]:
        with ThreadPoolExecutor(max_workers=self.limit, thread_name_prefix="sub-agent") as pool:
            futures = [pool.submit(self._work, i) for i in range(len(self.children))]
            while not all(future.done() for future in futures):
                wait(futures, timeout=POLL)
                self._watch()
        return [future.result() for future in futures]

    def _work(self, index: int) -> ChildReport:
        child = self.children[index]
        with self._lock:
            if self._stopped:
                return not_started(child.task)
            started = self._started[index] = time.monotonic()
        try:
            return child.run()
        except Exception as exc:  # a child that breaks is reported, never the whole batch
            return crashed(child.task, exc, time.monotonic() - started)
        finally:
            with self._lock:
                self._started.pop(index, None)

    def _watch(self) -> None:
        stop = self.cancelled()
        now = time.monotonic()
        with self._lock:
            self._stopped = self._stopped or stop
            running = [(self.children[i], started) for i, started in self._started.items()]
        for child, started in running:
            if stop:
                child.interrupt()
            elif now - started > self.timeout:
                child.time_out()
