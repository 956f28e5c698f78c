"""The README's Signal section runs as written, in a real shell, against the fake
signal-cli daemon (tests/fake_signal): its ``sh`` block configures the profile; the
signal-cli commands (``text``: signal-cli is not installed here) must serve the account
and address that configuration expects. Test-only steps point the profile at the fake
LLM and at the fake daemon's loopback port."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ok, wait_until
from fake_signal import serving
from fakellm import FakeLLM, Reply
from gateway_support import gateway
from hermes.config.platform_schema import PLATFORM_SETTINGS
from messaging_support import platform_detail
from readme_support import bash, code_blocks, section


def test_the_signal_section_runs_as_written(hermes, environ: dict[str, str], root: Path,
                                            tmp_path: Path) -> None:
    text = section("### Signal")
    [daemon_steps] = code_blocks(text, "text")
    [block] = code_blocks(text)
    [account] = re.findall(r'account: "(\+\d+)"', block)
    [person] = re.findall(r'allowed_users: \["(\+\d+)"\]', block)
    default = PLATFORM_SETTINGS["signal"].model_validate({"account": account}).url  # type: ignore[attr-defined]
    default = default.removeprefix("http://")
    assert f"signal-cli -a {account} daemon --http {default}" in daemon_steps
    bash(environ, "hermes profile create work", tmp_path)
    bash(environ, block, tmp_path)
    with serving(account) as daemon, \
            FakeLLM(fallback=lambda r: Reply(text=f"re: {r.last_user_text}"),
                    strict=False) as llm:
        for key, value in (("provider", "custom"), ("provider.model", "gpt-4o"),
                           ("provider.api_base", llm.openai_base_url),
                           ("CUSTOM_API_KEY", "sk-fake-test-key-1234"),
                           ("platforms.enabled.signal.settings.url", daemon.url)):
            ok(hermes("-p", "work", "config", "set", key, value))  # in-process: quicker
        with gateway(environ, root / "profiles" / "work", ["-p", "work"], ready=False) as gw:
            platform_detail(gw, "signal")
            wait_until(lambda: daemon.listening, what="the event stream")
            daemon.push("hello from Signal", number=person)
            said = wait_until(lambda: daemon.texts(person), 90, "the answer")
    assert said == ["re: hello from Signal"]
    assert "signal:group.GROUP_ID" in text and "hermes doctor" in text
