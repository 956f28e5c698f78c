"""Bundled plugin ``tool-log``: an audit trail of the profile's tool calls.

Each call the agent makes (or a plugin dispatches) appends one JSON object to the
home's ``logs/tools.jsonl`` (0600): when, the session, the tool, how long it took,
whether it failed or a hook blocked it. Arguments and results are left out: they may
hold what the session's redaction does not know to hide.
"""

import json
import os
import time


def register(ctx):
    path = ctx.home.logs_dir / "tools.jsonl"

    def record(tool_name, session_id="", duration_ms=0, is_error=False, blocked=False,
               **kwargs):
        line = json.dumps({"time": round(time.time(), 3), "session": session_id,
                           "tool": tool_name, "duration_ms": duration_ms,
                           "error": bool(is_error), "blocked": bool(blocked)})
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as log:
            log.write(line + "\n")

    ctx.register_hook("post_tool_call", record)
