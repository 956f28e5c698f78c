"""The tool layer: declared tools, toolsets, safety checks, and dispatch.

Public API for the agent loop:

- ``registry.build_tool_registry(enabled, disabled_tools, ...) -> ToolRegistry``;
  ``ToolRegistry.schemas()`` for the model, ``ToolRegistry.dispatch(name,
  raw_arguments, ctx) -> ToolResult`` for each tool call;
- ``context.ToolContext`` (one per session, ``ToolContext.for_session(...)``);
- ``hermes.redact.build_redactor(env_file, environ)`` for logs and transcripts.

Layout: ``base`` (ToolSpec, ToolResult), ``toolsets`` (includes), ``arguments``
(repair of model JSON), ``schema`` (validation), ``results`` (JSON helpers,
capping and spill files); safety in ``danger``/``commands`` (dangerous
commands), ``approval`` (the approval flow) and ``paths`` (where writes may go;
secrets are hidden by ``hermes.redact``); one module per toolset: ``file`` +
``search``, ``terminal``, ``process`` (with ``processes``, the job table), ``todo``,
``clarify``; ``core`` lists the built-ins.

Layer 1, a service: imports the foundation (``errors``, ``fsutil``, ``home``,
``credentials``, ``redact``, ``logs``, ``chats``, ``config``, ``sessions``,
``events``, ``models.types``), ``environments`` and ``sessions``; never ``agent``,
the container or a front door.
"""
