"""Plugins written for hermes-agent 0.19.0 (fixtures under ``plugins_data/hermes_agent``
shaped like its own: langfuse's hooks, tavily's web provider, irc's and byterover's
manifests) through the real CLI: their manifest keys, their hooks with hermes-agent's
keyword arguments fired in real turns against the fake LLM, the registrations Hermes does
not support yet, ``plugins enable`` that refuses a plugin that fails to load, ``plugins
remove`` that asks, and a one-shot whose standard output carries only the answer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pexpect
import pytest
import yaml

from conftest import ok, refused, write_fake_provider
from fakellm import FakeLLM, Fault, Reply, ToolCall
from plugin_support import SAMPLES, enable_at_terminal, write_plugin

FIXTURES = SAMPLES / "hermes_agent"


def add(root: Path, name: str) -> Path:
    target = root / "plugins" / name
    shutil.copytree(FIXTURES / name, target)
    return target


def enable_in_config(root: Path, *names: str) -> None:
    config = yaml.safe_load((root / "config.yaml").read_text())
    config["plugins"] = {"enabled": list(names)}
    (root / "config.yaml").write_text(yaml.safe_dump(config))


def one_shot(run: Any, root: Path, plugin: str, replies: list[Any], *args: str,
             cwd: Path | None = None, **provider: Any) -> tuple[Any, list[Any]]:
    """``hermes -z ARGS`` (``run``: the ``hermes_subprocess`` or in-process ``hermes``
    fixture) with ``plugin`` enabled, the fake LLM answering ``replies``: how it ended
    (checked to have succeeded) and the model requests."""
    with FakeLLM() as llm:
        write_fake_provider(root, llm.openai_base_url, **provider)
        enable_in_config(root, plugin)
        llm.push(*replies)
        proc = run("-z", *args, **({"cwd": cwd} if cwd else {}))
        assert getattr(proc, "returncode", getattr(proc, "exit_code", None)) == 0, proc.stderr
        return proc, list(llm.requests)


def traced(root: Path) -> list[dict[str, Any]]:
    path = root / "trace.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def by_event(root: Path) -> dict[str, list[dict[str, Any]]]:
    seen: dict[str, list[dict[str, Any]]] = {}
    for entry in traced(root):
        seen.setdefault(entry["event"], []).append(entry)
    return seen


def test_hermes_agent_manifest_keys_are_read_not_refused(hermes, root: Path) -> None:
    add(root, "relay")
    add(root, "web-lite")
    add(root, "trace")
    result = hermes("plugins", "list")
    rows = ok(result)
    assert "relay" in rows and "web-lite" in rows and "trace" in rows
    assert "4 plugins, 0 enabled" in rows and result.stderr == ""  # and the bundled one
    info = ok(hermes("plugins", "info", "relay"))
    assert "pip dependencies: PyYAML>=5" in info and "programs it needs: relayctl" in info
    assert "platforms: linux, macos" in info
    assert "ignored manifest keys: min_hermes_agent_version" in info
    web = ok(hermes("plugins", "info", "web-lite"))
    assert "web providers: lite" in web and "browser providers: lite-browser" in web
    trace = ok(hermes("plugins", "info", "trace"))
    assert "provides hooks: pre_api_request, post_api_request" in trace
    assert "warning: " in trace and "hook 'on_pre_compress' is no event of this Hermes" in trace


def test_enable_asks_the_manifest_s_prompt_and_the_typed_values_count(root: Path,
                                                                      environ) -> None:
    add(root, "relay")
    child = enable_at_terminal(environ, "relay")
    try:
        child.expect(r"Relay server \[RELAY_SERVER\] \(Relay server hostname")
        child.sendline("relay.example.org")
        child.expect(r"Relay token \[RELAY_TOKEN\] \(Token for the relay\) "
                     r"\(https://relay.example.org/tokens\): ")
        child.sendline("tok-typed-5678")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    said = child.before or ""
    assert child.exitstatus == 0, said
    assert "enabled relay 1.0.0" in said and "registers 1 tool (relay_where)" in said
    assert "missing" not in said and "failed" not in said
    env_file = (root / ".env").read_text()
    assert "RELAY_SERVER=relay.example.org" in env_file and "RELAY_TOKEN=tok-typed-5678" in \
        env_file


def test_enable_refuses_a_plugin_that_fails_to_load_and_changes_nothing(hermes,
                                                                       root: Path) -> None:
    write_plugin(root, "meet", "import meet_sdk_not_installed\n\ndef register(ctx):\n    pass\n",
                 "name: meet\nversion: 0.2.0\nrequires_env: [MEET_KEY]\n")
    (root / "config.yaml").write_text("# my notes, kept as written\nplugins:\n  hook_timeout: 5\n")
    before = (root / "config.yaml").read_text()
    result = hermes("plugins", "enable", "meet", env={"MEET_KEY": "k-1"})
    line = refused(result, "plugin meet failed to load, so it was not enabled: "
                           "ModuleNotFoundError: No module named 'meet_sdk_not_installed'",
                   "plugins.log")
    assert "enabled meet" not in result.stdout, line
    assert (root / "config.yaml").read_text() == before
    assert "not enabled" in ok(hermes("plugins", "list"))


def test_remove_asks_before_deleting_a_hand_written_plugin(hermes, root: Path) -> None:
    mine = write_plugin(root, "mine", "def register(ctx):\n    pass\n")
    refused(hermes("plugins", "remove", "mine"), "no answer (end of input); nothing removed",
            "--yes")
    assert mine.is_dir()
    result = hermes("plugins", "remove", "mine", input="n\n")
    assert "remove plugin mine (the directory" in result.stdout
    assert "written by hand" in result.stdout
    refused(result, "not confirmed; nothing removed")
    assert mine.is_dir()
    assert ok(hermes("plugins", "remove", "mine", input="y\n")).rstrip().endswith(
        f"removed mine: the directory {mine}, written by hand: not installed by Hermes")
    assert not mine.exists()
    again = write_plugin(root, "mine", "def register(ctx):\n    pass\n")
    ok(hermes("plugins", "remove", "mine", "--yes"))
    assert not again.exists()


def test_unsupported_registrations_keep_the_rest_of_the_plugin(hermes, root: Path) -> None:
    add(root, "web-lite")
    result = hermes("plugins", "enable", "web-lite")
    assert "registers 1 tool (lite_status), 1 web search provider (lite); not supported " \
           "yet: middleware, image gen provider, video gen provider, cron scheduler" in ok(result)
    assert "browser provider 'lite-browser' has no create_session" in result.stderr
    assert "warning: plugin web-lite: register_middleware() is not supported yet; the rest " \
           "of the plugin works" in result.stderr
    listed = ok(hermes("plugins", "list"))
    assert "enabled, not supported yet: middleware" in listed
    assert "not supported yet: middleware, image gen provider" in \
        ok(hermes("plugins", "info", "web-lite"))
    proc, requests = one_shot(hermes, root, "web-lite", [
        Reply(tool_calls=[ToolCall("lite_status", {})]), Reply(text="Lite is up.")],
        "is lite up?")
    assert proc.stdout == "Lite is up.\n"
    assert json.loads(requests[1].tool_results[0].content) == {"status": "lite is up"}


@pytest.mark.both_modes
def test_hooks_of_a_turn_with_hermes_agent_s_arguments_and_a_clean_stdout(
        hermes_subprocess, root: Path, tmp_path: Path) -> None:
    add(root, "trace")
    victim = tmp_path / "build"
    victim.mkdir()
    proc, requests = one_shot(hermes_subprocess, root, "trace", [
        Reply(tool_calls=[ToolCall("terminal", {"command": f"rm -rf {victim}"})]),
        Reply(text="APPROVE: the user asked to remove the build directory"),
        Reply(text="Removed.")], "remove the build directory", "approvals.mode=smart",
        cwd=tmp_path)
    assert proc.stdout == "Removed.\n"  # the plugin's prints went to standard error
    assert "trace: imported" in proc.stderr and "trace: post_llm_call" in proc.stderr
    assert json.loads(requests[2].tool_results[0].content) == {"output": "[traced]"}
    assert [e["event"] for e in traced(root)] == [
        "on_session_start", "pre_llm_call", "pre_api_request", "post_api_request",
        "pre_tool_call", "pre_approval_request", "post_approval_response", "post_tool_call",
        "transform_tool_result", "pre_api_request", "post_api_request", "post_llm_call",
        "on_session_end", "on_session_finalize"]
    seen = by_event(root)
    pre_api = seen["pre_api_request"][0]
    assert {"task_id", "turn_id", "api_request_id", "session_id", "user_message",
            "conversation_history", "platform", "model", "provider", "base_url", "api_mode",
            "api_call_count", "request_messages", "message_count", "tool_count",
            "approx_input_tokens", "request_char_count", "max_tokens",
            "started_at"} <= set(pre_api["kwargs"])
    assert [e["api_call_count"] for e in seen["pre_api_request"]] == [1, 2]
    post_api = seen["post_api_request"][1]
    assert {"api_duration", "ended_at", "finish_reason", "response_model", "usage",
            "assistant_content_chars", "assistant_tool_call_count"} <= set(post_api["kwargs"])
    assert {"conversation_history", "assistant_response", "user_message"} <= set(
        seen["post_llm_call"][0]["kwargs"])
    end = seen["on_session_end"][0]
    assert (end["completed"], end["interrupted"], end["model"]) == (True, False, "gpt-4o")
    assert {"session_id", "platform", "reason"} <= set(seen["on_session_finalize"][0]["kwargs"])
    asked, answered = seen["pre_approval_request"][0], seen["post_approval_response"][0]
    assert {"command", "description", "pattern_key", "pattern_keys", "session_key",
            "surface"} <= set(asked["kwargs"])
    assert (asked["surface"], answered["choice"]) == ("smart", "smart_approve")
    assert {"tool_name", "args", "result", "session_id", "task_id", "duration_ms",
            "status"} <= set(seen["transform_tool_result"][0]["kwargs"])


NOISY = """
import json

