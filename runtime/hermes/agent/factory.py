"""The agent factory: hands each new agent the services of its runtime."""

from __future__ import annotations

from dataclasses import dataclass

from hermes.config.schema import AgentConfig
from hermes.environments.base import Environment
from hermes.memory.base import MemoryProvider
from hermes.models.base import ModelClient
from hermes.sessions.store import SessionStore
from hermes.tools.registry import ToolRegistry


@dataclass(frozen=True)
class AgentDeps:
    """Everything one agent uses; built by the container, never by the agent."""

    settings: AgentConfig
    model: ModelClient
    tools: ToolRegistry
    environment: Environment
    memory: MemoryProvider
    sessions: SessionStore


class AgentFactory:
    def __init__(self, deps: AgentDeps):
        self.deps = deps

    def dependencies(self) -> AgentDeps:
        return self.deps
