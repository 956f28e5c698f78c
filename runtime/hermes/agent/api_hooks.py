"""``pre_api_request``, ``post_api_request`` and ``api_request_error``: one model request
as observers (observability plugins) see it, with hermes-agent's keyword arguments.

Nothing is computed unless one of the three events has a subscriber.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes.models.types import ModelReply

if TYPE_CHECKING:
    from hermes.agent.loop import Agent

EVENTS = ("pre_api_request", "post_api_request", "api_request_error")


@dataclass
class ApiRequest:
    """One model request being observed: the fields every one of its events carries."""

    agent: Agent
    fields: dict[str, Any]
    started_at: float

    @classmethod
    def start(cls, agent: Agent, messages: list[dict[str, Any]],
              tools: list[dict[str, Any]] | None, count: int) -> ApiRequest | None:
        """Fire ``pre_api_request``; None when nobody observes model requests."""
        if not any(agent.bus.has(event) for event in EVENTS):
            return None
        chars = len(json.dumps(messages, default=str))
        request = cls(agent, {**client_fields(agent), "api_call_count": count,
                              "api_request_id": f"{agent.turn_id}-{count}",
                              "message_count": len(messages), "tool_count": len(tools or ())},
                      time.time())
        agent.bus.emit("pre_api_request", **request.fields, user_message=agent.user_text,
                       conversation_history=list(agent.messages),
                       request_messages=list(messages), approx_input_tokens=chars // 4,
                       request_char_count=chars, started_at=request.started_at,
                       max_tokens=_setting(agent, "max_tokens"))
        return request

    def answered(self, reply: ModelReply) -> None:
        usage = reply.usage
        self.agent.bus.emit(
            "post_api_request", **self._timing(), finish_reason=reply.finish_reason,
            response_model=reply.model or self.fields["model"],
            usage={"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                   "cache_read_tokens": usage.cache_read_tokens,
                   "reasoning_tokens": usage.reasoning_tokens, "cost_usd": usage.cost_usd},
            assistant_content_chars=len(reply.content or ""),
            assistant_tool_call_count=len(reply.tool_calls))

    def failed(self, exc: BaseException) -> None:
        self.agent.bus.emit("api_request_error", **self._timing(), reason=str(exc),
                            error={"type": type(exc).__name__, "message": str(exc)})

    def _timing(self) -> dict[str, Any]:
        ended = time.time()
        return {**self.fields, "started_at": self.started_at, "ended_at": ended,
                "api_duration": ended - self.started_at}


def client_fields(agent: Agent) -> dict[str, Any]:
    """Who is asked: the session, the model and its endpoint."""
    return {"session_id": agent.session_id, "task_id": agent.session_id,
            "turn_id": agent.turn_id, "platform": agent.platform, "model": agent.model.model,
            "provider": _setting(agent, "provider") or "",
            "base_url": _setting(agent, "api_base") or "",
            "api_mode": getattr(agent.model, "api_mode", "") or ""}


def _setting(agent: Agent, name: str) -> Any:
    return getattr(getattr(agent.model, "settings", None), name, None)
