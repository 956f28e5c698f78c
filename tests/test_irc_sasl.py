"""The irc platform on a network with services accounts (ngIRCd has none: a scripted server
on loopback speaking CAP, SASL PLAIN and account tags), a real gateway process and the
fake LLM: an allowed account is let in whatever nick and host it comes from, the same nick
on another account is not; a refused password fails the platform in one line (no login
without it); the server's throttling (ERR_TARGETTOOFAST) is waited out; ``hermes doctor``
logs in once per platform and reports both."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from conftest import wait_until
from fakellm import FakeLLM, RecordedRequest, Reply
from gateway_support import Gateway, gateway
from irc_support import ScriptedServer, ServicesNetwork
from messaging_support import Since, configure_messaging, module_home, platform_detail

PASSWORD = "right-password-0123"


def answer(request: RecordedRequest) -> Reply:
    text = request.last_user_text or ""
    if text == "two lines":
        return Reply(text="first line\nsecond line")
    return Reply(text=f"Answer: {text}")


@dataclass
class World:
    server: ScriptedServer
    network: ServicesNetwork
    gw: Gateway
    environ: dict[str, str]
    whox: ScriptedServer
    """A network without account tags, answering WHOX queries instead."""


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=answer, strict=False) as llm:
        yield llm


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, fake: FakeLLM) -> Iterator[World]:
    network = ServicesNetwork({"hermes": PASSWORD})
    older = ServicesNetwork({"hermes": PASSWORD}, account_tag=False, whox={"alice": "alice"})
    with ScriptedServer(network) as server, ScriptedServer(older) as whox, \
            module_home(tmp_path_factory) as (root, environ):
        def irc(nick: str, secret: str, on: ScriptedServer = server) -> dict[str, object]:
            return {"kind": "irc", "allowed_users": ["$a:alice"], "settings": {
                "server": "127.0.0.1", "port": on.port, "tls": False, "nick": nick,
                "password": f"${{secret:{secret}}}", "send_rate": 2}}

        configure_messaging(root, fake.openai_base_url, {
            "irc": irc("hermes", "IRC_PASSWORD"), "wrong": irc("hermes2", "WRONG_PASSWORD"),
            "older": irc("hermes", "IRC_PASSWORD", whox)},
            {"IRC_PASSWORD": PASSWORD, "WRONG_PASSWORD": "not-the-password"})
        with gateway(environ, root, ready=False) as gw:
            assert platform_detail(gw, "irc") == \
                f"hermes on 127.0.0.1:{server.port} (plain text, account hermes)"
            platform_detail(gw, "older")
            yield World(server, network, gw, environ, whox)


@pytest.fixture
def llm(fake: FakeLLM) -> Since:
    return Since(fake)


def answers(world: World, to: str) -> list[str]:
    return [text.split(" :", 1)[1] for _at, text in world.server.said(f"PRIVMSG {to} ")]


def test_the_account_not_the_nick_lets_a_sender_in(world: World, llm: Since) -> None:
    agent = world.server.client("hermes")
    agent.send("@account=alice :alice!a@anywhere.example PRIVMSG hermes :hello")
    wait_until(lambda: "Answer: hello" in answers(world, "alice"), 60, "the answer")
    typing = world.server.said("@+typing=active TAGMSG alice")
    assert typing and typing[0][0] < world.server.said("PRIVMSG alice :Answer: hello")[0][0]
    agent.send("@account=alice :alice2!b@elsewhere.example PRIVMSG hermes :from afar")
    wait_until(lambda: "Answer: from afar" in answers(world, "alice2"), 60, "the answer")
    agent.send("@account=mallory :alice!a@anywhere.example PRIVMSG hermes :let me in")
    agent.send(":alice!a@anywhere.example PRIVMSG hermes :no account at all")
    wait_until(lambda: len([a for a in answers(world, "alice") if "hermes pairing" in a]) == 2,
               60, "two pairing offers")
    assert [r.last_user_text for r in llm.requests] == ["hello", "from afar"]
    log = (world.gw.home / "logs" / "gateway.log").read_text()
    issued = [entry["user"] for entry in map(json.loads, log.splitlines())
              if entry["event"] == "pairing code issued" and entry["platform"] == "irc"]
    assert issued == ["$a:mallory", "alice!a@anywhere.example"]


def test_without_account_tags_the_account_is_asked_with_whox(world: World,
                                                              llm: Since) -> None:
    agent = world.whox.client("hermes")
    agent.send(":carol!c@anywhere.example PRIVMSG #room :chatter, not for the agent")
    agent.send(":alice!a@anywhere.example PRIVMSG hermes :asked by WHOX")
    agent.send(":mallory!m@anywhere.example PRIVMSG hermes :no account")
    wait_until(lambda: world.whox.said("PRIVMSG alice :Answer: asked by WHOX") and
               world.whox.said("PRIVMSG mallory :Hi! I don't know you yet"), 60, "answers")
    assert [text for _at, text in world.whox.said("WHO ")] == [
        "WHO alice %tna,152", "WHO mallory %tna,152"]  # none for a line not for the agent
    assert [r.last_user_text for r in llm.requests] == ["asked by WHOX"]


def test_the_sasl_login_is_sent_and_a_refused_one_fails_the_platform(world: World) -> None:
    logins = [text for _at, text in world.server.said("AUTHENTICATE ") if text !=
              "AUTHENTICATE PLAIN"]
    assert len(logins) == 2  # hermes and hermes2, once each: no retry after a refusal
    assert [text for _at, text in world.server.said("WHO ")] == []  # accounts came tagged
    done = subprocess.run([sys.executable, "-m", "hermes", "gateway", "status"],
                          env=world.environ, capture_output=True, text=True, timeout=120)
    assert "  wrong: failed 127.0.0.1 refused the SASL login of hermes2: the password was " \
           "refused — check the secret platforms.enabled.wrong.settings.password names" \
           in done.stdout
    assert "not-the-password" not in done.stdout


def test_the_servers_throttling_is_waited_out(world: World) -> None:
    agent = world.server.client("hermes")
    world.network.throttle_after = "first line"
    agent.send("@account=alice :alice!a@anywhere.example PRIVMSG hermes :two lines")
    sent = wait_until(lambda: (found := [(at, t) for at, t in world.server.said(
        "PRIVMSG alice ") if t.endswith(("first line", "second line"))])
        and len(found) == 2 and found, 60, "both lines")
    assert isinstance(sent, list)
    assert sent[1][0] - sent[0][0] >= 1.9  # ERR_TARGETTOOFAST said: wait 2 seconds


def test_doctor_logs_in_and_reports_each_platform(world: World) -> None:
    before = len(world.server.said("AUTHENTICATE PLAIN"))
    done = subprocess.run([sys.executable, "-m", "hermes", "doctor"], env=world.environ,
                          capture_output=True, text=True, timeout=120)
    rows = {line.split("platform ", 1)[1].split()[0]: line for line in done.stdout.splitlines()
            if "platform " in line}
    assert f"127.0.0.1:{world.server.port} (plain text): registered as hermes, SASL " \
           "account hermes accepted" in rows["irc"] and "ok" in rows["irc"]
    assert "the password was refused" in rows["wrong"] and "fail" in rows["wrong"]
    assert done.returncode == 1 and PASSWORD not in done.stdout
    assert len(world.server.said("AUTHENTICATE PLAIN")) == before + 2
