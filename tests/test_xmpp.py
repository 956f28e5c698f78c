"""The xmpp platform against a real prosody (loopback, STARTTLS with a test CA given
explicitly), a real gateway process and the fake LLM; people are slixmpp clients: a one
to one conversation with a tool call approved in the chat (the agent seen composing),
long answers split, presence shared with allowed users, a voice note refused in one line,
rooms answered only when the nick is named or the agent replied to
(never its own messages nor the history a room replays), a stranger paired through the
chat and the CLI, cron delivered to a person, a room and the home channel, ``hermes
doctor`` logging in once, a wrong password ``failed`` and an untrusted certificate
``reconnecting`` while the rest serves, and a reply waiting out a server restart.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import wait_until
from fakellm import FakeLLM, RecordedRequest, Reply
from gateway_support import Gateway, gateway
from messaging_support import (
    Since,
    configure_messaging,
    delete_asking_approval,
    module_home,
    platform_detail,
)
from xmpp_support import MUC, Prosody, Received, XmppUser, prosody_server

HOLD = threading.Event()
"""Set to let questions holding the word HOLD be answered."""
LONG = "\n\n".join(f"Paragraph {n}: " + "x" * 700 for n in range(3))
"""An answer of two messages at ``max_chars`` 1500."""
TEAM, OLD = f"team@{MUC}", f"old@{MUC}"
PASSWORDS = {"hermes": "pw-hermes-0123", "alice": "pw-alice-0123", "bob": "pw-bob-0123",
             "carol": "pw-carol-0123"}


def answer(request: RecordedRequest) -> Reply:
    if (approval := delete_asking_approval(request)) is not None:
        return approval
    text = request.last_user_text or ""
    if "HOLD" in text:
        HOLD.wait(120)
    if "LONG" in text:
        return Reply(text=LONG)
    return Reply(text=f"Answer: {text.splitlines()[-1][:80]}")


@dataclass
class World:
    server: Prosody
    alice: XmppUser
    bob: XmppUser
    carol: XmppUser
    gw: Gateway
    environ: dict[str, str]
    root: Path
    workspace: Path


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=answer, strict=False) as llm:
        yield llm


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, fake: FakeLLM) -> Iterator[World]:
    """prosody, three people, and one gateway: ``xmpp`` (alice allowed; rooms team and
    old, where alice asked before the agent came), ``broken`` (a wrong password) and
    ``untrusted`` (no CA given: prosody's certificate is not trusted). Its cron jobs run
    only by ``hermes cron tick``."""
    with prosody_server(tmp_path_factory.mktemp("prosody")) as server:
        jids = {name: server.register(name, password) for name, password in PASSWORDS.items()}
        people = [XmppUser(server, jids[name], PASSWORDS[name])
                  for name in ("alice", "bob", "carol")]
        alice, bob, carol = people
        for person, nick in ((alice, "alice"), (bob, "bob"), (carol, "carol")):
            person.join(TEAM, nick)
        alice.join(OLD, "alice")
        alice.say(OLD, "hermes: a question from before the agent came")
        workspace = tmp_path_factory.mktemp("workspace")
        login = {"jid": jids["hermes"], "host": "127.0.0.1", "port": server.port}
        with module_home(tmp_path_factory) as (root, environ):
            configure_messaging(root, fake.openai_base_url, {
                "xmpp": {"kind": "xmpp", "token": "${secret:XMPP_PASSWORD}",
                         "allowed_users": [jids["alice"], jids["carol"]],
                         "home_channel": jids["alice"],
                         "settings": {**login, "ca_file": str(server.ca_file),
                                      "rooms": [TEAM, OLD], "send_rate": 50,
                                      "max_chars": 1500}},
                "broken": {"kind": "xmpp", "token": "${secret:WRONG_PASSWORD}",
                           "settings": {**login, "ca_file": str(server.ca_file)}},
                "untrusted": {"kind": "xmpp", "token": "${secret:XMPP_PASSWORD}",
                              "settings": login}},
                {"XMPP_PASSWORD": PASSWORDS["hermes"], "WRONG_PASSWORD": "not-it"},
                environment={"cwd": str(workspace)}, cron={"enabled": False})
            with gateway(environ, root, ready=False) as gw:
                platform_detail(gw, "xmpp")
                try:
                    yield World(server, alice, bob, carol, gw, environ, root, workspace)
                finally:
                    for person in people:
                        person.close()


@pytest.fixture
def llm(fake: FakeLLM) -> Since:
    return Since(fake)


def hears(person: XmppUser, sender: str, count: int = 1, timeout: float = 60
          ) -> list[Received]:
    """What ``person`` received from ``sender`` (a bare JID or room/nick), once ``count``."""
    found = wait_until(lambda: (said := person.from_(sender)) and len(said) >= count
                       and said, timeout, f"{count} message(s) from {sender}")
    assert isinstance(found, list)
    return found


def hermes_cli(world: World, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes", *args], env=world.environ,
                          capture_output=True, text=True, timeout=120)


def status(world: World) -> dict[str, dict[str, str]]:
    return dict(json.loads((world.gw.home / "gateway.json").read_text())["platforms"])


def test_a_conversation_with_a_tool_call_approved_in_the_chat(world: World, llm: Since
                                                              ) -> None:
    alice, agent = world.alice, "hermes@example.org"
    victim = world.workspace / "victim"
    victim.mkdir()
    alice.say(agent, f"delete {victim}")
    question = hears(alice, agent)[0].body
    assert f"rm -rf {victim}" in question and "/approve" in question and "/deny" in question
    assert (agent, "composing") in [(s.split("/")[0], state) for s, state in alice.states]
    alice.say(agent, "/approve")
    said = [m.body for m in hears(alice, agent, 3)]
    assert said[1] == "approved (once): running it"
    assert said[2].startswith("tool said:") and not victim.exists()
    assert all(m.kind == "chat" for m in alice.from_(agent))
    alice.say(agent, "LONG please")
    parts = [m.body for m in hears(alice, agent, 5)[3:]]
    assert "\n\n".join(parts) == LONG and all(len(p) <= 1500 for p in parts)
    assert [r.last_user_text for r in llm.requests][-1] == "LONG please"


def test_a_room_is_answered_only_when_addressed(world: World, llm: Since) -> None:
    alice, bob, carol = world.alice, world.bob, world.carol
    me = f"{TEAM}/hermes"
    alice.say(TEAM, "carol, lunch?")  # not for the agent
    bob.say(TEAM, "hermes: do something for me")  # named, but bob is not allowed
    alice.say(TEAM, "Hermes, what is the capital of France?")
    first = hears(carol, me)[0]
    assert first.body == "Answer: what is the capital of France?" and first.kind == "groupchat"
    carol.say(TEAM, "about the agent, not to it")
    carol.say(TEAM, "thanks!", reply_to=first)  # a reply to the agent is for it
    assert hears(carol, me, 2)[1].body == "Answer: thanks!"
    assert [r.last_user_text for r in llm.requests] == ["what is the capital of France?",
                                                        "thanks!"]
    # the question asked in the old room before the agent joined is history: never answered
    assert not alice.from_(f"{OLD}/hermes")


def test_only_an_allowed_user_approves_a_command_in_a_room(world: World) -> None:
    alice, bob, me = world.alice, world.bob, f"{TEAM}/hermes"
    victim = world.workspace / "room-victim"
    victim.mkdir()
    before = len(alice.from_(me))
    alice.say(TEAM, f"hermes: delete {victim}")
    question = hears(alice, me, before + 1)[-1].body
    assert f"rm -rf {victim}" in question and "/approve" in question
    bob.say(TEAM, "hermes: /approve")  # in the room, but not allowed: ignored
    alice.say(TEAM, "hermes: /approve")
    said = [m.body for m in hears(alice, me, before + 3)[before:]]
    assert said[1] == "approved (once): running it"
    assert said[2].startswith("tool said:") and not victim.exists()


def test_a_stranger_is_paired_through_the_chat_and_the_cli(world: World, llm: Since) -> None:
    bob, agent = world.bob, "hermes@example.org"
    bob.say(agent, "hi, I'm new")
    offer = hears(bob, agent)[0].body
    code = re.search(r"pairing approve xmpp ([A-Z0-9]{8})", offer)
    assert code is not None, offer
    approved = hermes_cli(world, "pairing", "approve", "xmpp", code[1])
    assert approved.returncode == 0, approved.stderr
    assert "paired xmpp user bob@example.org" in approved.stdout
    bob.say(agent, "now?")
    assert hears(bob, agent, 2)[1].body == "Answer: now?"
    assert [r.last_user_text for r in llm.requests] == ["now?"]


def test_presence_is_shared_with_allowed_users_and_voice_is_refused(world: World,
                                                                      llm: Since) -> None:
    carol, agent = world.carol, "hermes@example.org"
    carol.subscribe(agent)  # allowed: the agent accepts
    before = len(carol.from_(agent))
    link = "https://upload.example.org/abc/voice-message.ogg"
    carol.say(agent, link, link=link)
    said = hears(carol, agent, before + 1)[-1].body
    assert said == "Voice messages are not supported here yet; please write instead."
    assert not llm.requests


def test_cron_delivers_to_a_person_a_room_and_the_home_channel(world: World) -> None:
    alice, carol, agent = world.alice, world.carol, "hermes@example.org"
    before = len(alice.from_(agent)), len(carol.from_(f"{TEAM}/hermes"))
    for target, prompt in (("xmpp", "Check the disks"),
                           (f"xmpp:{world.carol.jid}", "Count the tickets"),
                           (f"xmpp:{TEAM}", "Tell the team")):
        added = hermes_cli(world, "cron", "add", "every 1d", prompt, "--deliver", target)
        assert added.returncode == 0, added.stderr
    jobs = world.root / "cron" / "jobs.json"
    data = json.loads(jobs.read_text())
    for job in data["jobs"]:
        job["next_run"] = "2000-01-01T00:00:00+00:00"
    jobs.write_text(json.dumps(data))
    ticked = hermes_cli(world, "cron", "tick")  # without the gateway: a login of its own
    assert ticked.returncode == 0, ticked.stderr
    for target in ("alice@example.org", "carol@example.org", TEAM):
        assert f"delivered to xmpp:{target}" in ticked.stdout, ticked.stdout
    assert hears(alice, agent, before[0] + 1)[-1].body == "Answer: Check the disks"
    assert hears(carol, agent)[-1].body == "Answer: Count the tickets"
    said = hears(carol, f"{TEAM}/hermes", before[1] + 1)[-1]
    assert said.body == "Answer: Tell the team" and said.kind == "groupchat"
    assert status(world)["xmpp"]["state"] == "running"  # the gateway's session stayed


def test_doctor_logs_in_once(world: World) -> None:
    done = hermes_cli(world, "doctor")
    rows = [line for line in done.stdout.splitlines() if "xmpp" in line or "broken" in line]
    assert any("ok" in row and "logged in as hermes@example.org" in row for row in rows), \
        done.stdout
    assert any("fail" in row and "rejected the password" in row for row in rows), done.stdout
    assert "pw-hermes" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "Task was destroyed" not in done.stderr, \
        done.stderr
    direct = hermes_cli(world, "doctor", "+platforms.enabled.xmpp.settings.tls=direct",
                        f"platforms.enabled.xmpp.settings.port={world.server.tls_port}")
    assert "logged in as hermes@example.org" in direct.stdout, direct.stdout  # XEP-0368


def test_refused_and_untrusted_accounts_are_reported_while_the_other_serves(world: World
                                                                              ) -> None:
    wait_until(lambda: status(world)["broken"]["state"] == "failed", 60, "broken failed")
    platforms = status(world)
    assert "rejected the password" in platforms["broken"]["detail"]
    assert platforms["untrusted"]["state"] == "reconnecting"
    assert "certificate" in platforms["untrusted"]["detail"]
    assert platforms["xmpp"]["state"] == "running"
    log = (world.gw.home / "logs" / "gateway.log").read_text()
    assert "not-it" not in log and PASSWORDS["hermes"] not in log


def test_a_reply_waits_out_a_server_restart(world: World) -> None:
    alice, agent = world.alice, "hermes@example.org"
    before = len(alice.from_(agent))
    HOLD.clear()
    alice.say(agent, "HOLD this until the server restarts")
    wait_until(lambda: any(state == "composing" for _s, state in alice.states[-3:]), 30,
               "the turn to start")
    world.server.stop()
    HOLD.set()  # the answer is written while the server is down
    wait_until(lambda: status(world)["xmpp"]["state"] == "reconnecting", 60,
               "the platform to notice the server is gone")
    world.server.start()
    alice.reconnect()
    said = hears(alice, agent, before + 1, timeout=120)
    assert said[-1].body == "Answer: HOLD this until the server restarts"
    wait_until(lambda: status(world)["xmpp"]["state"] == "running", 30, "running again")
