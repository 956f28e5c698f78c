"""The irc platform against a real ngIRCd (TLS with a test CA's certificate, and plain
text), a real gateway process and the fake LLM: a private conversation with a command
approved in private, a channel answered only when addressed (and approved there by an
allowed user only), a stranger offered pairing and let in, long answers in lines under
512 bytes without Markdown or formatting codes, a taken nick replaced and taken back, a
killed connection made again, and a scheduled job's answer delivered to a channel."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import ok, wait_until
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import Gateway, free_port, gateway
from irc_support import OPER, IrcUser, Ngircd, ngircd  # noqa: F401 - the fixture
from messaging_support import Since, configure_messaging, module_home, platform_detail

LONG = ("Première ligne: **gras** et `code`, \x02formatting\x02 \x0304red\x03.\n\n"
        + " ".join(f"mot{n}-é€😀" for n in range(160)) + "\n" + "😀" * 300)
"""An answer of many IRC lines: Markdown, formatting codes, multi-byte characters."""


def asked(request: RecordedRequest) -> bool:
    """Whether the request ends with the user's message (no tool has answered since)."""
    messages = request.body.get("messages") or [{}]
    return bool(messages[-1].get("role") == "user")


def answer(request: RecordedRequest) -> Reply:
    text = request.last_user_text or ""
    if text.startswith("delete "):  # a command that needs approval, then what it said
        if asked(request):
            return Reply(tool_calls=[ToolCall("terminal", {"command": f"rm -rf {text[7:]}"})])
        return Reply(text=f"tool said: {str(request.tool_results[-1].content)[:60]}")
    if text.startswith("plan "):
        if asked(request):
            return Reply(tool_calls=[ToolCall("todo", {"todos": [
                {"id": "1", "content": text[5:], "status": "in_progress"}]})])
        return Reply(text=f"planned: {text[5:]}")
    if "LONG" in text:
        return Reply(text=LONG)
    return Reply(text=f"Answer: {text.splitlines()[-1][:80] if text else ''}")


@dataclass
class World:
    server: Ngircd
    gw: Gateway
    environ: dict[str, str]
    workspace: Path
    alice: IrcUser
    bob: IrcUser
    holder: IrcUser
    """Holds the nick ``sentinel`` when the gateway starts (the second platform's)."""


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=answer, strict=False) as llm:
        yield llm


def irc_platform(server: Ngircd, **settings: Any) -> dict[str, Any]:
    return {"kind": "irc", "allowed_users": ["alice!*@127.0.0.1"],
            "settings": {"server": "localhost", "port": server.tls_port,
                         "ca_file": str(server.ca_file), "channels": ["#ops"],
                         "send_rate": 50, "regain_interval": 0.5, **settings}}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, fake: FakeLLM, ngircd: Ngircd  # noqa: F811
          ) -> Iterator[World]:
    """One gateway: ``irc`` over TLS as ``hermes``; ``backup`` in plain text as
    ``sentinel``, a nick someone holds when it starts."""
    workspace = tmp_path_factory.mktemp("workspace")
    holder = ngircd.user("sentinel")
    alice, bob = ngircd.user("alice"), ngircd.user("bob")
    with module_home(tmp_path_factory) as (root, environ):
        configure_messaging(root, fake.openai_base_url, {
            "irc": irc_platform(ngircd),
            "backup": irc_platform(ngircd, port=ngircd.port, tls=False, nick="sentinel",
                                   channels=[]),
            "untrusted": irc_platform(ngircd, ca_file="", nick="nobody", channels=[]),
            "nowhere": irc_platform(ngircd, port=free_port(), tls=False, nick="ghost"),
            "bare": {**irc_platform(ngircd, nick="bare"), "allowed_users": ["alice"]}},
            environment={"cwd": str(workspace)})
        with gateway(environ, root, ready=False) as gw:
            platform_detail(gw, "irc")
            platform_detail(gw, "backup")
            yield World(ngircd, gw, environ, workspace, alice, bob, holder)
    for user in (alice, bob, holder):
        user.quit()


@pytest.fixture
def llm(fake: FakeLLM) -> Since:
    return Since(fake)


def status(world: World) -> dict[str, dict[str, str]]:
    return dict(json.loads((world.gw.home / "gateway.json").read_text())["platforms"])


