"""The matrix platform against a real Synapse homeserver (its own virtualenv, a loopback
port), a real gateway process and the fake LLM: invites, a direct room conversation,
edits ignored, a thread answered in the thread, group rooms answered only when
addressed, strangers declined or offered pairing, an encrypted room explained, the
homeserver's rate limit honoured, a reply queued across a homeserver restart, and
refused credentials or a wrong homeserver address reported failed while the rest serves.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import wait_until
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import Gateway, gateway
from images import JPEG, png, wire_images
from messaging_support import (
    WEBHOOK_SECRET,
    Since,
    configure_messaging,
    deliver,
    module_home,
    platform_detail,
    webhook_platform,
    webhook_url,
)
from synapse_support import MatrixClient, MatrixUser, Synapse
from voice_support import ESPEAK, seconds, spoken

pytestmark = pytest.mark.synapse
HOLD = threading.Event()
"""Set to let questions holding the word HOLD be answered."""
LONG = "\n\n".join(f"Paragraph {n}: " + "x" * 7000 for n in range(5))
"""An answer of three messages (16000 characters each at most)."""


def answer(request: RecordedRequest) -> Reply:
    text = request.last_user_text or ""
    if text.startswith("delete "):  # a command that needs approval, then what it said
        if not request.tool_results:
            return Reply(tool_calls=[ToolCall("terminal", {"command": f"rm -rf {text[7:]}"})])
        return Reply(text=f"tool said: {str(request.tool_results[-1].content)[:60]}")
    if "HOLD" in text:
        HOLD.wait(180)
    if "LONG" in text:
        return Reply(text=LONG)
    return Reply(text=f"Answer: {text[:80]}")


@dataclass
class World:
    """The homeserver, its people and the gateway serving the agent's account."""

    server: Synapse
    agent: MatrixUser
    alice: MatrixClient
    bob: MatrixClient
    carol: MatrixClient
    gw: Gateway
    environ: dict[str, str]
    workspace: Path
    """The agent's working directory."""


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=answer, strict=False) as llm:
        yield llm


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, fake: FakeLLM, synapse: Synapse
          ) -> Iterator[World]:
    """One gateway for the module on the session's Synapse (a minute to start): ``matrix``
    logs in with the agent's password; ``broken`` has a revoked token; ``misplaced`` a
    homeserver address where Synapse answers 404."""
    server = synapse
    agent = server.register("hermes")
    alice, bob, carol = (MatrixClient(server, server.register(name))
                         for name in ("alice", "bob", "carol"))
    workspace = tmp_path_factory.mktemp("workspace")
    with module_home(tmp_path_factory) as (root, environ):
        configure_messaging(root, fake.openai_base_url, {
            "matrix": {"kind": "matrix", "allowed_users": [alice.user.user_id,
                                                           carol.user.user_id],
                       "settings": {"homeserver": server.url, "user_id": agent.user_id,
                                    "password": "${secret:MATRIX_PASSWORD}",
                                    "sync_timeout": 5, "send_rate": 50}},
            "broken": {"kind": "matrix", "token": "${secret:BROKEN_MATRIX_TOKEN}",
                       "settings": {"homeserver": server.url}},
            "misplaced": {"kind": "matrix", "token": "${secret:BROKEN_MATRIX_TOKEN}",
                          "settings": {"homeserver": f"{server.url}/not-matrix"}}},
            {"MATRIX_PASSWORD": agent.password, "BROKEN_MATRIX_TOKEN": "syt_revoked_1234"},
            environment={"cwd": str(workspace)}, vision={"max_bytes": 50_000},
            stt={"name": "openai", "backend": "openai", "model": "whisper-1",
                 "api_base": fake.openai_base_url, "api_key": "sk-stt-1234"},
            tts={"name": "command", "backend": "command", "command": ESPEAK, "voice": "en"})
        with gateway(environ, root, ready=False) as gw:
            platform_detail(gw, "matrix", timeout=120)
            yield World(server, agent, alice, bob, carol, gw, environ, workspace)


@pytest.fixture
def llm(fake: FakeLLM) -> Since:
    return Since(fake)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def agent_says(world: World, client: MatrixClient, room: str, count: int = 1,
               timeout: float = 90) -> list[dict[str, Any]]:
    """The agent's messages in ``room`` once there are ``count`` of them."""
    found = wait_until(lambda: (said := client.from_user(room, world.agent.user_id))
                       and len(said) >= count and said, timeout,
                       f"{count} message(s) of the agent")
    assert isinstance(found, list)
    return found


