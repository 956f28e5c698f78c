"""Reads its variables at registration, as hermes-agent's platform plugins do."""

from __future__ import annotations

import json


def register(ctx) -> None:
    server = ctx.getenv("RELAY_SERVER")
    if not server:
        raise RuntimeError("RELAY_SERVER is not set")
    ctx.register_tool(
        name="relay_where", toolset="relay",
        schema={"name": "relay_where", "description": "The relay server.",
                "parameters": {"type": "object", "properties": {}}},
        handler=lambda args, **kwargs: json.dumps({"server": server}))
