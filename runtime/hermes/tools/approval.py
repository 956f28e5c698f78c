"""Approval of dangerous commands before the terminal tool runs them.

For a command ``detect_dangers`` flags, in order:

1. a hard-blocked class is refused, always (no mode, yolo or allowlist unlocks it);
2. when every flagged class is approved for this session, or always (the home's
   ``approvals.json``), it runs — approving one class never approves another;
3. ``approvals.mode: off`` (or ``--yolo``) runs it, and so does a docker sandbox
   configured with ``environment.docker.approvals: false``;
4. ``approvals.mode: smart``: a judge model weighs it against the user's request
   and may approve it once; otherwise the manual rules below apply;
5. with nobody to ask (non-interactive, or no callback) it is refused;
6. otherwise the person chooses ``once``, ``session`` (the classes are remembered
   for the session), ``always`` (remembered in the profile) or ``deny``.

Every decision is appended to ``logs/approvals.jsonl`` in the home (command
redacted). Refusals start with ``refused:`` so front ends can show them.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from hermes.fsutil import atomic_write, private_dir
from hermes.tools.context import ApprovalRequest, ToolContext
from hermes.tools.danger import Danger, Whereabouts, detect_dangers

ALLOWLIST_FILE = "approvals.json"
AUDIT_FILE = "approvals.jsonl"
CHOICES = ("once", "session", "always", "deny")
REFUSED = "refused: "


def allowlist_path(home_path: Path) -> Path:
    """The home's file of danger classes approved ``always``."""
    return home_path / ALLOWLIST_FILE