def joined(world: World, client: MatrixClient, room: str) -> None:
    wait_until(lambda: client.membership(room, world.agent.user_id) == "join", 60,
               "the agent to join")


def direct_room(world: World, client: MatrixClient) -> str:
    """A new direct room of ``client`` with the agent, once the agent joined it."""
    room = client.create_room([world.agent.user_id])
    joined(world, client, room)
    return room


def status(world: World) -> dict[str, dict[str, str]]:
    return dict(json.loads((world.gw.home / "gateway.json").read_text())["platforms"])


def test_a_direct_room_conversation_ignores_edits(world: World, llm: Since) -> None:
    alice = world.alice
    room = alice.create_room([world.agent.user_id])
    joined(world, alice, room)
    first = alice.say(room, "hello there")
    assert agent_says(world, alice, room)[0]["content"]["body"] == "Answer: hello there"
    alice.edit(room, first, "hello there, edited")
    alice.say(room, "second question")
    said = agent_says(world, alice, room, 2)
    assert [m["content"]["body"] for m in said] == ["Answer: hello there",
                                                    "Answer: second question"]
    assert [r.last_user_text for r in llm.requests] == ["hello there", "second question"]
    assert "edited" not in json.dumps([r.body for r in llm.requests])
    assert said[0]["content"]["m.mentions"] == {}  # the model's text never pings anyone


def test_a_thread_is_answered_in_the_thread(world: World) -> None:
    alice = world.alice
    room = alice.create_room([world.agent.user_id])
    joined(world, alice, room)
    root = alice.say(room, "a topic")
    agent_says(world, alice, room)
    alice.say(room, "more on the topic", thread=root)
    reply = agent_says(world, alice, room, 2)[1]
    assert reply["content"]["body"] == "Answer: more on the topic"
    relation = reply["content"]["m.relates_to"]
    assert relation["rel_type"] == "m.thread" and relation["event_id"] == root


def test_a_group_room_is_answered_only_when_addressed(world: World, llm: Since) -> None:
    alice, carol = world.alice, world.carol
    room = alice.create_room([world.agent.user_id, carol.user.user_id], direct=False)
    carol.join(room)
    joined(world, alice, room)
    alice.say(room, "carol, lunch?")  # not for the agent
    alice.say(room, "hermes: what is the capital of France?")
    said = agent_says(world, alice, room)
    assert said[0]["content"]["body"] == "Answer: what is the capital of France?"
    carol.say(room, "about the agent, not to it")  # not addressed: never asked
    quoted = f"> <{world.agent.user_id}> Answer\n\nthanks!"  # what older clients send
    carol.send(room, {"msgtype": "m.text", "body": quoted,
                      "m.relates_to": {"m.in_reply_to": {"event_id": said[0]["event_id"]}}})
    assert agent_says(world, alice, room, 2)[1]["content"]["body"] == "Answer: thanks!"
    assert [r.last_user_text for r in llm.requests] == [
        "what is the capital of France?", "thanks!"]


def test_only_an_allowed_user_approves_a_command_in_a_room(world: World) -> None:
    alice, bob = world.alice, world.bob
    victim = world.workspace / "victim"
    victim.mkdir()
    room = alice.create_room([world.agent.user_id, bob.user.user_id], direct=False)
    bob.join(room)
    joined(world, alice, room)
    alice.say(room, f"hermes: delete {victim}")
    question = agent_says(world, alice, room)[0]["content"]["body"]
    assert f"rm -rf {victim}" in question and "/approve" in question and "/deny" in question
    bob.say(room, "hermes: /approve")  # bob is in the room but not allowed: ignored
    alice.say(room, "hermes: /approve")
    said = [m["content"]["body"] for m in agent_says(world, alice, room, 3)]
    assert said[1] == "approved (once): running it"
    assert said[2].startswith("tool said:") and not victim.exists()
    audit = (world.gw.home / "logs" / "approvals.jsonl").read_text().splitlines()
    assert json.loads(audit[-1])["by"] == "user (once)"
    refusals = [e for e in log_entries(world) if e["event"] == "message refused: sender not "
                "allowed" and e.get("user") == bob.user.user_id]
    assert len(refusals) == 1


