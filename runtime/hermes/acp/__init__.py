"""``hermes acp``: the Agent Client Protocol front door, for editors (Zed, JetBrains, ...).

An editor starts ``hermes acp`` and speaks ACP (JSON-RPC over stdin/stdout) with it
through the official SDK (``agent-client-protocol``). Each ACP session is one of our
sessions: ``server`` answers the protocol's requests, ``session`` runs a turn and turns
the agent's events into ACP updates (``updates``, sent in order by ``channel``),
``permission`` asks the editor about dangerous commands and ``files`` reads and writes
through the editor, so its unsaved buffers are what the agent sees. Only ``hermes acp``
imports this package (and with it the SDK).

Layer 3, a front door: may import the container, every service and the foundation;
nothing below imports it.
"""
