"""The README's Plugins section runs as written, in a real shell, against the fake LLM:
the calculator written with the shell block's heredocs, listed, enabled and called by the
model; an install from the README's git URL (served by a local repository through git's
own insteadOf, offline), disable and remove; a shell hook set, listed and accepted."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from conftest import write_fake_provider
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from readme_support import code_blocks, commands, on_path, run, section


def readme_blocks() -> list[str]:
    return code_blocks(section("## Plugins"))


def respond(request: RecordedRequest) -> Reply:
    if not request.tool_results:
        return Reply(tool_calls=[ToolCall("calculate", {"expression": "2**16"})])
    result = json.loads(request.tool_results[-1].content)["result"]
    return Reply(text=f"2 to the power of 16 is {result}.")


@pytest.fixture
def llm(root: Path) -> Iterator[FakeLLM]:
    with FakeLLM(fallback=respond) as fake:
        write_fake_provider(root, fake.openai_base_url)
        yield fake


def shell(env: dict[str, str], script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run(env, script, cwd)


def test_the_readme_plugin_section_runs_as_written(environ, root: Path, llm: FakeLLM,
                                                   tmp_path: Path) -> None:
    write, manage, hooks = readme_blocks()
    env = on_path(environ)
    setup, _, rest = write.partition("\nhermes ")
    shell(env, setup, tmp_path)  # mkdir and the two heredocs, as one script
    listed, enabled, answer, info = (shell(env, line, tmp_path).stdout
                                     for line in commands("hermes " + rest))
    assert re.search(r"^calculator +not enabled +1\.0\.0 +home +Evaluate arithmetic exactly$",
                     listed, re.M)
    assert enabled.startswith("enabled calculator 1.0.0 (home)")
    assert "registers 1 tool (calculate), 1 hook (post_tool_call)" in enabled
    assert answer == "2 to the power of 16 is 65536.\n"
    assert "calculate" in llm.requests[0].tool_names
    assert "status: enabled" in info and "provides tools: calculate" in info
    log = [json.loads(line) for line in (root / "logs" / "plugins.log").read_text()
           .splitlines()]
    assert [entry["event"] for entry in log] == ["tool calculate was called"]

    install, disable, remove = commands(manage)
    url = install.split()[3]
    repo = tmp_path / "weather"
    (repo / "plugin").mkdir(parents=True)
    (repo / "plugin.yaml").write_text("name: hermes-weather\nversion: 2.0.0\n")
    (repo / "__init__.py").write_text("def register(ctx):\n    pass\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "weather"], check=True)
    served = env | {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"url.file://{repo}.insteadOf",
                    "GIT_CONFIG_VALUE_0": url}
    assert shell(served, install, tmp_path).stdout.startswith(
        f"installed hermes-weather 2.0.0 from {url} at ")
    assert shell(env, disable, tmp_path).stdout.startswith("disabled calculator")
    assert yaml.safe_load((root / "config.yaml").read_text())["plugins"]["disabled"] == \
        ["calculator"]
    assert shell(env, remove, tmp_path).stdout.startswith("removed hermes-weather")
    assert not (root / "plugins" / "hermes-weather").exists()

    set_hook, list_hooks, accept = commands(hooks)
    shell(env, set_hook, tmp_path)
    hook = yaml.safe_load((root / "config.yaml").read_text())["hooks"]["pre_tool_call"][0]
    assert hook == {"command": "~/bin/check-tool-call", "matcher": "terminal", "timeout": 10}
    assert shell(env, list_hooks, tmp_path).stdout.startswith("not accepted  pre_tool_call")
    assert "accepted pre_tool_call: ~/bin/check-tool-call" in shell(env, accept, tmp_path).stdout
    assert shell(env, list_hooks, tmp_path).stdout.startswith("accepted ")