def test_strangers_are_declined_or_offered_pairing(world: World, llm: Since) -> None:
    bob = world.bob
    group = bob.create_room([world.agent.user_id], direct=False)
    wait_until(lambda: bob.membership(group, world.agent.user_id) == "leave", 60,
               "the invite to be declined")
    direct = bob.create_room([world.agent.user_id])
    joined(world, bob, direct)  # pairing is on: a stranger may ask for a code in private
    bob.say(direct, "let me in")
    offer = agent_says(world, bob, direct)[0]["content"]["body"]
    assert "hermes pairing approve matrix " in offer
    assert llm.requests == []


def test_an_encrypted_room_is_explained_once(world: World, llm: Since) -> None:
    alice = world.alice
    room = alice.create_room([world.agent.user_id])
    alice.set_state(room, "m.room.encryption", {"algorithm": "m.megolm.v1.aes-sha2"})
    joined(world, alice, room)
    for _ in range(2):
        alice.send(room, {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgAEn",
                          "device_id": "X", "sender_key": "k", "session_id": "s"},
                   kind="m.room.encrypted")
    alice.say(room, "and in plain text")
    said = agent_says(world, alice, room, 2)
    assert "end-to-end encrypted, which I cannot read yet" in said[0]["content"]["body"]
    assert said[1]["content"]["body"] == "Answer: and in plain text"
    assert len(llm.requests) == 1


def test_an_image_reaches_the_model_with_its_caption_as_one_turn(world: World,
                                                                 llm: Since) -> None:
    alice, room = world.alice, direct_room(world, world.alice)
    chart = png(4, 3)
    alice.send_file(room, chart, "image/png", "chart.png", "what does this chart show?")
    assert agent_says(world, alice, room)[0]["content"]["body"] == \
        "Answer: what does this chart show?"
    assert wire_images(llm.requests[-1]) == [("image/png", b64(chart))]
    assert llm.requests[-1].last_user_text == "what does this chart show?"
    alice.send_file(room, JPEG, "image/jpeg", "photo.jpg", msgtype="m.file")  # no caption
    agent_says(world, alice, room, 2)
    assert wire_images(llm.requests[-1]) == [("image/jpeg", b64(JPEG))]
    assert len(llm.requests) == 2


def test_a_voice_message_is_transcribed_and_with_voice_on_answered_in_speech(
        world: World, fake: FakeLLM, llm: Since) -> None:
    alice, room = world.alice, direct_room(world, world.alice)
    note = spoken("is it going to rain")
    fake.audio.transcript = "is it going to rain"
    heard = len(fake.audio.requests)
    alice.send(room, {"msgtype": "m.audio", "body": "Voice message", "filename": "voice.ogg",
                      "url": alice.upload(note, "audio/ogg", "voice.ogg"),
                      "info": {"mimetype": "audio/ogg", "size": len(note)},
                      "org.matrix.msc3245.voice": {}})
    said = agent_says(world, alice, room, 2)
    assert [m["content"]["body"] for m in said] == ["🎤 is it going to rain",
                                                    "Answer: is it going to rain"]
    assert [r.file for r in fake.audio.requests[heard:]] == [note]
    assert [r.last_user_text for r in llm.requests] == ["is it going to rain"]
    alice.say(room, "/voice on")
    agent_says(world, alice, room, 3)
    alice.say(room, "hello")
    *_, text, spoken_answer = [m["content"] for m in agent_says(world, alice, room, 5)]
    assert text["body"] == "Answer: hello"  # the text first, then the speech
    assert spoken_answer["msgtype"] == "m.audio" and "org.matrix.msc3245.voice" in spoken_answer
    assert spoken_answer["info"]["mimetype"] == "audio/ogg"
    server, media = spoken_answer["url"].removeprefix("mxc://").split("/")
    audio = httpx.get(f"{world.server.url}/_matrix/client/v1/media/download/{server}/{media}",
                      headers={"Authorization": f"Bearer {alice.user.token}"}, timeout=30)
    assert seconds(audio.content) > 0.3


