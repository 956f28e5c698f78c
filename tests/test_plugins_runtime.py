"""Plugins in a real runtime, litellm against the fake LLM: the sample plugin's every
registration kind (tools, hooks, slash command with dispatch_tool, skill, model provider,
environment, memory provider), hook order, blocking, timeouts and failures, a plugin
that crashes, variables that gate a plugin, and two runtimes with different plugins."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakellm import FakeLLM, Reply, ToolCall
from hermes.agent.factory import Interaction
from hermes.cli.chat_commands import run_command
from hermes.errors import ConfigError
from plugin_support import SINK_ENV, events, install_sample, kinds, make_runtime, write_plugin

HOW = Interaction()


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def sink_env(environ: dict[str, str]) -> dict[str, str]:
    return environ | SINK_ENV


def results(request) -> list[dict[str, object]]:
    return [json.loads(r.content) for r in request.tool_results]


def test_the_sample_plugin_s_tools_and_hooks_in_a_turn(root: Path, sink_env, llm) -> None:
    install_sample(root, "sink")
    llm.push(Reply(tool_calls=[ToolCall("sink_echo", {"words": "hello"}),
                               ToolCall("sink_echo", {"words": "forbidden"}),
                               ToolCall("sink_echo", {"words": "rewrite me"})]),
             Reply(text="done"))
    with make_runtime(root, sink_env, llm.openai_base_url, "plugins.enabled=[sink]") as runtime:
        agent = runtime.container.agent_factory().new_session(HOW)
        assert agent.run_turn("echo please").text == "done"
        agent.close()
    first = llm.requests[0]
    assert "sink_echo" in first.tool_names and "sink_hidden" not in first.tool_names
    assert (first.last_user_text or "").endswith("echo please\n\n[sink context]")
    hello, blocked, rewritten = results(llm.requests[1])
    assert hello == {"echo": "HELLO", "task": agent.session_id}
    assert blocked == {"error": "blocked by sink: the sink refuses forbidden words"}
    assert rewritten["echo"] == "REWRITTEN"
    assert kinds(root) == ["registered", "on_session_start", "pre_llm_call",
                           *["pre_tool_call", "post_tool_call"] * 3, "post_llm_call",
                           "on_session_end"]
    seen = events(root)
    assert seen[2]["first"] is True and seen[-2]["answer"] == "done"
    assert [e.get("blocked") for e in seen[4:9:2]] == [False, True, False]
    assert seen[7]["args"] == {"words": "rewrite me"}  # what the hook saw, then changed
    # the session stores what the user typed plus the turn's context, never the hook's text
    # in the system prompt (which stays cache-stable)
    assert "[sink context]" not in first.body["messages"][0]["content"]


HOOKED = '''
    import threading
    from pathlib import Path

    def register(ctx):
        log = Path(ctx.home.path) / "order.log"

        def pre(tool_name, args, **kwargs):
            with open(log, "a") as out:
                out.write("{name}\\n")
            {body}

        ctx.register_hook("pre_tool_call", pre)
        ctx.register_hook("post_tool_call", lambda **kw: 1 / 0)  # fails: logged, skipped
'''


def test_hooks_run_in_plugin_order_and_a_hung_blocking_hook_fails_closed(
        root: Path, sink_env, llm, capsys) -> None:
    install_sample(root, "sink")
    write_plugin(root, "alpha", HOOKED.format(name="alpha", body="return None"))
    write_plugin(root, "beta", HOOKED.format(
        name="beta", body='return {"action": "modify", "args": {"words": "from beta"}} '
                          'if args["words"] == "x" else None'))
    write_plugin(root, "gamma", HOOKED.format(
        name="gamma", body='threading.Event().wait(60) if args["words"] == "hang" else None'))
    llm.push(Reply(tool_calls=[ToolCall("sink_echo", {"words": "hang"})]),
             Reply(text="first"),
             Reply(tool_calls=[ToolCall("sink_echo", {"words": "x"})]), Reply(text="second"))
    with make_runtime(root, sink_env, llm.openai_base_url,
                      "plugins.enabled=[gamma,alpha,sink,beta]",
                      "plugins.hook_timeout=0.5") as runtime:
        agent = runtime.container.agent_factory().new_session(HOW)
        started = time.monotonic()
        assert agent.run_turn("hang it").text == "first"
        assert time.monotonic() - started < 20  # the hung hook was left behind
        assert agent.run_turn("again").text == "second"
    hung = results(llm.requests[1])[0]
    assert hung == {"error": "blocked: hook gamma (pre_tool_call) took more than 0.5 s"}
    # discovery order (by name), not the order plugins.enabled lists them; each hook sees
    # the arguments the hooks before it left (beta's change reaches gamma and the tool)
    assert (root / "order.log").read_text().split() == ["alpha", "beta", "gamma"] * 2
    assert results(llm.requests[3])[-1]["echo"] == "FROM BETA"
    log = (root / "logs" / "plugins.log").read_text()
    assert "ZeroDivisionError" in log and "took more than 0.5 s" in log
    assert "Traceback" not in capsys.readouterr().err


def test_a_plugin_whose_register_raises_is_skipped_and_the_runtime_works(
        root: Path, sink_env, llm, capsys) -> None:
    install_sample(root, "sink")
    write_plugin(root, "broken", '''
        import json

        def register(ctx):
            ctx.register_tool(name="broken_tool", toolset="broken", handler=lambda a, **k: "{}",
                              schema={"name": "broken_tool", "parameters": {"type": "object"}})
            raise RuntimeError("the broken plugin cannot start")
    ''')
    llm.push(Reply(tool_calls=[ToolCall("sink_echo", {"words": "still here"})]),
             Reply(text="fine"))
    with make_runtime(root, sink_env, llm.openai_base_url,
                      "plugins.enabled=[broken,sink]") as runtime:
        agent = runtime.container.agent_factory().new_session(HOW)
        assert agent.run_turn("go").text == "fine"
        states = {s.key: s for s in runtime.container.plugins().registrations().states}
    assert "broken_tool" not in llm.requests[0].tool_names  # nothing of it stays registered
    assert results(llm.requests[1])[0]["echo"] == "STILL HERE"
    assert states["broken"].status == "failed" and states["sink"].status == "loaded"
    warnings = [line for line in capsys.readouterr().err.splitlines() if "broken" in line]
    assert warnings == [
        "warning: plugin broken failed to load and is disabled: RuntimeError: the broken "
        f"plugin cannot start (traceback in {root / 'logs' / 'plugins.log'})"]
    log = [json.loads(line) for line in (root / "logs" / "plugins.log").read_text().splitlines()]
    assert 'raise RuntimeError("the broken plugin cannot start")' in log[0]["traceback"]
    assert (root / "logs" / "plugins.log").stat().st_mode & 0o777 == 0o600


def test_required_variables_gate_a_plugin_and_the_profile_s_env_counts(
        root: Path, environ, llm, capsys) -> None:
    install_sample(root, "sink")
    with make_runtime(root, environ, llm.openai_base_url, "plugins.enabled=[sink]") as runtime:
        assert "sink_echo" not in runtime.container.tools().names()
        states = {s.key: s for s in runtime.container.plugins().registrations().states}
    assert (states["sink"].status, states["sink"].detail) == ("missing env",
                                                              "missing SINK_TOKEN, SINK_REGION")
    assert states["tool-log"].status == "not enabled"
    assert "plugin sink is not loaded: missing SINK_TOKEN, SINK_REGION" in capsys.readouterr().err
    assert kinds(root) == []  # never imported
    with (root / ".env").open("a") as env:
        env.write("SINK_TOKEN=from-dotenv-123\nSINK_REGION=eu\n")
    with make_runtime(root, environ, None, "plugins.enabled=[sink]") as runtime:
        assert "sink_echo" in runtime.container.tools().names()


def test_disabled_wins_over_enabled(root: Path, sink_env, llm) -> None:
    install_sample(root, "sink")
    with make_runtime(root, sink_env, llm.openai_base_url, "plugins.enabled=[sink]",
                      "plugins.disabled=[sink]") as runtime:
        assert "sink_echo" not in runtime.container.tools().names()
        states = {s.key: s for s in runtime.container.plugins().registrations().states}
        assert states["sink"].status == "disabled"


def test_slash_commands_dispatch_tools_through_the_session(root: Path, sink_env, llm,
                                                          capsys) -> None:
    install_sample(root, "sink")
    with make_runtime(root, sink_env, llm.openai_base_url, "plugins.enabled=[sink]") as runtime:
        conversations = runtime.container.conversations()
        conversation = conversations.open(HOW)
        agent = conversation.agent
        assert run_command("/sink quiet words", conversation, conversations,
                           HOW) == (conversation, None)
        assert json.loads(capsys.readouterr().out)["echo"] == "QUIET WORDS"
        # through the agent's pipeline: the hooks saw the call, in this very session
        pre = [e for e in events(root) if e["event"] == "pre_tool_call"]
        assert pre == [{"event": "pre_tool_call", "profile": "default", "tool": "sink_echo",
                        "args": {"words": "quiet words"}}]
        run_command("/model", conversation, conversations, HOW)  # the built-in, not the plugin's
        assert capsys.readouterr().out == "model: gpt-4o\n"
        run_command("/plugins", conversation, conversations, HOW)
        assert "✓ sink: 2 tools (sink_echo, sink_hidden)" in capsys.readouterr().out
        run_command("/help", conversation, conversations, HOW)
        assert "/sink" in capsys.readouterr().out
        new, _ = run_command("/new", conversation, conversations, HOW)
    resets = [e for e in events(root) if e["event"] == "on_session_reset"]
    assert resets[0]["session"] == agent.session_id != new.session_id


def test_a_plugin_skill_loads_by_its_namespaced_name_only(root: Path, sink_env, llm) -> None:
    install_sample(root, "sink")
    llm.push(Reply(tool_calls=[ToolCall("skill_view", {"name": "sink:checklist"}),
                               ToolCall("skill_manage", {"action": "delete",
                                                         "name": "sink:checklist"})]),
             Reply(text="ok"))
    with make_runtime(root, sink_env, llm.openai_base_url, "plugins.enabled=[sink]") as runtime:
        agent = runtime.container.agent_factory().new_session(HOW)
        agent.run_turn("check the list")
    view, delete = results(llm.requests[1])
    assert "# Sink checklist" in view["content"] and view["name"] == "sink:checklist"
    assert "read-only" in str(delete["error"])
    assert "sink:checklist" not in llm.requests[0].body["messages"][0]["content"]


def test_a_plugin_model_provider_answers(root: Path, sink_env) -> None:
    install_sample(root, "sink")
    with make_runtime(root, sink_env, None, "plugins.enabled=[sink]",
                      "provider.provider=plugin:sink-model") as runtime:
        agent = runtime.container.agent_factory().new_session(HOW)
        assert agent.run_turn("hello").text.startswith("sink model says hi to 'hello")


def test_a_plugin_environment_runs_the_commands(root: Path, sink_env, llm) -> None:
    install_sample(root, "sink")
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": "ls /"})]), Reply(text="ok"))
    with make_runtime(root, sink_env, llm.openai_base_url, "plugins.enabled=[sink]",
                      "environment.kind=plugin:sink-env", "+environment.plugin.prefix=box"
                      ) as runtime:
        runtime.container.agent_factory().new_session(HOW).run_turn("list it")
    assert "box$ ls /" in results(llm.requests[1])[0]["output"]


def test_a_plugin_memory_provider_recalls_into_the_turn(root: Path, sink_env, llm) -> None:
    install_sample(root, "sink")
    llm.push(Reply(text="blue it is"))
    with make_runtime(root, sink_env, llm.openai_base_url, "plugins.enabled=[sink]",
                      "memory.providers=[plugin:sink]") as runtime:
        runtime.container.agent_factory().new_session(HOW).run_turn("my colour?")
    assert "the sink remembers: blue" in (llm.requests[0].last_user_text or "")


def test_a_provider_no_enabled_plugin_registers_is_a_config_error(root: Path, sink_env) -> None:
    install_sample(root, "sink")
    runtime = make_runtime(root, sink_env, None, "environment.kind=plugin:nope")
    with pytest.raises(ConfigError, match=r"environment.kind: no enabled plugin registers "
                                          r"the environment 'nope' \(registered: \(none\)\)"):
        runtime.start()


def test_two_runtimes_in_one_process_keep_their_own_plugins(tmp_path: Path, sink_env) -> None:
    work, play = tmp_path / "work", tmp_path / "play"
    install_sample(work, "sink")
    install_sample(play, "calculator")
    install_sample(play, "sink")  # installed but not enabled there
    with FakeLLM() as llm, \
            make_runtime(work, sink_env, llm.openai_base_url, "plugins.enabled=[sink]") as one, \
            make_runtime(play, sink_env, llm.openai_base_url,
                         "plugins.enabled=[calculator]") as two:
        assert "sink_echo" in one.container.tools().names()
        assert "calculate" not in one.container.tools().names()
        assert "calculate" in two.container.tools().names()
        assert "sink_echo" not in two.container.tools().names()
        llm.push(Reply(tool_calls=[ToolCall("calculate", {"expression": "2**16"})]),
                 Reply(text="65536"))
        two.container.agent_factory().new_session(HOW).run_turn("2 to the 16th?")
        assert results(llm.requests[1])[0]["result"] == 65536
    assert kinds(work) == ["registered"] and kinds(play) == []


def test_the_bundled_tool_log_plugin_records_every_call(root: Path, sink_env, llm) -> None:
    install_sample(root, "sink")
    llm.push(Reply(tool_calls=[ToolCall("sink_echo", {"words": "a"}),
                               ToolCall("sink_echo", {"words": "forbidden"})]),
             Reply(text="logged"))
    with make_runtime(root, sink_env, llm.openai_base_url,
                      "plugins.enabled=[tool-log,sink]") as runtime:
        states = {s.key: s for s in runtime.container.plugins().registrations().states}
        agent = runtime.container.agent_factory().new_session(HOW)
        agent.run_turn("log it")
    assert states["tool-log"].status == "loaded"
    log = root / "logs" / "tools.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["tool"], e["blocked"], e["session"]) for e in lines] == [
        ("sink_echo", False, agent.session_id), ("sink_echo", True, agent.session_id)]
    assert "forbidden" not in log.read_text()  # arguments are never logged
    assert log.stat().st_mode & 0o777 == 0o600
