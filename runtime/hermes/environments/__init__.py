"""Execution environments of the agent's commands (config group ``environment``): ``local``
(OS-confined by ``sandbox``), ``docker`` and ``ssh``, with their file access.

Layer 1, a service: imports the foundation (``errors``, ``fsutil``, ``home``,
``credentials``, ``redact``, ``logs``, ``chats``, ``config``, ``sessions``,
``events``, ``models.types``) only.
"""