def test_an_image_that_cannot_be_attached_gets_one_line_and_no_turn(world: World,
                                                                    llm: Since) -> None:
    alice, room = world.alice, direct_room(world, world.alice)
    big = JPEG[:-2] + b"\0" * 60_000
    alice.send_file(room, b"%PDF-1.7", "application/pdf", "report.pdf", "summarise this",
                    msgtype="m.file")
    alice.send_file(room, big, "image/jpeg", "big.jpg", "and this")  # declared: not fetched
    alice.send_file(room, big, "image/jpeg", "lying.jpg", size=900)  # the download's length
    alice.send_file(room, JPEG[:-2], "image/jpeg", "cut.jpg")
    alice.send(room, {"msgtype": "m.image", "body": "secret.png", "info": {
        "mimetype": "image/png"}, "file": {"url": "mxc://example.org/abc", "v": "v2"}})
    said = [m["content"]["body"] for m in agent_says(world, alice, room, 5)]
    assert said == [
        "report.pdf: application/pdf is no image; send a PNG, JPEG, GIF or WebP image",
        f"big.jpg: the image is {len(big):,} bytes, over vision.max_bytes (50,000); send a "
        "smaller one",
        f"lying.jpg: the image is {len(big):,} bytes, over vision.max_bytes (50,000); send a "
        "smaller one",
        "cut.jpg: unreadable image: the JPEG is cut short (no end marker); attach a whole file",
        "secret.png: it is an end-to-end encrypted file, which I cannot read yet; send it "
        "unencrypted"]
    assert llm.requests == []  # no caption ran without its image


def test_an_image_from_someone_not_allowed_gets_no_turn(world: World, llm: Since) -> None:
    alice, bob = world.alice, world.bob
    room = alice.create_room([world.agent.user_id, bob.user.user_id], direct=False)
    bob.join(room)
    joined(world, alice, room)
    missing = "mxc://example.org/NoSuchMedia"  # a download would answer "could not download"
    bob.send(room, {"msgtype": "m.image", "body": "hermes: what is this?", "filename": "x.png",
                    "url": missing, "info": {"mimetype": "image/png"}})
    alice.send_file(room, png(), "image/png", "y.png")  # not addressed to the agent
    alice.say(room, "hermes: marker")
    said = agent_says(world, alice, room)
    assert [m["content"]["body"] for m in said] == ["Answer: marker"]
    assert [r.last_user_text for r in llm.requests] == ["marker"]


def test_the_homeservers_rate_limit_is_honoured(world: World) -> None:
    alice = world.alice
    room = alice.create_room([world.agent.user_id])
    joined(world, alice, room)
    world.server.limit_messages(world.agent.user_id, 1, 1)
    try:
        alice.say(room, "LONG answer please")
        said = agent_says(world, alice, room, 3, timeout=120)
    finally:
        world.server.unlimit_messages(world.agent.user_id)
    assert "\n\n".join(m["content"]["body"] for m in said) == LONG
    waits = [entry["retry_after"] for entry in log_entries(world) if entry["event"] ==
             "rate limited" and entry["platform"] == "matrix"]
    assert waits and set(waits) <= {1.0}  # Synapse's Retry-After, rounded up to seconds


