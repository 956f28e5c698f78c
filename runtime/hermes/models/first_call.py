"""A rehearsed first model call, for the warm server: litellm's lazy first-call set-up
(its streaming and logging modules, the response types' pydantic schemas, the openai
SDK's request transforms) done once before the server forks, so no command pays it;
for a model spoken to directly (``openai_wire``), httpx's request and stream path.

The rehearsal is a streamed tool call and its answer through the home's own provider
settings, served by an in-memory transport: nothing is connected and no byte leaves the
process. litellm logs each call on its thread pool; the pool's threads are let go
afterwards (the server forks from a single thread) and the pool starts new ones at its
next call, in the child.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from hermes.config.schema import ProviderConfig

_TOOL = {"type": "function", "function": {"name": "warm_up", "description": "warm-up",
                                          "parameters": {"type": "object", "properties": {}}}}
_CALL = {"id": "warm-1", "type": "function",
         "function": {"name": "warm_up", "arguments": "{}"}}
_ASK: list[dict[str, Any]] = [{"role": "system", "content": "warm-up"},
                              {"role": "user", "content": "warm-up"}]
_ANSWERED: list[dict[str, Any]] = [
    *_ASK, {"role": "assistant", "content": None, "tool_calls": [_CALL]},
    {"role": "tool", "tool_call_id": "warm-1", "content": "ok"}]


def rehearse_first_call(settings: ProviderConfig) -> bool:
    """Call the model twice (a tool call, then its answer) against an in-memory
    endpoint; whether it ran (only chat completions spoken directly or through litellm's
    OpenAI handler are rehearsed: nothing else may leave the process)."""
    from hermes.models.modes import detect_api_mode

    if detect_api_mode(settings) != "chat_completions":
        return False
    import encodings.idna  # noqa: F401 - what a real connection's host name needs

    import httpx

    from hermes.models.litellm_client import LiteLLMClient, import_litellm
    from hermes.models.openai_wire import ChatWire

    model = LiteLLMClient(settings.model_copy(update={"max_retries": 0, "fallbacks": []}),
                          wire=ChatWire(transport=httpx.MockTransport(_answer)))
    if not model.needs_litellm():  # spoken directly (``openai_wire``)
        for messages in (_ASK, _ANSWERED):
            model.complete(list(messages), [_TOOL], stream=True)
        httpx.HTTPTransport(verify=False).close()  # a real connection's modules (httpcore)
        return True
    if not model.litellm_model.startswith("openai/"):
        # Only litellm's OpenAI handler takes the in-memory client; others (groq, ...)
        # have their own HTTP stack and would send the rehearsal to the real provider.
        return False
    import_litellm()
    client = _in_memory_client()
    try:
        for messages in (_ASK, _ANSWERED):
            model.complete(list(messages), [_TOOL], stream=True, client=client)
    finally:
        let_logging_threads_go()
    return True


def _in_memory_client() -> Any:
    import httpx
    from openai import OpenAI

    transport = httpx.MockTransport(_answer)
    return OpenAI(api_key="warm-up", base_url="http://warm-up.invalid/v1",
                  http_client=httpx.Client(transport=transport), max_retries=0)


def _answer(request: Any) -> Any:
    import httpx

    asked = json.loads(request.content)
    if len(asked["messages"]) < len(_ANSWERED):
        deltas = [{"role": "assistant", "tool_calls": [
            {"index": 0, "id": "warm-1", "type": "function",
             "function": {"name": "warm_up", "arguments": ""}}]},
            {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}]
        finish = "tool_calls"
    else:
        deltas, finish = [{"role": "assistant", "content": "ok"}], "stop"
    chunks = [_chunk([{"index": 0, "delta": d, "finish_reason": None}]) for d in deltas]
    chunks.append(_chunk([{"index": 0, "delta": {}, "finish_reason": finish}]))
    chunks.append(_chunk([], usage={"prompt_tokens": 1, "completion_tokens": 1,
                                    "total_tokens": 2}))
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})


def _chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"id": "warm-up", "object": "chat.completion.chunk", "created": 0,
            "model": "warm-up", "choices": choices, **extra}


def let_logging_threads_go(timeout: float = 5.0) -> None:
    """Wait for litellm's logging pool to finish, end its idle threads and leave it
    usable: it starts new threads at its next task (in a forked child, where the old
    ones would not exist)."""
    from litellm.litellm_core_utils import thread_pool_executor

    executor: Any = thread_pool_executor.executor  # a ThreadPoolExecutor's own fields
    with executor._shutdown_lock:
        threads = list(executor._threads)
        executor._shutdown = True  # an idle worker that gets None then exits
        for _ in threads:
            executor._work_queue.put(None)
    for thread in threads:
        thread.join(timeout)
    with executor._shutdown_lock:
        executor._shutdown = False
        executor._threads.clear()
        executor._idle_semaphore = threading.Semaphore(0)
        while not executor._work_queue.empty():  # the exiting workers' wake-up Nones
            executor._work_queue.get_nowait()