def log_entries(world: World) -> list[dict[str, Any]]:
    log = world.gw.home / "logs" / "gateway.log"
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_a_private_conversation_with_a_tool_and_an_approval(world: World, llm: Since) -> None:
    alice, since = world.alice, world.alice.mark()
    alice.say("hermes", "plan the release")
    assert alice.wait_messages("hermes", since=since) == ["planned: the release"]
    victim = world.workspace / "victim-pm"
    victim.mkdir()
    alice.say("hermes", f"delete {victim}")
    question = " ".join(wait_until(lambda: (said := alice.messages("hermes", since=since))
                                   and any("/deny" in s for s in said) and said, 90,
                                   "the approval question"))  # type: ignore[arg-type]
    assert f"rm -rf {victim}" in question and "/approve" in question
    alice.say("hermes", "/approve")
    said = wait_until(lambda: [s for s in alice.messages("hermes", since=since)
                               if s.startswith("tool said")], 90, "the tool's answer")
    assert said and not victim.exists()
    assert "approved (once): running it" in alice.messages("hermes", since=since)
    assert [r.last_user_text for r in llm.requests][:1] == ["plan the release"]


def test_a_channel_is_answered_only_when_addressed(world: World, llm: Since) -> None:
    alice, bob = world.alice, world.bob
    for user in (alice, bob):
        user.join("#ops")
    since = alice.mark()
    alice.say("#ops", "bob, lunch?")
    alice.say("#ops", "hermes: what is the capital of France?")
    assert alice.wait_messages("hermes", target="#ops", since=since) == [
        "Answer: what is the capital of France?"]
    bob.say("#ops", "hermes: I am not allowed")  # ignored: not on the allowlist
    alice.say("#ops", "I wonder what Hermes thinks")
    said = alice.wait_messages("hermes", 2, target="#ops", since=since)
    assert said[1] == "Answer: I wonder what Hermes thinks"
    assert [r.last_user_text for r in llm.requests] == [
        "what is the capital of France?", "I wonder what Hermes thinks"]


def test_only_an_allowed_user_approves_in_a_channel(world: World) -> None:
    alice, bob = world.alice, world.bob
    for user in (alice, bob):
        user.join("#ops")

    def refusals() -> int:
        return len([e for e in log_entries(world) if e["event"] == "message refused: sender "
                    "not allowed" and e.get("user") == "bob!~bob@127.0.0.1"])

    before, since = refusals(), alice.mark()
    victim = world.workspace / "victim-channel"
    victim.mkdir()
    alice.say("#ops", f"hermes: delete {victim}")
    wait_until(lambda: any("/deny" in s for s in alice.messages("hermes", "#ops", since)), 90,
               "the question")
    bob.say("#ops", "hermes: /approve")
    alice.say("#ops", "hermes: /approve")
    wait_until(lambda: any(s.startswith("tool said") for s in
                           alice.messages("hermes", "#ops", since)), 90, "the tool's answer")
    assert not victim.exists()
    assert refusals() == before + 1  # bob's /approve


