"""The README's IRC steps run as written, in a real shell: the profile's SASL password, the
platform (accounts and masks allowed, a channel) and its home channel. The network is
the scripted one with services accounts (tests/irc_support.py: SASL, account tags): the
README's account and password are its own. Test-only steps point the profile at the
fake LLM and the server's loopback port (plain text: a loopback server); then ``hermes
doctor`` logs in, the gateway answers a private message and a line addressed to it in
the channel, and a scheduled job's answer goes to the home channel."""

from __future__ import annotations

from pathlib import Path

import yaml

from conftest import wait_until
from fakellm import FakeLLM, Reply
from gateway_support import gateway
from irc_support import ScriptedServer, ServicesNetwork
from messaging_support import platform_detail
from readme_support import bash, code_blocks, section

ACCOUNT, PASSWORD = "hermes-agent", "password-of-the-agents-account"


def point_at_the_tests(home: Path, llm_url: str, port: int) -> None:
    """The test-only steps, written straight into the profile (what `hermes config set`
    would write; the CLI's start-up, seven times, is what the README steps already run):
    the fake LLM, and the scripted server's loopback port in plain text."""
    path = home / "config.yaml"
    config = yaml.safe_load(path.read_text())
    config.setdefault("defaults", []).append({"override provider": "custom"})
    config["provider"] = {"model": "gpt-4o", "api_base": llm_url}
    config["platforms"]["enabled"]["irc"]["settings"].update(
        {"server": "127.0.0.1", "port": port, "tls": False})
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    with (home / ".env").open("a") as env:
        env.write("CUSTOM_API_KEY=sk-fake-test-key-1234\n")


def test_the_irc_section_runs_as_written(environ: dict[str, str], root: Path,
                                         tmp_path: Path) -> None:
    (setup,) = code_blocks(section("### IRC"))
    bash(environ, "hermes profile create work", tmp_path)
    bash(environ, setup, tmp_path)
    network = ServicesNetwork({ACCOUNT: PASSWORD})
    with ScriptedServer(network) as server, FakeLLM(
            fallback=lambda r: Reply(text=f"re: {(r.last_user_text or '').splitlines()[-1]}"),
            strict=False) as llm:
        point_at_the_tests(root / "profiles" / "work", llm.openai_base_url, server.port)
        doctor = bash(environ, "hermes -p work doctor || true", tmp_path)
        assert f"registered as {ACCOUNT}, SASL account {ACCOUNT} accepted" in doctor, doctor
        with gateway(environ, root / "profiles" / "work", ["-p", "work"], ready=False) as gw:
            platform_detail(gw, "irc")
            agent = server.client(ACCOUNT)
            assert server.said("JOIN #your-team")
            agent.send(f"@account=you :you!u@somewhere.example PRIVMSG {ACCOUNT} :hello")
            agent.send(f":you!u@your.host.example PRIVMSG #your-team :{ACCOUNT}: status?")
            wait_until(lambda: server.said("PRIVMSG you :re: hello") and
                       server.said("PRIVMSG #your-team :re: status?"), 90, "both answers")
        job = bash(environ, "hermes -p work cron add 'every 1d' 'Post the news' --deliver irc",
                   tmp_path).split()[2]
        assert "delivered to irc:#your-team" in bash(environ, f"hermes -p work cron run {job}",
                                                     tmp_path)
        assert server.said("PRIVMSG #your-team :re: Post the news")
