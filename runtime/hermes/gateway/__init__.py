"""``hermes gateway run``: the long-running process serving chat platforms, the
OpenAI-compatible API server, webhooks and cron ticks, for one or several profiles.

Layer 3, a front door: may import the container, every service and the foundation;
nothing below imports it. What services share with it lives lower: message sources and
delivery targets in ``hermes.chats``, the log in ``hermes.logs``.
"""
