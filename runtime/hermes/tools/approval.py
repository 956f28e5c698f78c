"""Approval of dangerous commands before the terminal tool runs them.

Order of decisions for a command ``detect_danger`` flags:

1. hard-blocked patterns are refused, always (no yolo, no allowlist);
2. a pattern approved for this session, or always (``approvals.json`` in the
   home), runs;
3. ``yolo`` runs it;
4. with nobody to ask (non-interactive, or no callback) it is refused;
5. otherwise the approval callback decides: ``once``, ``session`` (remembered
   in the context's session state), ``always`` (persisted) or ``deny``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes.fsutil import atomic_write
from hermes.tools.danger import Danger, detect_danger

if TYPE_CHECKING:
    from hermes.tools.context import ToolContext

ALLOWLIST_FILE = "approvals.json"
CHOICES = ("once", "session", "always", "deny")


def allowlist_path(home_path: Path) -> Path:
    """The home's file of patterns approved ``always``."""
    return home_path / ALLOWLIST_FILE


def load_allowlist(path: Path) -> set[str]:
    """Pattern keys approved ``always``; an unreadable file approves nothing."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    patterns = data.get("always", []) if isinstance(data, dict) else []
    return {key for key in patterns if isinstance(key, str)}


def remember_always(path: Path, key: str) -> None:
    """Add ``key`` to the allowlist: atomic write, mode 0600."""
    patterns = load_allowlist(path) | {key}
    text = json.dumps({"always": sorted(patterns)}, indent=2) + "\n"
    atomic_write(path, text, mode=0o600)


def check_command(command: str, ctx: ToolContext) -> str | None:
    """None if ``command`` may run now, else the reason it may not (for the model)."""
    danger = detect_danger(command)
    if danger is None:
        return None
    if danger.hard:
        return (f"refused: blocked command ({danger.reason}); it can never be approved, "
                "do not try to work around this")
    allowlist = allowlist_path(ctx.home.path)
    if danger.key in ctx.state.approved_patterns or danger.key in load_allowlist(allowlist):
        return None
    if ctx.yolo:
        return None
    if not ctx.interactive or ctx.approve is None:
        return (f"refused: this command needs the user's approval ({danger.reason}) and "
                "nobody can approve it in this non-interactive run; find a safer way or "
                "ask the user to run it")
    return _ask(command, danger, ctx, allowlist)


def _ask(command: str, danger: Danger, ctx: ToolContext, allowlist: Path) -> str | None:
    assert ctx.approve is not None
    choice = ctx.approve(command, danger.reason)
    if choice == "session":
        ctx.state.approved_patterns.add(danger.key)
    elif choice == "always":
        remember_always(allowlist, danger.key)
    elif choice != "once":  # "deny" and anything unexpected
        return f"the user denied this command ({danger.reason}); do not retry it"
    return None
