"""Records every hook it is given (the event, its keyword arguments' names, a few
values) in ``trace.jsonl`` in the profile's home; rewrites the terminal tool's results
(``transform_tool_result``). Prints as hermes-agent plugins do."""

from __future__ import annotations

import json
import os
from pathlib import Path

print("trace: imported")

EVENTS = ("pre_api_request", "post_api_request", "api_request_error", "pre_llm_call",
          "post_llm_call", "pre_tool_call", "post_tool_call", "transform_tool_result",
          "on_session_start", "on_session_end", "on_session_finalize", "subagent_start",
          "subagent_stop", "pre_approval_request", "post_approval_response")
KEPT = ("api_call_count", "completed", "interrupted", "model", "choice", "surface",
        "child_goal", "child_status", "child_summary", "tool_name", "reason", "error",
        "response_model", "finish_reason")


def _recorder(log: Path, event: str):
    def hook(**kwargs):
        print(f"trace: {event}")
        kept = {key: kwargs[key] for key in KEPT if key in kwargs}
        with log.open("a") as out:
            out.write(json.dumps({"event": event, "kwargs": sorted(kwargs), **kept},
                                 default=str) + "\n")
        if event == "transform_tool_result" and kwargs["tool_name"] == "terminal":
            return json.dumps({"output": "[traced]"})
        return None

    return hook


def register(ctx) -> None:
    print("trace: registering")
    log = Path(os.fspath(ctx.home.path)) / "trace.jsonl"
    for event in EVENTS:
        ctx.register_hook(event, _recorder(log, event))
    ctx.register_hook("on_pre_compress", lambda **kwargs: None)  # hermes-agent only
