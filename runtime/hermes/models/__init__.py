"""The model layer (config group ``provider``): the client (``litellm_client``: API
modes, retries, fallback, caching and cost), which sends plain chat completions at an
OpenAI-compatible endpoint of the user's own directly (``openai_wire``) and everything
else through litellm; ``model_data`` reads litellm's bundled prices and windows without
importing it; ``warm`` and ``first_call`` load ahead what a first call would load.

Layer 1, a service: imports the foundation (``errors``, ``fsutil``, ``home``,
``credentials``, ``redact``, ``logs``, ``chats``, ``config``, ``sessions``,
``events``, ``models.types``) only. ``types`` holds plain values (``Usage``, ...)
and is a foundation leaf the session store imports too.
"""
