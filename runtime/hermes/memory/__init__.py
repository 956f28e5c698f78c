"""Memory: what the agent remembers across sessions (config group ``memory``).

- ``base``: ``MemoryProvider`` (the service interface; the ``none`` backend) and
  ``ExternalProvider`` (one external backend run alongside it);
- ``builtin``: backend ``builtin`` (MEMORY.md, USER.md and the ``memory`` tool);
- ``service``: ``MemoryService`` (files + providers), ``no_memory`` (backend ``none``);
- ``store`` / ``edits`` / ``tool``: the memory files, their edits and the tool;
- ``fanout``: concurrent, time-boxed prefetch across providers, recall fences;
- ``factstore`` / ``facttools``: provider ``factstore`` (SQLite + FTS5) and its tools;
- ``scan``: ``scan_text``, the threat scan of anything headed for a prompt.

Layer 1, a service: imports the foundation (``errors``, ``fsutil``, ``home``,
``credentials``, ``redact``, ``logs``, ``chats``, ``config``, ``sessions``,
``events``, ``models.types``) and ``tools`` (its tools are tool specs); subscribes
to the event bus (``events``), never the agent loop.
"""
