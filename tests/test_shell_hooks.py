"""Shell hooks from the config through the real CLI against the fake LLM: nothing runs
before the user accepts it (hermes hooks accept, --accept-hooks, HERMES_ACCEPT_HOOKS,
the interactive chat's prompt); the event as JSON on stdin; a JSON decision on stdout;
no shell; a hook that fails or runs too long blocks its tool call."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
import yaml

from conftest import ok, write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall

HOOK = textwrap.dedent('''
    import json, pathlib, sys, time
    event = json.load(sys.stdin)
    log = pathlib.Path(sys.argv[1])
    with log.open("a") as out:
        out.write(json.dumps({"argv": sys.argv[2:], **event}) + "\\n")
    command = (event.get("tool_input") or {}).get("command", "")
    if "forbidden" in command:
        print(json.dumps({"decision": "block", "reason": "not on my watch"}))
    elif "slow" in command:
        time.sleep(30)
    elif "crash" in command:
        sys.exit(3)
    elif event["hook_event_name"] == "pre_llm_call":
        print(json.dumps({"context": "[the hook says: it is Friday]"}))
''')


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def hooked(root: Path, tmp_path: Path, llm: FakeLLM) -> Path:
    """A profile whose config runs hook.py before every terminal call and before the
    model; where the hook logs what it got."""
    script = tmp_path / "hook.py"
    script.write_text(HOOK)
    log = tmp_path / "hook.log"
    write_fake_provider(root, llm.openai_base_url)
    config = yaml.safe_load((root / "config.yaml").read_text())
    command = f"{sys.executable} {script} {log} ; touch {tmp_path / 'pwned'}"
    config["hooks"] = {"pre_tool_call": [{"command": command, "matcher": "term.*",
                                          "timeout": 3}],
                       "pre_llm_call": [{"command": f"{sys.executable} {script} {log}"}]}
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    return log


def logged(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def terminal(llm: FakeLLM, command: str) -> None:
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": command})]), Reply(text="ok"))


def tool_result(llm: FakeLLM) -> dict[str, object]:
    return json.loads(llm.requests[-1].tool_results[-1].content)


def test_nothing_runs_until_accepted_then_hooks_see_the_event(hermes, hooked: Path, root: Path,
                                                              tmp_path: Path, llm) -> None:
    terminal(llm, "echo forbidden")
    first = hermes("-z", "go")
    assert first.exit_code == 0, first.stderr
    assert "shell hook pre_tool_call: " in first.stderr and "is not accepted yet" in \
        first.stderr and "`hermes hooks accept`" in first.stderr
    assert logged(hooked) == [] and tool_result(llm)["exit_code"] == 0  # ran: no hook
    assert "not accepted" in ok(hermes("hooks", "list"))

    assert ok(hermes("hooks", "accept", "--yes")).count("accepted ") == 2
    consent = root / "shell-hooks.json"
    assert consent.stat().st_mode & 0o777 == 0o600
    assert "not accepted" not in ok(hermes("hooks", "list"))
    terminal(llm, "echo forbidden")
    assert hermes("-z", "go again").exit_code == 0
    assert tool_result(llm) == {"error": "blocked by shell:" + yaml.safe_load(
        (root / "config.yaml").read_text())["hooks"]["pre_tool_call"][0]["command"] +
        ": not on my watch"}
    assert (llm.requests[-2].last_user_text or "").endswith("[the hook says: it is Friday]")
    llm_event, tool_event = logged(hooked)
    assert llm_event["hook_event_name"] == "pre_llm_call"
    assert tool_event["hook_event_name"] == "pre_tool_call"
    assert tool_event["tool_name"] == "terminal"
    assert tool_event["tool_input"] == {"command": "echo forbidden"}
    assert tool_event["session_id"] and tool_event["cwd"]
    # no shell: ";" and what follows reach the program as arguments
    assert tool_event["argv"] == [";", "touch", str(tmp_path / "pwned")]
    assert not (tmp_path / "pwned").exists()


def test_a_failing_or_slow_hook_blocks_its_call(hermes, hooked: Path, llm) -> None:
    terminal(llm, "echo crash")
    assert hermes("-z", "go", "--accept-hooks").exit_code == 0
    assert "exited 3" in str(tool_result(llm)["error"])
    terminal(llm, "echo slow")
    assert hermes("-z", "go").exit_code == 0
    assert "ran longer than 3 s" in str(tool_result(llm)["error"])
    llm.push(Reply(tool_calls=[ToolCall("todo", {"todos": []})]), Reply(text="ok"))
    assert hermes("-z", "plan").exit_code == 0  # the matcher: other tools are not hooked
    assert "error" not in tool_result(llm)
    assert [e["tool_name"] for e in logged(hooked) if e["tool_name"]] == ["terminal"] * 2


def test_the_environment_accepts_for_runs_nobody_watches(hermes, hooked: Path, llm) -> None:
    terminal(llm, "echo forbidden")
    result = hermes("-z", "go", env={"HERMES_ACCEPT_HOOKS": "1"})
    assert result.exit_code == 0 and "not accepted" not in result.stderr
    assert "not on my watch" in str(tool_result(llm)["error"])
    assert ok(hermes("hooks", "revoke", f"{sys.executable} " + str(hooked.parent / "hook.py")
                     + f" {hooked}")) .startswith("revoked")
    assert "not accepted" in ok(hermes("hooks", "list"))


def test_an_unknown_event_is_refused_when_composing(hermes, root: Path, llm) -> None:
    write_fake_provider(root, llm.openai_base_url)
    config = yaml.safe_load((root / "config.yaml").read_text())
    config["hooks"] = {"pre_tool_cal": [{"command": "true"}]}
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    result = hermes("config", "validate")
    assert result.exit_code == 2
    assert "unknown hook event 'pre_tool_cal'" in result.stderr
    assert 'did you mean "pre_tool_call"' in result.stderr


def test_the_interactive_chat_asks_once(hooked: Path, root: Path, environ, tmp_path: Path,
                                        llm) -> None:
    env = environ | {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = pexpect.spawn(sys.executable, ["-m", "hermes", "chat"], env=env,
                          cwd=str(tmp_path), encoding="utf-8", timeout=60,
                          dimensions=(40, 500))
    try:
        # in the config's order (yaml.safe_dump sorted the events)
        child.expect(r"runs `.*hook.py.*` on pre_llm_call, with your user's rights; "
                     r"allow it\? \[y/N\]")
        child.sendline("n")
        child.expect(r"on pre_tool_call, with your user's rights; allow it\? \[y/N\]")
        child.sendline("y")
        child.expect("/help for commands")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    accepted = json.loads((root / "shell-hooks.json").read_text())["accepted"]
    assert [entry["event"] for entry in accepted] == ["pre_tool_call"]
