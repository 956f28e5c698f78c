"""The signal platform in a real gateway process against a fake signal-cli daemon
(tests/fake_signal: JSON-RPC and Server-Sent Events) and the fake LLM: direct messages,
allowlist refusals (numbers and account ids), pairing, groups on mention or quote,
splitting, Signal's rate limit, approvals in the chat, a cron delivery, doctor, and
reconnecting after the daemon restarts."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from chat_fake_support import Scripted
from conftest import ok, refused, wait_until
from fake_signal import FakeSignalDaemon, serving
from fakellm import FakeLLM
from gateway_support import Gateway, gateway
from images import JPEG, wire_images
from messaging_support import Since, configure_messaging, module_home, platform_detail

ACCOUNT = "+15550000001"
ADA, EVE = "+15550000042", "+15550000099"  # Ada is allowed by number; Eve is not
BO_UUID = "0b0b0b0b-1111-4222-8333-444455556666"  # Bo is allowed by account id
GROUP = "aGVybWVzLXRlc3QtZ3JvdXAtaWQtMDEyMzQ1Njc4OTA="
LONG = "\n\n".join(f"Paragraph {n}: " + "word " * 350 for n in range(6))


@pytest.fixture(scope="module")
def script() -> Scripted:
    return Scripted(LONG)


@pytest.fixture(scope="module")
def fake_llm(script: Scripted) -> Iterator[FakeLLM]:
    with FakeLLM(fallback=script, strict=False) as llm:
        yield llm


@pytest.fixture(scope="module")
def daemon() -> Iterator[FakeSignalDaemon]:
    with serving(ACCOUNT) as fake:
        yield fake


def signal(fake: FakeSignalDaemon, **settings: object) -> dict[str, object]:
    return {"kind": "signal", "allowed_users": [ADA, BO_UUID], "home_channel": ADA,
            "settings": {"account": ACCOUNT, "url": fake.url, "send_rate": 50, **settings}}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspace")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeLLM,
           daemon: FakeSignalDaemon, workspace: Path
           ) -> Iterator[tuple[Gateway, dict[str, str]]]:
    with module_home(tmp_path_factory) as (root, environ):
        configure_messaging(root, fake_llm.openai_base_url, {"signal": signal(daemon)},
                            approvals={"chat_timeout": 8}, environment={"cwd": str(workspace)})
        with gateway(environ, root, ready=False) as gw:
            assert platform_detail(gw, "signal") == \
                f"{ACCOUNT} via signal-cli 0.13.18 at {daemon.url}"
            wait_until(lambda: daemon.listening, what="the event stream")
            yield gw, environ


@pytest.fixture
def gw(served: tuple[Gateway, dict[str, str]], daemon: FakeSignalDaemon) -> Gateway:
    daemon.failures.clear()
    return served[0]


@pytest.fixture
def llm(fake_llm: FakeLLM) -> Since:
    return Since(fake_llm)


def say_and_wait(daemon: FakeSignalDaemon, chat: str, text: str, count: int = 1,
                 **who: object) -> list[str]:
    start = len(daemon.texts(chat))
    daemon.push(text, **who)  # type: ignore[arg-type]
    wait_until(lambda: len(daemon.texts(chat)) >= start + count, timeout=60,
               what=f"{count} answer(s) to {chat}")
    return daemon.texts(chat)[start:]


def mention(number: str = ACCOUNT, start: int = 0) -> list[dict[str, object]]:
    return [{"number": number, "start": start}]


def test_a_direct_message_is_answered_with_typing_shown(gw: Gateway, daemon: FakeSignalDaemon,
                                                        llm: Since) -> None:
    typing = len(daemon.of("sendTyping"))
    start = len(daemon.texts(ADA))
    asked = daemon.push("hello there", number=ADA, name="Ada")
    wait_until(lambda: daemon.texts(ADA)[start:], what="the answer")
    assert daemon.texts(ADA)[start:] == ["re: hello there"]
    assert daemon.handed[asked] < daemon.of("send")[-1].at  # what a benchmark times
    assert llm.requests[-1].last_user_text == "hello there"
    shown = daemon.of("sendTyping")[typing:]
    assert shown and shown[0].params == {"recipient": [ADA]}
    assert shown[0].at <= daemon.of("send")[-1].at


def test_someone_hiding_their_number_is_known_by_account_id(gw: Gateway,
                                                            daemon: FakeSignalDaemon) -> None:
    [answer] = say_and_wait(daemon, BO_UUID, "no number here", number=None, uuid_=BO_UUID)
    assert answer == "re: no number here"


def test_someone_not_allowed_gets_no_agent_access(gw: Gateway, daemon: FakeSignalDaemon,
                                                  llm: Since) -> None:
    daemon.push("\ufffc do something", number=EVE, group=GROUP, mentions=mention())
    daemon.emit_raw({"sourceNumber": ADA, "timestamp": 1, "typingMessage": {  # no message
        "action": "STARTED", "timestamp": 1}})
    daemon.emit_raw({"sourceNumber": ACCOUNT, "timestamp": 2, "syncMessage": {"sentMessage": {
        "message": "sent from the account's phone", "timestamp": 2}}})
    [offer] = say_and_wait(daemon, EVE, "let me in", number=EVE, name="Eve")
    assert "hermes pairing approve signal " in offer
    say_and_wait(daemon, ADA, "after eve", number=ADA)
    assert [r.last_user_text for r in llm.requests] == ["after eve"]
    assert daemon.texts(f"group.{GROUP}") == []
    log = (gw.home / "logs" / "gateway.log").read_text()
    assert "message refused: sender not allowed" in log and "do something" not in log


def test_pairing_through_the_chat_and_the_cli(served: tuple[Gateway, dict[str, str]],
                                              daemon: FakeSignalDaemon, llm: Since) -> None:
    _gw, environ = served
    newbie, newbie_id = "+15550001234", "5e5e5e5e-1111-4222-8333-444455556666"
    [offer] = say_and_wait(daemon, newbie, "hi, I'm new", number=newbie, uuid_=newbie_id,
                           name="Newbie")
    code = re.search(r"pairing approve signal ([A-Z0-9]{8})", offer)
    assert code is not None, offer
    approved = subprocess.run([sys.executable, "-m", "hermes", "pairing", "approve", "signal",
                               code[1]], env=environ, text=True, capture_output=True,
                              timeout=120)
    assert approved.returncode == 0, approved.stderr
    assert f"paired signal user {newbie_id} (Newbie)" in approved.stdout  # the account id
    [answer] = say_and_wait(daemon, newbie, "now?", number=newbie, uuid_=newbie_id)
    assert answer == "re: now?"
    assert [r.last_user_text for r in llm.requests] == ["now?"]


def test_groups_are_answered_when_mentioned_or_quoted(gw: Gateway, daemon: FakeSignalDaemon,
                                                      llm: Since) -> None:
    chat = f"group.{GROUP}"
    daemon.push("just chatting among ourselves", number=ADA, group=GROUP)
    daemon.push("\ufffc look at this", number=ADA, group=GROUP,
                mentions=mention("+15557777777"))  # someone else mentioned
    [mentioned] = say_and_wait(daemon, chat, "\ufffc what time is it", number=ADA,
                               group=GROUP, mentions=mention())
    assert mentioned == "re: what time is it"
    assert daemon.of("send")[-1].params["groupId"] == GROUP
    [quoted] = say_and_wait(daemon, chat, "and tomorrow?", number=None, uuid_=BO_UUID,
                            group=GROUP, quote_author=ACCOUNT)
    assert quoted == "re: and tomorrow?"
    assert [r.last_user_text for r in llm.requests] == ["what time is it", "and tomorrow?"]


def test_an_image_reaches_the_model_with_its_text(gw: Gateway, daemon: FakeSignalDaemon,
                                                  llm: Since) -> None:
    photo = daemon.attachment(JPEG, "photo.jpg", "image/jpeg")
    [answer] = say_and_wait(daemon, ADA, "what is in this photo?", number=ADA,
                            attachments=[photo])
    assert answer == "re: what is in this photo?"
    assert wire_images(llm.requests[-1]) == [("image/jpeg", base64.b64encode(JPEG).decode())]
    assert daemon.of("getAttachment")[-1].params == {"id": photo["id"]}


def test_a_voice_note_goes_to_the_voice_service(gw: Gateway, daemon: FakeSignalDaemon,
                                                llm: Since) -> None:
    note = daemon.attachment(b"\xff\xf1 an AAC voice note", "", "audio/aac") | {
        "filename": None}
    [answer] = say_and_wait(daemon, ADA, "", number=ADA, attachments=[note])
    assert answer.startswith("(voice messages are off here") and llm.requests == []


def test_long_answers_are_split_at_2000_characters(gw: Gateway,
                                                   daemon: FakeSignalDaemon) -> None:
    texts = say_and_wait(daemon, ADA, "a long answer please", count=6, number=ADA)
    assert "\n\n".join(texts) == LONG
    assert all(len(t) <= 2000 for t in texts) and len(texts) > 1
    assert all(t.startswith("Paragraph") for t in texts)


def test_markdown_goes_as_signal_styles_and_as_written_when_refused(
        gw: Gateway, daemon: FakeSignalDaemon) -> None:
    [styled] = say_and_wait(daemon, ADA, "say **it** in `code` 😀 ~~now~~", number=ADA)
    assert styled == "re: say it in code 😀 now"
    assert daemon.of("send")[-1].params["textStyle"] == ["8:2:BOLD", "14:4:MONOSPACE",
                                                         "22:3:STRIKETHROUGH"]
    daemon.fail("send", error={"code": -1, "message": "Invalid text style"})
    [plain] = say_and_wait(daemon, ADA, "and **this**", number=ADA)
    assert plain == "re: and **this**" and "textStyle" not in daemon.of("send")[-1].params
    log = (gw.home / "logs" / "gateway.log").read_text()
    assert "styles rejected; sent as plain text" in log


def test_signals_rate_limit_is_waited_out(gw: Gateway, daemon: FakeSignalDaemon) -> None:
    daemon.fail("send", result={"timestamp": 1, "results": [
        {"recipientAddress": {"number": ADA}, "type": "RATE_LIMIT_FAILURE",
         "retryAfterSeconds": 2}]})
    start = len(daemon.of("send"))
    [answer] = say_and_wait(daemon, ADA, "rate me", number=ADA)
    assert answer == "re: rate me"
    refused, delivered = daemon.of("send")[start:start + 2]
    assert (refused.ok, delivered.ok) == (False, True)
    assert delivered.at - refused.at >= 1.9


def test_approval_in_a_group_from_allowed_and_disallowed_users(
        gw: Gateway, daemon: FakeSignalDaemon, workspace: Path) -> None:
    chat = f"group.{GROUP}"
    victim = workspace / "victim"
    victim.mkdir()
    [question] = say_and_wait(daemon, chat, f"\ufffc delete {victim} now", number=ADA,
                              group=GROUP, mentions=mention())
    assert f"rm -rf {victim}" in question and "/approve" in question
    daemon.push("\ufffc /approve", number=EVE, group=GROUP, mentions=mention())
    [ack, done] = say_and_wait(daemon, chat, "\ufffc /approve", count=2, number=None,
                               uuid_=BO_UUID, group=GROUP, mentions=mention())
    assert ack == "approved (once): running it"
    assert done.startswith("tool said:") and not victim.exists()


def test_deny_in_a_direct_message(gw: Gateway, daemon: FakeSignalDaemon,
                                  workspace: Path) -> None:
    kept = workspace / "kept"
    kept.mkdir()
    say_and_wait(daemon, ADA, f"delete {kept} please", number=ADA)
    [ack, done] = say_and_wait(daemon, ADA, "/deny", count=2, number=ADA)
    assert ack == "denied: the command will not run"
    assert "the user denied this command" in done and kept.exists()


def test_reconnects_after_the_daemon_restarts_without_losing_replies(
        gw: Gateway, daemon: FakeSignalDaemon, script: Scripted, llm: Since) -> None:
    script.hold.clear()
    start = len(daemon.texts(ADA))
    try:
        daemon.push("a slow question", number=ADA)
        wait_until(lambda: [r for r in llm.requests if r.last_user_text == "a slow question"],
                   what="the turn to start")
        daemon.stop()
        wait_until(lambda: _state(gw) == "reconnecting", what="status reconnecting")
    finally:
        script.hold.set()  # the answer is ready while the daemon is down: it must wait
    daemon.start()
    wait_until(lambda: daemon.listening, timeout=90, what="the event stream again")
    wait_until(lambda: len(daemon.texts(ADA)) > start, timeout=90, what="the answer")
    [answer] = say_and_wait(daemon, ADA, "and now?", number=ADA)
    assert daemon.texts(ADA)[start:] == ["re: a slow question", answer]
    wait_until(lambda: _state(gw) == "running", what="status running again")
    log = (gw.home / "logs" / "gateway.log").read_text()
    assert "connection lost" in log and "reconnected" in log


def test_messages_sent_while_the_stream_was_cut_are_answered(
        gw: Gateway, daemon: FakeSignalDaemon, llm: Since) -> None:
    say_and_wait(daemon, ADA, "before the cut", number=ADA)  # an event id to resume after
    start = len(daemon.texts(ADA))
    daemon.paused = True  # no stream until the messages are in
    try:
        daemon.cut()
        wait_until(lambda: not daemon.listening, what="the stream cut")
        daemon.push("sent while cut off", number=ADA)
        daemon.push("and another", number=ADA)
    finally:
        daemon.paused = False
    wait_until(lambda: len(daemon.texts(ADA)) >= start + 2, timeout=90, what="both answers")
    assert daemon.texts(ADA)[start:] == ["re: sent while cut off", "re: and another"]
    asked = [r.last_user_text for r in llm.requests]
    assert asked == ["before the cut", "sent while cut off", "and another"]  # each once


def test_cron_delivers_to_a_number_a_group_and_the_home_channel(
        hermes, root: Path, daemon: FakeSignalDaemon, fake_llm: FakeLLM) -> None:
    configure_messaging(root, fake_llm.openai_base_url, {"signal": signal(daemon)})
    jobs = {prompt: ok(hermes("cron", "add", "every 1d", prompt, "--deliver", target)
                       ).split()[2]
            for prompt, target in (("Summarise the backups", "signal"),
                                   ("Count the tickets", f"signal:{EVE}"),
                                   ("Greet the team", f"signal:group.{GROUP}"))}
    path = root / "cron" / "jobs.json"
    data = json.loads(path.read_text())
    for job in data["jobs"]:  # due now
        job["next_run"] = "2000-01-01T00:00:00+00:00"
    path.write_text(json.dumps(data))
    ticked = ok(hermes("cron", "tick"))
    for prompt, chat in (("Summarise the backups", ADA), ("Count the tickets", EVE),
                         ("Greet the team", f"group.{GROUP}")):
        assert f"{jobs[prompt]} ({prompt}): ok, delivered to signal:{chat}" in ticked
        assert daemon.texts(chat)[-1] == f"Done: {prompt}"


def test_doctor_asks_the_daemon_once(hermes, root: Path, daemon: FakeSignalDaemon,
                                     fake_llm: FakeLLM) -> None:
    configure_messaging(root, fake_llm.openai_base_url, {"signal": signal(daemon)})
    before = len(daemon.of("version"))
    out = ok(hermes("doctor"))
    row = next(line for line in out.splitlines() if "platform signal" in line)
    assert "ok" in row and "signal-cli 0.13.18" in out
    assert len(daemon.of("version")) == before + 1
    configure_messaging(root, fake_llm.openai_base_url, {"signal": signal(
        daemon, url="http://127.0.0.1:9")})  # nothing listens there
    down = hermes("doctor")
    assert down.exit_code == 1 and "Connection refused" in down.stdout
    assert "start the daemon: signal-cli -a" in down.stdout  # the command, wrapped
    assert "daemon --http 127.0.0.1:9" in down.stdout


def _state(gw: Gateway) -> str:
    try:
        return str(json.loads((gw.home / "gateway.json").read_text())["platforms"]["signal"]
                   ["state"])
    except (OSError, ValueError, KeyError):
        return ""


def test_a_bad_account_is_refused_in_one_line(hermes, root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    line = refused(hermes("config", "set", "platforms.enabled.signal",
                          '{kind: signal, settings: {account: "5551234567"}}'),
                   "platforms.enabled.signal.settings.account", "+15551234567")
    assert "international form" in line and not (root / "config.yaml").exists()
