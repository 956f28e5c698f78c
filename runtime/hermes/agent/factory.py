"""The agent factory: builds an ``Agent`` for a new or resumed session from a runtime."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hermes.agent.approval_judge import ModelJudge
from hermes.agent.compress import Compressor
from hermes.agent.context_files import working_directory
from hermes.agent.loop import Agent, AgentEvents
from hermes.agent.prompt import PromptInputs, build_system_prompt
from hermes.agent.tokens import estimate_json
from hermes.config.delegation_schema import DelegationConfig
from hermes.config.schema import AgentConfig, ApprovalsConfig, VisionConfig
from hermes.environments.base import Environment
from hermes.environments.files import Files
from hermes.events import HookBus
from hermes.home import Home
from hermes.identities import address_of
from hermes.memory.base import MemoryProvider
from hermes.models.base import ModelClient
from hermes.sessions.store import SessionStore
from hermes.skills.index import skills_inputs
from hermes.skills.store import SkillsStore
from hermes.tools.context import ApprovalCallback, ClarifyCallback, ToolContext
from hermes.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from hermes.chats import MessageSource

MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id")
"""Message fields restored on resume (plus a tool result's ``name``, stored as ``tool_name``)."""


class Learning(Protocol):
    """The learning review as the factory sees it (``hermes.learning.service``)."""

    def watch(self, bus: HookBus, messages: Iterable[Mapping[str, Any]]) -> None: ...


Delegate = Callable[["AgentFactory", "Interaction", ToolRegistry],
                    Callable[[dict[str, Any], ToolContext], str]]
"""Makes the ``delegate_task`` runner of one session from its factory, interaction and
tools."""


@dataclass(frozen=True)
class AgentDeps:
    """Everything one agent uses; built by the container, never by the agent."""

    home: Home
    environ: Mapping[str, str]
    settings: AgentConfig
    model: ModelClient
    tools: ToolRegistry
    environment: Environment
    memory: MemoryProvider
    sessions: SessionStore
    hooks: HookBus
    """The runtime's event bus (plugins' and shell hooks' callbacks); each session
    subscribes its own observers (memory, learning, the UI) on a scope of it."""
    skills: SkillsStore
    summariser: ModelClient
    """Writes context-compression summaries (the main model unless configured)."""
    approvals: ApprovalsConfig = field(default_factory=ApprovalsConfig)
    """How dangerous commands are approved (``approvals.mode``)."""
    judge: ModelClient | None = None
    """Judges flagged commands in ``smart`` mode (the main model unless configured)."""
    learning: Learning | None = None
    """Starts background reviews when a session's nudge interval is reached."""
    environment_files: Sequence[str] = ()
    """``secrets.environment_files``: secrets the tools' redactor must know too."""
    plugins: Any = None
    """The runtime's ``PluginHost``: plugins' slash commands run through it."""
    delegation: DelegationConfig = field(default_factory=DelegationConfig)
    """How sessions hand work to sub-agents (``delegate_task``)."""
    delegate: Delegate | None = None
    """Makes a session's ``delegate_task`` runner (``hermes.delegation.run.Delegation``,
    given by the container: delegation builds on the agent, not the other way)."""
    vision: VisionConfig = field(default_factory=VisionConfig)
    """Images in: limits, and the model that describes images (``vision.*``)."""


@dataclass(frozen=True)
class Interaction:
    """How the agent reaches the person: approvals, questions, output."""

    interactive: bool = False
    yolo: bool = False
    approve: ApprovalCallback | None = None
    clarify: ClarifyCallback | None = None
    stream: bool = True
    events: AgentEvents | None = None
    source: str = "cli"
    toolsets: tuple[str, ...] | None = None
    """Only these toolsets (within the profile's) for the session's turns, e.g. a webhook
    route's; None: all the profile's."""
    without: tuple[str, ...] = ()
    """Toolsets the session never gets, e.g. a cron run's ``cron`` (a job cannot schedule
    jobs)."""
    origin: MessageSource | None = None
    """The chat the session talks to, for tools that answer there later (``cronjob``)."""
    cwd: str | None = None
    """The session's own working directory (an editor's project over ACP): context files
    are found there, relative paths start there and, in a local environment, commands
    run there. None: the environment's."""
    files: Files | None = None
    """File access for the file tools in place of the environment's (an editor's, which
    sees unsaved buffers); None: the environment's."""
    depth: int = 0
    """Where the session is in a delegation tree: 0 for the user's own, 1 for a sub-agent
    it started, and so on (``delegation.max_depth`` bounds it)."""


def speaker(origin: MessageSource | None) -> str | None:
    """The address of the one person a direct chat talks to (``identities``); None for
    groups and where no chat is (their sessions belong to no one person)."""
    if origin is None or origin.chat_type != "direct":
        return None
    return address_of(origin.platform, origin.user_id)


class AgentFactory:
    def __init__(self, deps: AgentDeps):
        self.deps = deps

    def new_session(self, how: Interaction, *, session_id: str | None = None,
                    history: Sequence[dict[str, Any]] = (),
                    instructions: str | None = None) -> Agent:
        """A new session. ``history`` (earlier user/assistant messages, e.g. an API
        client's) is stored as the session's first messages; ``instructions`` (a
        client's system message) are layered under the agent's own system prompt."""
        d = self.deps
        session_id = session_id or uuid.uuid4().hex
        prompt = self.system_prompt(session_id, how.source, self.tools(how), cwd=how.cwd)
        if instructions:
            prompt += f"\n\n## Instructions from the client application\n\n{instructions}"
        d.sessions.create_session(how.source, d.model.model, system_prompt=prompt,
                                  session_id=session_id, user=speaker(how.origin))
        d.hooks.emit("on_session_start", session_id=session_id, model=d.model.model,
                     platform=how.source)
        if history:
            d.sessions.add_messages(session_id, history)
        return self._agent(session_id, [{"role": "system", "content": prompt}, *history], how)

    def tools(self, how: Interaction) -> ToolRegistry:
        """The tools a session gets: the profile's, restricted by ``how.toolsets``."""
        tools = self.deps.tools
        tools = tools if how.toolsets is None else tools.restricted(how.toolsets)
        return tools.without(how.without) if how.without else tools

    def system_prompt(self, session_id: str, platform: str,
                      tools: ToolRegistry | None = None, cwd: str | None = None) -> str:
        """A new session's system prompt, built once and stored with the session."""
        d = self.deps
        tools = tools or d.tools
        environment = self.environment(cwd)
        environment_cwd = getattr(environment, "cwd", None)
        return build_system_prompt(PromptInputs(
            home=d.home, memory=d.memory, **skills_inputs(d.skills, tools),
            cwd=working_directory(environment.kind, environment_cwd), session_id=session_id,
            has_tools=bool(tools.names()), personality=d.settings.personality,
            platform=platform))

    def resume(self, session_id: str, how: Interaction) -> Agent:
        """Continue a stored session with its stored system prompt, verbatim."""
        d = self.deps
        session = d.sessions.get_session(session_id)
        messages: list[dict[str, Any]] = [{"role": "system",
                                           "content": session.system_prompt or ""}]
        for row in d.sessions.messages(session.id):
            message = {k: row[k] for k in MESSAGE_KEYS if row.get(k) is not None}
            message["content"] = d.sessions.images.content(row.get("content"),
                                                           row.get("images") or [])
            if row.get("role") == "tool" and row.get("tool_name"):
                message["name"] = row["tool_name"]
            messages.append(message)
        return self._agent(session.id, messages, how)

    def new_child(self, how: Interaction, tools: ToolRegistry, *, parent_id: str,
                  prompt: str, max_iterations: int) -> Agent:
        """A sub-agent's session (``delegate_task``), stored as a child of ``parent_id``:
        ``prompt`` is its whole system prompt and ``tools`` its tools. It gets no memory
        hooks and no learning review: a sub-agent has no persona, memories or history."""
        d = self.deps
        session_id = d.sessions.create_session(how.source, d.model.model, parent_id,
                                               system_prompt=prompt)
        d.hooks.emit("on_session_start", session_id=session_id, model=d.model.model,
                     platform=how.source)
        agent = self._agent(session_id, [{"role": "system", "content": prompt}], how,
                            tools=tools, child=True, scratch_of=parent_id)
        agent.max_iterations = max_iterations
        return agent

    def environment(self, cwd: str | None) -> Environment:
        """The runtime's environment, starting commands in ``cwd`` when given."""
        environment = self.deps.environment
        return environment.at(Path(cwd)) if cwd else environment

    def latest_session_id(self, source: str | None = None) -> str | None:
        sessions = self.deps.sessions.list_sessions(source=source, limit=1)
        return sessions[0].id if sessions else None

    def _agent(self, session_id: str, messages: list[dict[str, Any]], how: Interaction,
               tools: ToolRegistry | None = None, child: bool = False,
               scratch_of: str | None = None) -> Agent:
        """``scratch_of``: the session whose /tmp the tools see (a sub-agent shares its
        parent's, so files handed over there are found)."""
        d = self.deps
        tools = self.tools(how) if tools is None else tools
        judge = ModelJudge(d.judge, d.approvals.judge_timeout) \
            if d.approvals.mode == "smart" and d.judge is not None else None
        ctx = ToolContext.for_session(
            d.home, self.environment(how.cwd), session_id, environ=dict(d.environ),
            scratch_of=scratch_of,
            approve=how.approve, files=how.files,
            clarify=how.clarify, interactive=how.interactive, yolo=how.yolo,
            approval_mode=d.approvals.mode, judge=judge,
            max_result_chars=d.settings.tool_result_max_chars,
            origin=how.origin,
            environment_files=d.environment_files,
            delegate=d.delegate(self, how, tools) if d.delegate is not None else None)
        compression = d.settings.compression
        compressor = Compressor(compression, model=d.model, summariser=d.summariser,
                                fixed_tokens=estimate_json(tools.schemas())) \
            if compression.enabled else None
        agent = Agent(model=d.model, tools=tools, store=d.sessions, tool_context=ctx,
                      session_id=session_id, messages=messages,
                      max_iterations=d.settings.max_iterations, hooks=d.hooks,
                      stream=how.stream, events=how.events, compressor=compressor,
                      turn_output_budget=d.settings.turn_tool_output_max_chars,
                      platform=how.source)
        if not child:  # a sub-agent has no memory recall, sync or review of its own
            d.memory.subscribe(agent.bus)
            if d.learning is not None:
                d.learning.watch(agent.bus, messages)
        return agent
