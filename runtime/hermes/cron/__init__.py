"""Scheduled jobs: prompts the agent runs on a schedule, each in a fresh session.

- ``schedule``: ``30m``/``2h``/``1d`` (once), ``every 2h``, cron expressions, ISO times;
- ``store``: ``cron/jobs.json`` under a file lock; claiming due jobs there is what keeps
  two gateways (or a gateway and ``hermes cron tick``) from running a job twice;
- ``manage``: checked changes (``hermes cron``, the ``cronjob`` tool in ``tools``);
- ``run`` and ``service``: one run (fresh session, no cron tool, the job's skills),
  its output under ``cron/output/<job>/``, its delivery (``targets``) and record.

Layer 1, a service: imports the foundation (``errors``, ``fsutil``, ``home``,
``credentials``, ``redact``, ``logs``, ``chats``, ``config``, ``sessions``,
``events``, ``models.types``), ``agent``, ``tools``, ``memory``, ``skills``. The
gateway's side of cron (ticks, delivery through a platform) is ``gateway.cron_ticker``
and ``gateway.cron_send``.
"""
