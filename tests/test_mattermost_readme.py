"""The README's Mattermost section runs as written, in a real shell, against the fake
Mattermost server (tests/fake_mattermost): test-only steps point the profile at the fake
LLM and at the fake server's loopback address, and give it the fake's token; the README's
commands are otherwise unchanged. The allowed user id is the README's."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ok, wait_until
from fake_mattermost import new_id, serving
from fakellm import FakeLLM, Reply
from gateway_support import gateway
from messaging_support import platform_detail
from readme_support import bash, code_blocks, section


def test_the_mattermost_section_runs_as_written(hermes, environ: dict[str, str], root: Path,
                                                tmp_path: Path) -> None:
    text = section("### Mattermost")
    [block] = code_blocks(text)
    [user] = re.findall(r'allowed_users: \["(\w{26})"\]', block)
    bash(environ, "hermes profile create work", tmp_path)
    bash(environ, block, tmp_path)
    with serving("fake-server-token-0123") as server, \
            FakeLLM(fallback=lambda r: Reply(text=f"re: {r.last_user_text}"),
                    strict=False) as llm:
        for key, value in (("provider", "custom"), ("provider.model", "gpt-4o"),
                           ("provider.api_base", llm.openai_base_url),
                           ("CUSTOM_API_KEY", "sk-fake-test-key-1234"),
                           ("MATTERMOST_TOKEN", server.token),
                           ("platforms.enabled.mattermost.settings.url", server.url)):
            ok(hermes("-p", "work", "config", "set", key, value))  # in-process: quicker
        with gateway(environ, root / "profiles" / "work", ["-p", "work"], ready=False) as gw:
            platform_detail(gw, "mattermost")
            wait_until(lambda: server.connected, what="the WebSocket")
            dm = new_id()
            server.push("hello from Mattermost", user_id=user, channel_id=dm)
            said = wait_until(lambda: server.texts(dm), 90, "the answer")
    assert said == ["re: hello from Mattermost"]
    assert "mattermost:CHANNEL_ID" in text and "hermes doctor" in text
