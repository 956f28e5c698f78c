"""hermes-agent's ``tools.registry``: the JSON strings tool handlers return
(``hermes.tools.results``). Registering tools goes through ``ctx.register_tool``."""

from __future__ import annotations

import json
from typing import Any

from hermes.plugins.compat.names import unsupported
from hermes.tools.results import error, ok

__getattr__ = unsupported("tools.registry")


def tool_error(message: object, **extra: Any) -> str:
    """``{"error": message, ...extra}`` as a JSON string."""
    return error(str(message), **extra)


def tool_result(data: Any = None, **kwargs: Any) -> str:
    """``data`` (or the keyword arguments) as a JSON string."""
    if data is not None:
        return json.dumps(data, ensure_ascii=False, default=str)
    return ok(**kwargs)