def load_approvals(path: Path) -> dict[str, str]:
    """Classes approved ``always`` -> when (ISO time, or "" if unknown); an unreadable
    file approves nothing."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    entries = data.get("always", []) if isinstance(data, dict) else []
    found: dict[str, str] = {}
    for entry in entries:
        if isinstance(entry, str):
            found[entry] = ""
        elif isinstance(entry, dict) and isinstance(entry.get("key"), str):
            found[entry["key"]] = str(entry.get("approved_at", ""))
    return found


def load_allowlist(path: Path) -> set[str]:
    """The classes approved ``always``."""
    return set(load_approvals(path))


def save_approvals(path: Path, approvals: dict[str, str]) -> None:
    """Write the allowlist: atomic, mode 0600."""
    entries = [{"key": key, "approved_at": when} for key, when in sorted(approvals.items())]
    atomic_write(path, json.dumps({"always": entries}, indent=2) + "\n", mode=0o600)


def remember_always(path: Path, keys: list[str]) -> None:
    """Add ``keys`` to the allowlist, stamped with the time."""
    now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    save_approvals(path, load_approvals(path) | {key: now for key in keys})


def refusal_of(content: str) -> str | None:
    """The refusal in a tool result (``{"error": "refused: ..."}``), if it is one."""
    try:
        data = json.loads(content)
    except ValueError:
        return None
    message = data.get("error") if isinstance(data, dict) else None
    return message[len(REFUSED):] if isinstance(message, str) and \
        message.startswith(REFUSED) else None


def check_command(command: str, ctx: ToolContext) -> str | None:
    """None if ``command`` may run now, else why not (for the model, ``refused: ...``)."""
    where = Whereabouts(ctx.cwd, ctx.user_home, ctx.home.root, ctx.home.path)
    dangers = detect_dangers(command, where)
    if not dangers:
        return None
    return check_request(ApprovalRequest(ctx.redact(command), tuple(dangers)), ctx)


def check_request(request: ApprovalRequest, ctx: ToolContext, *, what: str = "command",
                  sandboxed: bool = True) -> str | None:
    """None if the action ``request`` describes may go ahead, else why not (``refused:
    ...``): the rules above, asked and recorded the same way. ``what`` names the action in
    refusals; ``sandboxed=False``: a sandbox without approvals does not let it through (a
    message leaves any sandbox)."""
    decision, by, why = _decide(request, ctx, what, sandboxed)
    _audit(ctx, request, decision, by, why)
    return None if decision == "ran" else REFUSED + why


def _decide(request: ApprovalRequest, ctx: ToolContext, what: str = "command",
            sandboxed: bool = True) -> tuple[str, str, str]:
    """``(ran | refused, who decided, the reason)``."""
    hard = [d for d in request.dangers if d.hard]
    if hard:
        return "refused", "blocklist", (f"blocked command ({_reasons(hard)}); it can never "
                                        "be approved, do not try to work around this")
    approved = ctx.state.approved_patterns | load_allowlist(allowlist_path(ctx.home.path))
    pending = [d for d in request.dangers if d.key not in approved]
    if not pending:
        return "ran", "approved class", ", ".join(d.key for d in request.dangers)
    if ctx.yolo or ctx.approval_mode == "off":
        return "ran", "yolo" if ctx.yolo else "mode off", _reasons(pending)
    if sandboxed and not ctx.environment.approvals_required:
        return "ran", "sandbox", _reasons(pending)
    note = ""
    if ctx.approval_mode == "smart" and ctx.judge is not None:
        fields = _observed(request, pending, ctx, "smart")
        verdict = ctx.judge(request, ctx.state.user_request)
        ctx.observe("post_approval_response", **fields, decided_by="aux_llm",
                    choice="smart_approve" if verdict.approve else "smart_deny")
        if verdict.approve:
            return "ran", "judge", verdict.reason
        note = f"; the approval judge declined: {verdict.reason}"
    if not ctx.interactive or ctx.approve is None:
        return "refused", "nobody to ask", (
            f"this {what} needs the user's approval ({_reasons(pending)}) and nobody can "
            f"approve it in this non-interactive run{note}; find a safer way or ask the user "
            "to run it")
    return _ask(request, pending, ctx, what)


def _ask(request: ApprovalRequest, pending: list[Danger], ctx: ToolContext,
         what: str) -> tuple[str, str, str]:
    assert ctx.approve is not None
    fields = _observed(request, pending, ctx, "gateway" if ctx.origin else "cli")
    choice = ctx.approve(request, ctx.cancelled)
    ctx.observe("post_approval_response", **fields,
                choice=choice if choice in CHOICES else "deny")
    keys = [d.key for d in pending]
    if choice == "session":
        ctx.state.approved_patterns.update(keys)
    elif choice == "always":
        remember_always(allowlist_path(ctx.home.path), keys)
    elif choice != "once":  # "deny", a cancelled prompt, anything unexpected
        return "refused", "user", (f"the user denied this {what} ({_reasons(pending)}); do "
                                   "not retry it or work around it")
    return "ran", f"user ({choice})", _reasons(pending)


def _observed(request: ApprovalRequest, pending: list[Danger], ctx: ToolContext,
              surface: str) -> dict[str, Any]:
    """Fire ``pre_approval_request`` (hermes-agent's fields); the fields, for the answer."""
    fields = {"command": request.command, "description": _reasons(pending),
              "pattern_key": pending[0].key, "pattern_keys": [d.key for d in pending],
              "session_key": ctx.session_id, "surface": surface}
    ctx.observe("pre_approval_request", **fields)
    return fields


def _reasons(dangers: list[Danger]) -> str:
    return "; ".join(d.reason for d in dangers)


def _audit(ctx: ToolContext, request: ApprovalRequest, decision: str, by: str, why: str) -> None:
    """Append one line to ``logs/approvals.jsonl`` (0600); logging never blocks a tool."""
    record = {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "session": ctx.session_id,
              "mode": "yolo" if ctx.yolo else ctx.approval_mode, "decision": decision,
              "by": by, "classes": [d.key for d in request.dangers],
              "command": request.command, "reason": ctx.redact(why)}
    path = ctx.home.path / "logs" / AUDIT_FILE
    try:
        private_dir(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    except OSError:
        pass
