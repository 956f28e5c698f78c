"""MCP in both directions, through the official SDK (``mcp``).

The client side gives the agent the tools of the servers in ``mcp_servers``: ``spec``
turns config into what a connection needs, ``connection`` holds one server open on an
event loop, ``pool`` runs those loops in a thread of the runtime, ``broker`` keeps them
in a process of their own beside the warm server (so one-shots do not restart them),
``tools`` turns a server's listing into tool specs and ``service`` is what the
container wires. The server side, ``hermes mcp serve``, is ``serve`` (the tools an MCP
client gets over this profile) and ``serve_http`` (the bearer-key check). Only modules
that talk MCP import the SDK, and only when a server is configured or served.

The client side is layer 1, a service: imports the foundation (``errors``, ``fsutil``,
``home``, ``credentials``, ``redact``, ``logs``, ``chats``, ``config``, ``sessions``,
``events``, ``models.types``), ``tools`` and ``daemon.wire`` (the warm server's
pid file), never the daemon or the gateway. The serve side (``serve``, ``serve_run``,
``profile_access``) is a front door and may import the container and any service.
"""