def log_entries(world: World) -> list[dict[str, Any]]:
    log = world.gw.home / "logs" / "gateway.log"
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_a_failing_account_is_reported_while_the_other_serves(world: World) -> None:
    env = world.environ | {"PATH": os.environ.get("PATH", "")}
    done = subprocess.run([sys.executable, "-m", "hermes", "gateway", "status"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"  broken: failed {world.server.url} rejected the access token — check the " \
           "secret platforms.enabled.broken.token names" in done.stdout
    assert f"  matrix: running {world.agent.user_id} on {world.server.url}" in done.stdout
    # a wrong address is the settings' fault: failed at once, not retried for ever
    assert f"  misplaced: failed {world.server.url}/not-matrix refused the login (HTTP 404) " \
           "— check platforms.enabled.misplaced.settings.homeserver" in done.stdout
    assert "syt_revoked_1234" not in done.stdout + (world.gw.home / "logs" /
                                                     "gateway.log").read_text()


def test_doctor_checks_each_account_s_token_with_whoami(world: World) -> None:
    env = world.environ | {"PATH": os.environ.get("PATH", "")}

    def doctor(*overrides: str) -> dict[str, str]:
        done = subprocess.run([sys.executable, "-m", "hermes", "doctor", *overrides], env=env,
                              capture_output=True, text=True, timeout=120)
        assert "syt_revoked_1234" not in done.stdout + done.stderr
        return {line.split("platform ")[1].split()[0]: line for line in
                done.stdout.splitlines() if "platform " in line}

    rows = doctor()
    assert "not checked: a password login" in rows["matrix"]
    assert "fail" in rows["broken"] and "whoami: the homeserver answered 401 M_UNKNOWN_TOKEN" \
        in rows["broken"] and "check MATRIX_ACCESS_TOKEN" in rows["broken"]
    assert "fail" in rows["misplaced"]
    with_token = doctor(f"platforms.enabled.broken.token={world.alice.user.token}")
    assert f"{world.alice.user.user_id} on {world.server.url}" in with_token["broken"]


def test_a_reply_waits_out_a_homeserver_restart(world: World) -> None:
    alice = world.alice
    room = alice.create_room([world.agent.user_id])
    joined(world, alice, room)
    HOLD.clear()
    alice.say(room, "HOLD this until the server restarts")
    world.server.stop()
    HOLD.set()  # the answer is written while the homeserver is down
    wait_until(lambda: status(world)["matrix"]["state"] == "reconnecting", 60,
               "the platform to notice the homeserver is gone")
    world.server.start()
    said = agent_says(world, alice, room, timeout=180)
    assert said[0]["content"]["body"] == "Answer: HOLD this until the server restarts"
    wait_until(lambda: status(world)["matrix"]["state"] == "running", 120, "running again")
    alice.say(room, "still there?")
    assert agent_says(world, alice, room, 2)[1]["content"]["body"] == "Answer: still there?"


def test_a_webhook_answer_is_delivered_to_a_room(world: World, fake: FakeLLM, root: Path,
                                                 environ: dict[str, str]) -> None:
    courier = world.server.register("courier")  # logs in with a token this time
    alice = world.alice
    room = alice.create_room([courier.user_id], direct=False)
    configure_messaging(root, fake.openai_base_url, {
        "matrix": {"kind": "matrix", "token": "${secret:MATRIX_ACCESS_TOKEN}",
                   "allowed_users": [alice.user.user_id],
                   "settings": {"homeserver": world.server.url, "sync_timeout": 5}},
        "webhook": webhook_platform({"alerts": {"prompt": "Alert {name}",
                                                "deliver": f"matrix:{room}"}})},
        {"MATRIX_ACCESS_TOKEN": courier.token, "TEST_WEBHOOK_SECRET": WEBHOOK_SECRET})
    with gateway(environ, root, ready=False) as gw:
        assert platform_detail(gw, "matrix") == f"{courier.user_id} on {world.server.url}"
        wait_until(lambda: alice.membership(room, courier.user_id) == "join", 60,
                   "the invitation made before the start to be taken")
        assert deliver(webhook_url(gw), "alerts", {"name": "disk full"}).status_code == 202
        said = wait_until(lambda: alice.from_user(room, courier.user_id), 90, "the answer")
    assert isinstance(said, list) and said[0]["content"]["body"] == "Answer: Alert disk full"
    assert "m.relates_to" not in said[0]["content"]


def test_history_is_skipped_once_and_downtime_is_caught_up(world: World, fake: FakeLLM,
                                                          root: Path, environ: dict[str, str]
                                                          ) -> None:
    sleeper = world.server.register("sleeper")
    alice = world.alice
    room = alice.create_room([sleeper.user_id])
    MatrixClient(world.server, sleeper).join(room)
    alice.say(room, "said before the agent ever ran")
    configure_messaging(root, fake.openai_base_url, {"matrix": {
        "kind": "matrix", "token": "${secret:MATRIX_ACCESS_TOKEN}",
        "allowed_users": [alice.user.user_id],
        "settings": {"homeserver": world.server.url, "sync_timeout": 5}}},
        {"MATRIX_ACCESS_TOKEN": sleeper.token})
    llm = Since(fake)
    with gateway(environ, root, ready=False) as gw:
        platform_detail(gw, "matrix")
        alice.say(room, "first")
        wait_until(lambda: alice.from_user(room, sleeper.user_id), 90, "the first answer")
    state = root / "platforms" / "matrix.json"
    assert state.stat().st_mode & 0o777 == 0o600 and sleeper.token not in state.read_text()
    alice.say(room, "said while the gateway was down")
    with gateway(environ, root, ready=False) as gw:
        said = wait_until(lambda: (found := alice.from_user(room, sleeper.user_id))
                          and len(found) == 2 and found, 90, "the caught-up answer")
    assert isinstance(said, list)
    assert said[1]["content"]["body"] == "Answer: said while the gateway was down"
    assert [r.last_user_text for r in llm.requests] == ["first",
                                                        "said while the gateway was down"]
