"""``ToolContext``: everything a tool handler gets besides its arguments.

The agent loop builds one context per session and passes it to every
``ToolRegistry.dispatch`` of that session; per-session state (approved danger
patterns, the todo list) lives on it. It is a plain dataclass: services are
handed in, nothing here knows about the container.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hermes.environments.base import Environment
from hermes.environments.files import Files
from hermes.home import Home
from hermes.redact import build_redactor, no_redaction
from hermes.tools.danger import DANGER_CLASSES, Danger
from hermes.tools.processes import ProcessTable

if TYPE_CHECKING:
    from hermes.chats import MessageSource

ApprovalChoice = Literal["once", "session", "always", "deny"]
ApprovalMode = Literal["manual", "smart", "off"]


@dataclass(frozen=True)
class ApprovalRequest:
    """A flagged command, as the person (or the judge) is asked about it."""

    command: str
    """The whole command, secrets redacted."""
    dangers: tuple[Danger, ...]
    """What was found, one per danger class."""
    requester: str | None = None
    """Who wants to run it when it is not the session's own agent: a sub-agent
    (``sub-agent 2 ("find the bug")``), for the person to see who asks."""

    @property
    def reason(self) -> str:
        return "; ".join(danger.reason for danger in self.dangers)

    @property
    def keys(self) -> list[str]:
        return [danger.key for danger in self.dangers]

    @property
    def scope(self) -> str:
        """What approving for the session, or always, lets run from then on."""
        return "; ".join(DANGER_CLASSES.get(key, key) for key in self.keys)


@dataclass(frozen=True)
class JudgeVerdict:
    approve: bool
    reason: str


Cancelled = Callable[[], bool]
"""True once the user interrupted the turn: a pending question must end at once."""
ApprovalCallback = Callable[[ApprovalRequest, Cancelled], ApprovalChoice]
"""``approve(request, cancelled) -> "once" | "session" | "always" | "deny"``; a question
cancelled by an interrupt answers ``deny``."""
ApprovalJudge = Callable[[ApprovalRequest, str], JudgeVerdict]
"""``judge(request, the user's request) -> verdict`` (``approvals.mode: smart``)."""
ClarifyCallback = Callable[[str, list[str] | None, Cancelled], str]
"""``clarify(question, choices_or_None, cancelled) -> the user's answer``."""
TodoStatus = Literal["pending", "in_progress", "completed"]


@dataclass
class TodoItem:
    """One entry of the session's todo list."""

    id: str
    content: str
    status: TodoStatus = "pending"


@dataclass
class SessionState:
    """What tools remember between calls within one session."""

    approved_patterns: set[str] = field(default_factory=set)
    """Danger class keys the user approved for the rest of the session."""
    user_request: str = ""
    """The user's message of the current turn (what a judge weighs commands against)."""
    todos: list[TodoItem] = field(default_factory=list)
    """The session's todo list, in order."""
    environment_noticed: bool = False
    """Whether the environment's notice (``Environment.notice``) was given already."""


@dataclass
class ToolContext:
    """What every tool handler receives as ``ctx``."""

    home: Home
    """The profile's home (paths of config, secrets, allowlists)."""
    environment: Environment
    """Where commands run (local, docker, ssh)."""
    cwd: Path
    """Relative paths in file tools resolve against this directory."""
    session_id: str
    """The session the tool calls belong to."""
    spill_dir: Path | None = None
    """Where oversized results and background-process logs are written."""
    approve: ApprovalCallback | None = None
    """Asks the user about a dangerous command; None when nobody can be asked."""
    clarify: ClarifyCallback | None = None
    """Asks the user a question; None in non-interactive runs."""
    interactive: bool = False
    """True in an interactive chat, where a person can answer prompts."""
    yolo: bool = False
    """Run dangerous commands without asking (the hard blocklist still applies)."""
    approval_mode: ApprovalMode = "manual"
    """``approvals.mode``: manual, smart (a judge may approve once) or off."""
    judge: ApprovalJudge | None = None
    """Judges flagged commands in ``smart`` mode; None when there is none."""
    redact: Callable[[str], str] = no_redaction
    """Scrubs secrets from every result before the model sees it."""
    user_home: Path = field(default_factory=Path.home)
    """The OS user's home, whose credential files write tools refuse to touch."""
    max_result_chars: int = 50_000
    """Default cap of one tool result (``agent.tool_result_max_chars``)."""
    cancelled: Callable[[], bool] = lambda: False
    """True once the user interrupted the turn: long-running tools stop."""
    observe: Callable[..., Any] = lambda event, **fields: []
    """Tells the session's observers (its event bus's ``emit``) what a tool saw: an
    approval asked and answered, a sub-agent started and stopped."""
    state: SessionState = field(default_factory=SessionState)
    """Per-session memory of the tools."""
    processes: ProcessTable = field(default_factory=ProcessTable)
    """Background jobs; pass the runtime's table to share it across sessions."""
    origin: MessageSource | None = None
    """The chat the session talks to (gateway platforms); None elsewhere."""
    files: Files | None = None
    """File access for the file tools in place of the environment's: an editor's over
    ACP, which sees its unsaved buffers. None: the environment's."""
    delegate: Callable[[dict[str, Any], ToolContext], str] | None = None
    """Runs ``delegate_task``'s arguments as sub-agents of this session and returns the
    result for the model; None where no agent session runs the tools."""

    @classmethod
    def for_session(cls, home: Home, environment: Environment, session_id: str, *,
                    environ: Mapping[str, str], cwd: Path | None = None,
                    environment_files: Sequence[str] = (), scratch_of: str | None = None,
                    **options: Any) -> ToolContext:
        """A context with the home's redactor, spill dir and user home filled in;
        ``options`` sets any other field (``approve``, ``interactive``, ...).
        ``environment_files`` (``secrets.environment_files``) are redacted too.

        ``cwd`` defaults to the environment's working directory, else the process's.
        ``scratch_of``: the session whose /tmp its tools share (a sub-agent's parent);
        by default its own.
        """
        # Only a local environment's cwd is a path on this machine.
        env_cwd = getattr(environment, "cwd", None) if environment.kind == "local" else None
        spill_dir = home.path / "tool_results" / re.sub(r"[^\w.-]", "_", session_id)
        environment.attach(session_id)
        context = cls(
            home=home, environment=environment.session(scratch_of or session_id, spill_dir),
            session_id=session_id, cwd=cwd or (Path(env_cwd) if env_cwd else Path.cwd()),
            spill_dir=spill_dir,
            redact=build_redactor(home.env_file, environ, environment_files),
            user_home=Path(environ["HOME"]) if environ.get("HOME") else Path.home(),
        )
        return replace(context, **options)
