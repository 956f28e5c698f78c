"""Slash commands through the one table on every door (issue 27, defect 9): an enabled
plugin's command answers on the API server (chat completions, streamed or not, and
responses) without the model, and a one-shot (`hermes chat -q`, `hermes -z`) runs a
plugin's command or loads a skill like the interactive chat."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from conftest import ok, write_fake_provider
from fakellm import FakeLLM, Reply
from gateway_support import KEY, configure, gateway
from plugin_support import write_plugin

SHOUT = '''
def register(ctx):
    ctx.register_command("shout", lambda raw: raw.upper() + "!", description="shout it")
'''


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=lambda request: Reply(text="the model answered"),
                 strict=False) as fake:
        yield fake


def test_a_plugin_command_answers_on_the_api_server(environ, root: Path, llm) -> None:
    configure(root, llm.openai_base_url, plugins__enabled=["shouter"])
    write_plugin(root, "shouter", SHOUT)
    with gateway(environ, root) as gw:
        base = f"http://127.0.0.1:{gw.port}/v1"
        auth = {"Authorization": f"Bearer {KEY}"}
        asked = {"model": "default", "messages": [{"role": "user", "content": "/shout hi"}]}
        plain = httpx.post(f"{base}/chat/completions", json=asked, headers=auth, timeout=60)
        assert plain.status_code == 200, plain.text
        assert plain.json()["choices"][0]["message"]["content"] == "HI!"
        streamed = httpx.post(f"{base}/chat/completions", json=asked | {"stream": True},
                              headers=auth, timeout=60)
        chunks = [json.loads(line[6:]) for line in streamed.text.splitlines()
                  if line.startswith("data: {")]
        assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == "HI!"
        assert streamed.text.rstrip().endswith("data: [DONE]")
        responded = httpx.post(f"{base}/responses", headers=auth, timeout=60,
                               json={"model": "default", "input": "/shout there"})
        assert responded.status_code == 200, responded.text
        assert responded.json()["output"][0]["content"][0]["text"] == "THERE!"
        other = httpx.post(f"{base}/chat/completions", headers=auth, timeout=60, json={
            "model": "default", "messages": [{"role": "user", "content": "/whisper hi"}]})
        assert other.json()["choices"][0]["message"]["content"] == "the model answered"
    assert [r.last_user_text for r in llm.requests] == ["/whisper hi"]


def test_a_one_shot_runs_a_plugin_command_and_loads_a_skill(hermes, root: Path, llm) -> None:
    write_fake_provider(root, llm.openai_base_url)
    config = yaml.safe_load((root / "config.yaml").read_text())
    (root / "config.yaml").write_text(yaml.safe_dump(config | {
        "plugins": {"enabled": ["shouter"]}}))
    write_plugin(root, "shouter", SHOUT)
    skill = root / "skills" / "data" / "csv-report"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: csv-report\ndescription: Summarise a CSV "
                                    "file.\n---\n\nCount the rows first.\n")
    assert ok(hermes("-z", "/shout hello")) == "HELLO!\n"
    assert not llm.requests
    answered = hermes("chat", "-q", "/csv-report sales.csv please")
    assert answered.exit_code == 0 and answered.stdout == "the model answered\n"
    assert "loaded skill csv-report" in answered.stderr
    sent = llm.requests[-1].last_user_text or ""
    assert sent.startswith("The user ran the skill command /csv-report.")
    assert "Count the rows first." in sent and sent.endswith("Request: sales.csv please")
