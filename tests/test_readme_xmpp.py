"""The README's XMPP section runs as written, in a real shell, against a real prosody whose
domain is example.org (the README's JIDs) and whose agent account has the README's
password. Test-only steps point the profile at the fake LLM and at prosody's loopback
port with its test CA; the README's commands are otherwise unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from conftest import wait_until
from fakellm import FakeLLM, Reply
from gateway_support import gateway
from messaging_support import platform_detail
from readme_support import bash, code_blocks, section
from xmpp_support import Prosody, XmppUser, prosody_server

ROOM = "ops@conference.example.org"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prosody]:
    with prosody_server(tmp_path_factory.mktemp("prosody")) as running:
        yield running


def test_the_xmpp_section_runs_as_written(environ: dict[str, str], root: Path,
                                          tmp_path: Path, server: Prosody) -> None:
    [block] = code_blocks(section("### XMPP"))
    agent = server.register("hermes", "password-of-the-agent-account")
    server.register("you", "pw-you-0123456789")
    bash(environ, "hermes profile create work", tmp_path)
    bash(environ, block, tmp_path)
    with FakeLLM(fallback=lambda r: Reply(text=f"re: {r.last_user_text}"),
                 strict=False) as llm:
        home = root / "profiles" / "work"
        point_at_test_servers(home, llm.openai_base_url, server)
        with gateway(environ, home, ["-p", "work"], ready=False) as gw:
            platform_detail(gw, "xmpp")
            you = XmppUser(server, "you@example.org", "pw-you-0123456789")
            try:
                you.say(agent, "hello from XMPP")
                you.join(ROOM, "you")
                you.say(ROOM, "hermes: hello room")
                wait = {"chat": f"{agent}/", "groupchat": f"{ROOM}/hermes"}
                said = {kind: _first(you, sender) for kind, sender in wait.items()}
            finally:
                you.close()
    assert said == {"chat": "re: hello from XMPP", "groupchat": "re: hello room"}


def point_at_test_servers(home: Path, llm_url: str, server: Prosody) -> None:
    """The test-only steps, written straight into the profile (each ``config set`` costs a
    process start): the fake LLM, and prosody's loopback port and test CA."""
    config = yaml.safe_load((home / "config.yaml").read_text())
    config.setdefault("defaults", []).append({"override provider": "custom"})
    config["provider"] = {"model": "gpt-4o", "api_base": llm_url}
    config["platforms"]["enabled"]["xmpp"]["settings"].update(
        host="127.0.0.1", port=server.port, ca_file=str(server.ca_file))
    (home / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    with (home / ".env").open("a") as env:
        env.write("CUSTOM_API_KEY=sk-fake-test-key-1234\n")


def _first(person: XmppUser, sender: str) -> str:
    found = wait_until(lambda: person.from_(sender), 90, f"an answer from {sender}")
    assert isinstance(found, list)
    return found[0].body
