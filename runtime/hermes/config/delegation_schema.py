"""The typed ``delegation`` section: how the agent hands work to sub-agents
(``delegate_task``, ``hermes.delegation``)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from hermes.config.learning_schema import Duration
from hermes.config.sections import Section


def _program(value: str) -> str:
    """One program: a name on PATH (``claude``) or a path, without arguments."""
    if not value.strip() or re.search(r"\s", value):
        raise PydanticCustomError(
            "program", "{value!r} is not one program: write its name or path alone "
            "(claude, hermes, /opt/bin/agent); the task gives the arguments",
            {"value": value})
    return value


Program = Annotated[str, AfterValidator(_program)]


class DelegationConfig(Section):
    """Sub-agents: ``delegate_task`` runs focused child agents (or external ACP agents)
    with their own budget, and hands their summaries back."""

    max_concurrency: int = Field(3, ge=1)
    """Sub-agents of one ``delegate_task`` call that run at the same time; the rest of a
    batch waits for a free slot."""
    max_depth: int = Field(1, ge=1)
    """Levels of sub-agents below the user's own agent: 1 = its children cannot delegate;
    2 = they can, once more; and so on."""
    max_iterations: int = Field(50, gt=0)
    """A sub-agent's budget of model calls (for an external ACP agent: of tool calls); a
    task may ask for fewer, never more."""
    timeout: Duration = 900.0
    """Seconds (or ``15m``, ``1h``) one sub-agent may run before it is stopped and
    reported as failed."""
    acp_commands: list[Program] = Field(default_factory=list)
    """Programs ``delegate_task(acp_command=...)`` may start as external ACP agents over
    stdio, e.g. ``[claude, hermes]``; empty: none. They run on this machine, outside the
    execution environment, so list only agents you trust with it."""

