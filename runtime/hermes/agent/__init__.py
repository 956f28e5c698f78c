"""The agent: the loop (``loop``), its prompt, tool dispatch, compression, the one
conversation path every front door uses (``conversations``) and the factory that builds
an agent per session from the container's services (``factory``).

Layer 1, a service: imports the foundation (``errors``, ``fsutil``, ``home``,
``credentials``, ``redact``, ``logs``, ``chats``, ``config``, ``sessions``, ``events``,
``models.types``), ``tools``, ``environments``, ``memory``, ``skills`` and ``models``;
the loop fires its events on the bus of ``hermes.events``. Delegation and the learning
review build on the agent, so the factory receives them by injection
(``AgentDeps.delegate``, ``AgentDeps.learning``) and never imports them.
"""
