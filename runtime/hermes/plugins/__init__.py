"""Plugins: discovery, install, the host that loads enabled plugins, their hooks on the
event bus, slash commands, CLI commands and provider factories.

Layer 1, a service: imports the foundation (``errors``, ``fsutil``, ``home``,
``credentials``, ``redact``, ``logs``, ``chats``, ``config``, ``sessions``,
``events``, ``models.types``) and the services plugins extend (``tools``,
``skills``, ``models``, ``agent``); never the CLI or the gateway (the command names it
checks come from ``cli_names`` and the slash-command table in ``agent``).
"""
