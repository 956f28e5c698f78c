"""The model layer (config group ``provider``): the litellm client, API modes, fallback,
caching and cost; ``warm`` loads ahead what a first call would load.

Layer 1, a service: imports the foundation (``errors``, ``fsutil``, ``home``,
``credentials``, ``redact``, ``logs``, ``chats``, ``config``, ``sessions``,
``events``, ``models.types``) only. ``types`` holds plain values (``Usage``, ...)
and is a foundation leaf the session store imports too.
"""