def test_a_stranger_is_offered_pairing_in_private_and_let_in(world: World, llm: Since) -> None:
    carol = world.server.user("carol")
    try:
        carol.say("hermes", "let me in")
        offer = " ".join(carol.wait_messages("hermes", 3))
        code = re.search(r"pairing approve irc ([A-Z0-9]{8})", offer)
        assert code, offer
        env = world.environ
        done = subprocess.run([sys.executable, "-m", "hermes", "pairing", "approve", "irc",
                               code[1]], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "carol!~carol@127.0.0.1" in done.stdout
        carol.say("hermes", "hello again")
        wait_until(lambda: "Answer: hello again" in carol.messages("hermes"), 60, "the answer")
        assert [r.last_user_text for r in llm.requests] == ["hello again"]
    finally:
        carol.quit()


def test_long_answers_are_plain_lines_under_512_bytes(world: World) -> None:
    alice = world.alice
    start = len(alice.lines_from("hermes"))
    alice.say("hermes", "LONG please")
    lines = wait_until(lambda: (got := alice.lines_from("hermes")[start:])
                       and "".join(h.params[1] for h in got).count("😀") == 460 and got,
                       60, "the whole answer")
    assert isinstance(lines, list)
    assert all(h.size <= 512 for h in lines)  # as relayed: prefix, target and CR LF too
    assert max(h.size for h in lines) > 490  # filled, not cut short
    texts = [h.params[1] for h in lines]
    assert texts[0] == "Première ligne: gras et code, formatting red."
    words = [text for text in texts if "mot" in text]
    assert " ".join(words).split() == [f"mot{n}-é€😀" for n in range(160)]
    assert "".join(texts[1 + len(words):]) == "😀" * 300


def test_a_taken_nick_is_replaced_then_taken_back(world: World) -> None:
    assert status(world)["backup"]["detail"] == \
        f"sentinel_ on localhost:{world.server.port} (plain text)"
    world.holder.quit()
    wait_until(lambda: [e for e in log_entries(world) if e["event"] == "irc nick changed"
                        and e["platform"] == "backup" and e["nick"] == "sentinel"], 30,
               "the nick to be taken back")
    alice = world.alice
    alice.say("sentinel", "are you back?")
    assert alice.wait_messages("sentinel") == ["Answer: are you back?"]


def test_a_killed_connection_is_made_again(world: World) -> None:
    oper = world.server.user("oper")
    try:
        oper.raw(f"OPER {OPER[0]} {OPER[1]}")
        wait_until(lambda: oper.got("381"), 20, "operator status")
        oper.raw("KILL hermes :testing the reconnect")
        wait_until(lambda: [e for e in log_entries(world) if e["event"] == "reconnected"
                            and e["platform"] == "irc"], 30, "the connection to be made again")
        lost = [e for e in log_entries(world) if e["event"] == "connection lost"]
        assert lost[-1]["error"] == "ConnectionError: localhost: KILLed by oper: testing " \
            "the reconnect"
        world.alice.say("hermes", "still there?")
        wait_until(lambda: "Answer: still there?" in world.alice.messages("hermes"), 60,
                   "the answer after the reconnect")
    finally:
        oper.quit()


def test_a_bare_nick_as_allowed_user_fails_the_platform(world: World) -> None:
    bare = status(world)["bare"]
    assert bare["state"] == "failed"
    assert bare["detail"].startswith("platforms.enabled.bare.allowed_users: 'alice' is not an "
                                     "IRC mask: anyone can take a nick, so write nick!user@host "
                                     "with * wildcards (e.g. alice!*@their.host), or the "
                                     "services account, $a:alice"), bare["detail"]


def test_an_unreachable_server_is_retried_and_doctor_says_so(world: World) -> None:
    nowhere = status(world)["nowhere"]
    assert nowhere["state"] == "reconnecting" and "ConnectionRefusedError" in \
        nowhere["detail"] and nowhere["retry_at"]
    done = subprocess.run([sys.executable, "-m", "hermes", "doctor"], env=world.environ,
                          capture_output=True, text=True, timeout=120)
    row = next(line for line in done.stdout.splitlines() if "platform nowhere" in line)
    assert "fail" in row and "ConnectionRefusedError" in row


def test_an_untrusted_certificate_fails_the_platform_and_doctor_checks_each(world: World
                                                                            ) -> None:
    failed = f"localhost:{world.server.tls_port}: the server's certificate is not trusted " \
             "(unable to get local issuer certificate) — give its CA in " \
             "platforms.enabled.untrusted.settings.ca_file"
    wait_until(lambda: status(world)["untrusted"]["state"] == "failed", 30, "failed")
    assert status(world)["untrusted"]["detail"].startswith(failed)
    done = subprocess.run([sys.executable, "-m", "hermes", "doctor"], env=world.environ,
                          capture_output=True, text=True, timeout=120)
    rows = {line.split("platform ", 1)[1].split()[0]: line for line in done.stdout.splitlines()
            if "platform " in line}
    assert f"localhost:{world.server.tls_port} (TLS): registered as hermes_ (hermes is in " \
           "use: the gateway's own connection?)" in rows["irc"]
    assert f"localhost:{world.server.port} (plain text): registered as sentinel_" in \
        rows["backup"]
    assert "the server's certificate is not trusted" in rows["untrusted"]
    assert done.returncode == 1


def test_a_scheduled_answer_reaches_the_home_channel(hermes, root: Path, fake: FakeLLM,
                                                     ngircd: Ngircd) -> None:  # noqa: F811
    configure_messaging(root, fake.openai_base_url, {"irc": {
        **irc_platform(ngircd, nick="courier", channels=[]), "home_channel": "#news"}})
    reader = ngircd.user("reader")
    try:
        reader.join("#news")
        reader.join("#other")
        job = ok(hermes("cron", "add", "every 1d", "Summarise the news", "--deliver",
                        "irc")).split()[2]
        assert "delivered to irc:#news" in ok(hermes("cron", "run", job))
        other = ok(hermes("cron", "add", "every 1d", "Count the tickets", "--deliver",
                          "irc:#other")).split()[2]
        ok(hermes("cron", "run", other))
        assert reader.wait_messages("courier", target="#news") == [
            "Answer: Summarise the news"]
        assert reader.wait_messages("courier", target="#other") == ["Answer: Count the tickets"]
    finally:
        reader.quit()
