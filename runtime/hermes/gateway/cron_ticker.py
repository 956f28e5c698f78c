"""The gateway's side of cron: every ``TICK_EVERY`` seconds each profile's due jobs are
claimed and each runs in a worker thread; answers go out through the profile's running
platforms (a chat platform queues them in its outbox, so one that is reconnecting
delivers them once it is back). Runs are turns of the runtime's one ``Conversations``,
counted there like any turn, so a shutdown waits for them and interrupts them after its
grace period.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hermes.cron.jobs import Job
from hermes.cron.service import CronService
from hermes.gateway.base import PlatformAdapter
from hermes.gateway.delivery import Deliveries

TICK_EVERY = 60.0


class CronTicker:
    """One profile's jobs inside the gateway."""

    def __init__(self, cron: CronService, service: Any,
                 adapters: dict[str, PlatformAdapter], enabled: bool = True):
        self.cron = cron
        self.service = service
        """The profile's ``ProfileService``: turn accounting, draining, the log."""
        self.deliveries = Deliveries()
        self.deliveries.adapters = adapters  # the router's: the platforms running now
        self.enabled = enabled
        self._tasks: set[asyncio.Task[None]] = set()
        self._claiming = False

    async def tick(self) -> None:
        """Claim the due jobs and start them; returns without waiting for them."""
        if not self.enabled or self.service.draining or self._claiming:
            return
        self._claiming = True
        try:
            jobs = await asyncio.to_thread(self.cron.store.claim_due)
        except Exception as exc:  # noqa: BLE001 - a bad jobs file never stops the gateway
            self.service.log.error("cron tick failed", extra={"fields": {"error": str(exc)}})
            return
        finally:
            self._claiming = False
        for job in jobs:
            task = asyncio.create_task(self._run(job, asyncio.get_running_loop()))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self, job: Job, loop: asyncio.AbstractEventLoop) -> None:
        deliver = self.deliveries.blocking(loop)

        def run() -> None:
            self.cron.complete(job, self.cron.execute(job), deliver)  # counted once

        try:
            await asyncio.to_thread(run)
        except Exception as exc:  # noqa: BLE001
            self.service.log.error("cron job failed", extra={"fields": {
                "job": job.id, "error": str(exc)}})

    @property
    def running(self) -> int:
        return sum(1 for task in self._tasks if not task.done())

    async def drain(self) -> None:
        """Wait for the runs under way (a shutdown interrupts them after its grace)."""
        while pending := [task for task in self._tasks if not task.done()]:
            await asyncio.gather(*pending, return_exceptions=True)
