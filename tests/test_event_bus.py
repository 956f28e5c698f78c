"""One event bus (issue 26): the agent loop fires each event once; memory providers, the
learning review's counters, the UI and plugins subscribe to the same bus with one set of
failure rules — a failing or timed-out observer is logged in one line and skipped while
the turn completes, a failing blocking hook refuses the tool call. Real runtimes, litellm
against the fake LLM, the real CLI where a front door is involved."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall
from hermes.agent.factory import Interaction
from hermes.agent.loop import AgentEvents
from hermes.memory.base import ExternalProvider
from hermes.memory.service import MemoryService
from hermes.models.types import StreamCallbacks
from plugin_support import make_runtime, write_plugin

READ = ToolCall("todo", {"todos": [{"id": "1", "content": "x", "status": "pending"}]})


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


class Counting(ExternalProvider):
    """Counts every call the memory service makes; ``fail``: each one raises."""

    def __init__(self, name: str = "counting", fail: bool = False):
        self.name = name
        self.fail = fail
        self.calls: dict[str, int] = {}

    def _count(self, what: str) -> None:
        self.calls[what] = self.calls.get(what, 0) + 1
        if self.fail:
            raise RuntimeError(f"{what} is broken")

    def prefetch(self, user_text: str) -> str:
        self._count("prefetch")
        return f"{self.name} recalls"

    def sync(self, user_text: str, answer: str) -> None:
        self._count("sync")

    def shutdown(self) -> None:
        self._count("shutdown")


def test_each_observer_hears_each_event_once(root: Path, environ, llm) -> None:
    """A session that ends, then the runtime closing: each memory provider is shut down
    once (it was shut down twice: by the session's end, then again by the runtime's
    close, with nothing in between); the UI, the plugins and the provider hear every
    other event once."""
    write_plugin(root, "tally", '''
        from pathlib import Path

        def register(ctx):
            def tally(event):
                def record(**kw):
                    with open(Path(ctx.home.path) / "tally.log", "a") as out:
                        out.write(event + "\\n")
                return record
            for event in ("on_session_start", "pre_llm_call", "pre_tool_call",
                          "post_tool_call", "post_llm_call", "on_session_end"):
                ctx.register_hook(event, tally(event))
    ''')
    provider = Counting()
    llm.push(Reply(tool_calls=[READ]), Reply(tool_calls=[READ]), Reply(text="done"))
    started: list[str] = []
    how = Interaction(stream=False, events=AgentEvents(
        on_tool_start=lambda call: started.append(call.name)))
    runtime = make_runtime(root, environ, llm.openai_base_url, "plugins.enabled=[tally]")
    runtime.container.memory.override(providers.Object(
        MemoryService(providers=[provider], prefetch_timeout=5)))
    with runtime:
        agent = runtime.container.agent_factory().new_session(how)
        assert agent.run_turn("go").text == "done"
        agent.close()
        assert provider.calls == {"prefetch": 1, "sync": 1, "shutdown": 1}
    assert provider.calls == {"prefetch": 1, "sync": 1, "shutdown": 1}
    assert started == ["todo", "todo"]
    assert (root / "tally.log").read_text().split() == [
        "on_session_start", "pre_llm_call", *["pre_tool_call", "post_tool_call"] * 2,
        "post_llm_call", "on_session_end"]


def test_a_failing_ui_observer_is_logged_once_and_skipped(root: Path, environ, llm,
                                                          caplog) -> None:
    """A UI whose printer raises on every streamed piece and every tool line: the turn
    completes with its answer; one warning line per callback, no traceback."""
    def broken(*_: Any) -> None:
        raise OSError("the terminal went away")

    llm.push(Reply(tool_calls=[READ]), Reply(text="answered in spite of the UI"))
    how = Interaction(stream=True, events=AgentEvents(
        stream=StreamCallbacks(on_text=broken), on_tool_start=broken, on_tool_end=broken))
    with make_runtime(root, environ, llm.openai_base_url) as runtime, \
            caplog.at_level(logging.DEBUG, logger="hermes.events"):
        agent = runtime.container.agent_factory().new_session(how)
        result = agent.run_turn("go")
    assert (result.exit_reason, result.text) == ("completed", "answered in spite of the UI")
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert sorted(r.getMessage() for r in warnings) == [
        f"hook ui ({event}) failed: OSError: the terminal went away"
        for event in ("stream_text", "tool_end", "tool_start")]
    assert all(r.exc_info is None for r in warnings)  # one line for the terminal


def test_a_failing_memory_provider_and_plugin_observers_are_skipped_in_a_one_shot(
        hermes_subprocess, root: Path, llm) -> None:
    """Through the real CLI: a plugin whose observers raise (and one that hangs past the
    hook timeout) and whose memory provider fails at every step; the one-shot answers,
    exit 0, and stderr has no traceback; plugins.log names each failure."""
    write_fake_provider(root, llm.openai_base_url)
    write_plugin(root, "grumpy", '''
        import threading
        from hermes.memory.base import ExternalProvider

        class Broken(ExternalProvider):
            name = "broken"
            def prefetch(self, text):
                raise RuntimeError("recall is down")
            def sync(self, text, answer):
                raise RuntimeError("sync is down")

        def register(ctx):
            ctx.register_memory_provider(Broken())
            ctx.register_hook("on_session_start", lambda **kw: 1 / 0)
            ctx.register_hook("post_llm_call", lambda **kw: threading.Event().wait(30),
                              timeout=0.5)
            ctx.register_hook("on_session_end", lambda **kw: {}["missing"])
    ''')
    llm.push(Reply(text="still answered"))
    done = hermes_subprocess("-z", "hello", "--no-daemon", "plugins.enabled=[grumpy]",
                             "memory.providers=[plugin:broken]")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "still answered" and "Traceback" not in done.stderr
    assert "memory provider broken: prefetch failed (RuntimeError: recall is down); " \
        "skipped\n" in done.stderr
    assert "memory provider broken: sync failed (RuntimeError: sync is down); skipped\n" \
        in done.stderr
    log = (root / "logs" / "plugins.log").read_text()
    assert "hook grumpy (on_session_start) failed: ZeroDivisionError" in log
    assert "hook grumpy (post_llm_call) took more than 0.5 s" in log
    assert "hook grumpy (on_session_end) failed: KeyError" in log


@pytest.mark.parametrize("hook", ["raise RuntimeError('judge is down')",
                                  "threading.Event().wait(30)"])
def test_a_failing_blocking_hook_refuses_the_call(root: Path, environ, llm,
                                                  hook: str) -> None:
    write_plugin(root, "gate", f'''
        import threading

        def register(ctx):
            def decide(tool_name, args, **kw):
                {hook}
            ctx.register_hook("pre_tool_call", decide, timeout=0.5)
    ''')
    llm.push(Reply(tool_calls=[READ]), Reply(text="refused, fine"))
    with make_runtime(root, environ, llm.openai_base_url, "plugins.enabled=[gate]") as runtime:
        agent = runtime.container.agent_factory().new_session(Interaction(stream=False))
        assert agent.run_turn("go").text == "refused, fine"
    refusal = json.loads(llm.requests[1].tool_results[0].content)["error"]
    assert refusal.startswith("blocked: hook gate (pre_tool_call) ")
    assert ("failed: RuntimeError: judge is down" in refusal) or \
        ("took more than 0.5 s" in refusal)
    assert not (root / "todos").exists() or "x" not in str(list((root / "todos").iterdir()))


def test_a_hung_observer_is_not_called_again_until_it_returns(root: Path, environ,
                                                              llm) -> None:
    """A callback still running from an earlier event is skipped (one thread, not one
    more per event), then called again once it returned."""
    release = threading.Event()
    calls: list[str] = []

    def slow(user_message: str, **_: Any) -> None:
        calls.append(user_message)
        release.wait(30)

    llm.push(Reply(text="a"), Reply(text="b"), Reply(text="c"))
    with make_runtime(root, environ, llm.openai_base_url, "plugins.hook_timeout=0.3") \
            as runtime:
        callback = runtime.container.hooks().subscribe("pre_llm_call", slow, "test")
        agent = runtime.container.agent_factory().new_session(Interaction(stream=False))
        agent.run_turn("one")
        agent.run_turn("two")  # still hung: skipped
        release.set()
        hung = callback.busy.call
        assert hung is not None and hung.done.wait(10)
        agent.run_turn("three")
    assert calls == ["one", "three"]
