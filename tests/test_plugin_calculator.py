"""The plugin guide's calculator, written against this runtime's API
(``plugins_data/calculator``: plugin.yaml, __init__.py, schemas.py, tools.py), end to
end: installed and enabled through the CLI, its two tools called by the model (the fake
LLM) from ``hermes -z`` in-process and through the warm server, its hook logging every
tool call, its errors returned to the model as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall
from plugin_support import SAMPLES

pytestmark = pytest.mark.both_modes  # in-process and through the warm server

TURNS = [
    ("What's 2 to the power of 16, and 100 fahrenheit in celsius?", [
        ("calculate", {"expression": "2**16"}),
        ("unit_convert", {"value": 100, "from_unit": "F", "to_unit": "C"}),
        ("calculate", {"expression": "sqrt(2) * pi"})]),
    ("How many gigabytes is 1.5 terabytes? And 1/0? And open a file for me", [
        ("unit_convert", {"value": 1.5, "from_unit": "TB", "to_unit": "GB"}),
        ("calculate", {"expression": "1/0"}),
        ("calculate", {"expression": "open('/etc/passwd')"})]),
]
"""Two processes (one ``hermes -z`` each), three calls of the plugin's tools in each."""


def test_the_guide_s_calculator_end_to_end(hermes_subprocess, root: Path) -> None:
    with FakeLLM() as llm:
        write_fake_provider(root, llm.openai_base_url)
        for command in (["plugins", "install", str(SAMPLES / "calculator")],
                        ["plugins", "enable", "calculator"]):
            done = hermes_subprocess(*command)
            assert done.returncode == 0, done.stderr
        results = []
        for question, calls in TURNS:
            llm.push(Reply(tool_calls=[ToolCall(tool, args) for tool, args in calls]),
                     Reply(text="answered"))
            done = hermes_subprocess("-z", question)
            assert done.returncode == 0, done.stderr
            assert done.stdout == "answered\n"
            assert {"calculate", "unit_convert"} <= set(llm.requests[-2].tool_names)
            results += [json.loads(r.content) for r in llm.requests[-1].tool_results]
    power, fahrenheit, root_pi, terabytes, zero, opened = results
    assert power == {"expression": "2**16", "result": 65536}
    assert fahrenheit["result"] == 37.777778 and fahrenheit["output"] == "37.7778 C"
    assert root_pi["result"] == pytest.approx(4.442882938158366)
    assert terabytes["output"] == "1536 GB"
    assert zero == {"expression": "1/0", "error": "division by zero"}
    assert "cannot evaluate: not allowed here: open('/etc/passwd')" in opened["error"]
    logged = [json.loads(line)["event"] for line in
              (root / "logs" / "plugins.log").read_text().splitlines()]
    assert len(logged) == 6  # the hook saw every call, in both processes
    assert logged[0].startswith("tool calculate called in session ")