print("noisy: imported")


def register(ctx):
    print("noisy: registering")
    ctx.register_hook("post_llm_call", lambda **kwargs: print("noisy: answered"))
    ctx.register_hook("on_session_end", lambda **kwargs: print("noisy: ended"))

    def shout(args, **kwargs):
        print("noisy: tool ran")
        return json.dumps({"said": "hi"})

    ctx.register_tool(name="noisy_shout", toolset="noisy", handler=shout, schema={
        "name": "noisy_shout", "description": "Shout.",
        "parameters": {"type": "object", "properties": {}}})
"""


@pytest.mark.both_modes
def test_a_plugin_s_prints_never_reach_a_one_shot_s_stdout(hermes_subprocess,
                                                           root: Path) -> None:
    write_plugin(root, "noisy", NOISY)
    proc, _ = one_shot(hermes_subprocess, root, "noisy", [
        Reply(tool_calls=[ToolCall("noisy_shout", {})]), Reply(text="It said hi.")], "shout")
    assert proc.stdout == "It said hi.\n"
    for line in ("imported", "registering", "tool ran", "answered", "ended"):
        assert f"noisy: {line}\n" in proc.stderr


def test_subagent_and_api_error_hooks(hermes, root: Path) -> None:
    add(root, "trace")
    proc, _ = one_shot(hermes, root, "trace", [
        Reply(tool_calls=[ToolCall("delegate_task", {"goal": "count the files"})]),
        Reply(text="There are 3 files."), Reply(text="Your helper counted 3 files.")],
        "count the files with a helper", max_retries=0)
    assert proc.stdout == "Your helper counted 3 files.\n"
    with FakeLLM() as llm:
        write_fake_provider(root, llm.openai_base_url, max_retries=0)
        enable_in_config(root, "trace")
        llm.push(Fault.server_error())
        failed = hermes("-z", "and again")
        assert failed.exit_code != 0 and failed.stdout == ""
    seen = by_event(root)
    start, stop = seen["subagent_start"][0], seen["subagent_stop"][0]
    assert start["child_goal"] == "count the files"
    assert {"parent_session_id", "parent_turn_id", "child_session_id", "child_subagent_id",
            "child_role"} <= set(start["kwargs"])
    assert (stop["child_status"], stop["child_summary"]) == ("done", "There are 3 files.")
    assert {"parent_session_id", "child_session_id", "duration_ms"} <= set(stop["kwargs"])
    error = seen["api_request_error"][0]
    assert error["error"]["type"] and "api_duration" in error["kwargs"]
    assert [e["completed"] for e in seen["on_session_end"]][-1] is False
