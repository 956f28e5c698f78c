"""Delegation: the agent hands independent work to focused sub-agents.

``delegate_task`` (``tool``) takes one task or a batch; ``run.Delegation`` (one per
session, built by the agent factory) checks the depth, gives each child its tools
(the parent's, narrowed, minus the ones children never get) and runs the batch
(``batch``) with at most ``delegation.max_concurrency`` children at once, stopping
them when the parent is interrupted or a child's time is up. A child is a session of
this runtime (``local``), stored as a child of the parent's session, or an external
agent spoken to over ACP (``acp_child``). Each child's summary, status and cost go
back to the parent (``report``).

Layer 1, a service above ``agent``: imports the foundation (``errors``, ``fsutil``,
``home``, ``credentials``, ``redact``, ``logs``, ``chats``, ``config``, ``sessions``,
``events``, ``models.types``), ``agent``, ``tools``, ``models``. The agent factory
gets ``run.Delegation`` from the container (``AgentDeps.delegate``) and never imports
this package.
"""
