"""The mattermost platform in a real gateway process against the fake Mattermost server
(tests/fake_mattermost: REST API v4 and the WebSocket) and the fake LLM: direct messages,
allowlist refusals, pairing, channels on mention, threads, splitting, 429 with its
reset, approvals in the chat, a cron delivery, a revoked token, and reconnecting."""

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
from fake_mattermost import FakeMattermost, new_id, serving
from fakellm import FakeLLM
from gateway_support import Gateway, gateway
from images import JPEG, wire_images
from messaging_support import Since, configure_messaging, module_home, platform_detail

TOKEN = "mm-bot-token-0123456789abcdef"
ADA, BO, EVE = new_id(), new_id(), new_id()  # Ada and Bo are allowed; Eve is not
DM_ADA, DM_BO, DM_EVE, TOWN = new_id(), new_id(), new_id(), new_id()
LONG = "\n\n".join(f"Paragraph {n}: " + "word " * 1500 for n in range(6))


@pytest.fixture(scope="module")
def script() -> Scripted:
    return Scripted(LONG)


@pytest.fixture(scope="module")
def fake_llm(script: Scripted) -> Iterator[FakeLLM]:
    with FakeLLM(fallback=script, strict=False) as llm:
        yield llm


@pytest.fixture(scope="module")
def server() -> Iterator[FakeMattermost]:
    with serving(TOKEN) as fake:
        yield fake


def mattermost(fake: FakeMattermost, **settings: object) -> dict[str, object]:
    return {"kind": "mattermost", "token": "${secret:MATTERMOST_TOKEN}",
            "allowed_users": [ADA, BO], "home_channel": TOWN,
            "settings": {"url": fake.url, "send_rate": 50, **settings}}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspace")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeLLM, server: FakeMattermost,
           workspace: Path) -> Iterator[tuple[Gateway, dict[str, str]]]:
    with module_home(tmp_path_factory) as (root, environ):
        configure_messaging(root, fake_llm.openai_base_url, {"mattermost": mattermost(server)},
                            {"MATTERMOST_TOKEN": TOKEN}, approvals={"chat_timeout": 8},
                            environment={"cwd": str(workspace)})
        with gateway(environ, root, ready=False) as gw:
            assert platform_detail(gw, "mattermost") == f"@hermes on {server.url}"
            wait_until(lambda: server.connected, what="the WebSocket")
            yield gw, environ


@pytest.fixture
def gw(served: tuple[Gateway, dict[str, str]], server: FakeMattermost) -> Gateway:
    server.failures.clear()
    return served[0]


@pytest.fixture
def llm(fake_llm: FakeLLM) -> Since:
    return Since(fake_llm)


def say_and_wait(server: FakeMattermost, channel: str, text: str, count: int = 1,
                 timeout: float = 60, **who: object) -> list[str]:
    start = len(server.texts(channel))
    server.push(text, channel_id=channel, **who)  # type: ignore[arg-type]
    wait_until(lambda: len(server.texts(channel)) >= start + count, timeout=timeout,
               what=f"{count} answer(s) in {channel}")
    return server.texts(channel)[start:]


def test_a_direct_message_is_answered_with_typing_shown(gw: Gateway, server: FakeMattermost,
                                                        llm: Since) -> None:
    typing = len(server.of("POST", "/users/me/typing"))
    start = len(server.texts(DM_ADA))
    asked = server.push("hello there", user_id=ADA, channel_id=DM_ADA)
    wait_until(lambda: len(server.texts(DM_ADA)) > start, what="the answer")
    post = server.sent(DM_ADA)[-1]
    assert post["message"] == "re: hello there"
    assert server.handed[asked] < post["at"]  # what a benchmark times
    assert post["root_id"] == "" and post["props"] == {"disable_group_highlight": True}
    assert llm.requests[-1].last_user_text == "hello there"
    shown = server.of("POST", "/users/me/typing")[typing:]
    assert shown and shown[0].body == {"channel_id": DM_ADA, "parent_id": ""}
    assert shown[0].at <= post["at"]


def test_someone_not_allowed_gets_no_agent_access(gw: Gateway, server: FakeMattermost,
                                                  llm: Since) -> None:
    server.push("@hermes do something", user_id=EVE, channel_id=TOWN, channel_type="O")
    [offer] = say_and_wait(server, DM_EVE, "let me in", user_id=EVE, username="eve")
    assert "hermes pairing approve mattermost " in offer
    # a user who names herself "ada" is still Eve: the id decides
    server.push("I am ada", user_id=EVE, username="ada", channel_id=DM_EVE)
    say_and_wait(server, DM_ADA, "after eve", user_id=ADA)
    assert [r.last_user_text for r in llm.requests] == ["after eve"]
    assert server.texts(TOWN) == [] and len(server.texts(DM_EVE)) == 1
    log = (gw.home / "logs" / "gateway.log").read_text()
    assert "message refused: sender not allowed" in log and "do something" not in log


def test_pairing_through_the_chat_and_the_cli(served: tuple[Gateway, dict[str, str]],
                                              server: FakeMattermost, llm: Since) -> None:
    gw, environ = served
    newbie, dm = new_id(), new_id()
    [offer] = say_and_wait(server, dm, "hi, I'm new", user_id=newbie, username="newbie")
    code = re.search(r"pairing approve mattermost ([A-Z0-9]{8})", offer)
    assert code is not None, offer
    approved = subprocess.run([sys.executable, "-m", "hermes", "pairing", "approve",
                               "mattermost", code[1]], env=environ, text=True,
                              capture_output=True, timeout=120)
    assert approved.returncode == 0, approved.stderr
    assert f"paired mattermost user {newbie} (newbie)" in approved.stdout
    [answer] = say_and_wait(server, dm, "now?", user_id=newbie)
    assert answer == "re: now?"
    assert [r.last_user_text for r in llm.requests] == ["now?"]


def test_channels_are_answered_on_mention_and_threads_in_the_thread(
        gw: Gateway, server: FakeMattermost, llm: Since) -> None:
    server.push("just chatting among ourselves", user_id=ADA, channel_id=TOWN,
                channel_type="O")
    [mentioned] = say_and_wait(server, TOWN, "@hermes what time is it", user_id=ADA,
                               channel_type="O")
    assert mentioned == "re: what time is it"
    root = new_id()
    [threaded] = say_and_wait(server, TOWN, "@hermes: and in here?", user_id=BO,
                              channel_type="P", root_id=root)
    assert threaded == "re: and in here?" and server.sent(TOWN)[-1]["root_id"] == root
    # the thread it answered in goes on without a mention
    [again] = say_and_wait(server, TOWN, "and tomorrow?", user_id=ADA, channel_type="P",
                           root_id=root)
    assert again == "re: and tomorrow?" and server.sent(TOWN)[-1]["root_id"] == root
    assert [r.last_user_text for r in llm.requests] == ["what time is it", "and in here?",
                                                        "and tomorrow?"]


def test_an_image_attached_to_a_post_reaches_the_model_with_its_text(
        gw: Gateway, server: FakeMattermost, llm: Since) -> None:
    photo = server.file(JPEG, "photo.jpg", "image/jpeg")
    [answer] = say_and_wait(server, DM_ADA, "what is in this photo?", user_id=ADA,
                            files=[photo])
    assert answer == "re: what is in this photo?"
    assert wire_images(llm.requests[-1]) == [("image/jpeg", base64.b64encode(JPEG).decode())]
    assert server.of("GET", f"/files/{photo['id']}")


def test_an_audio_file_goes_to_the_voice_service(gw: Gateway, server: FakeMattermost,
                                                 llm: Since) -> None:
    recording = server.file(b"OggS a recording", "recording.ogg", "audio/ogg")
    [answer] = say_and_wait(server, DM_ADA, "", user_id=ADA, files=[recording])
    assert answer.startswith("(voice messages are off here") and llm.requests == []


def test_long_answers_are_split_under_the_post_limit(gw: Gateway,
                                                     server: FakeMattermost) -> None:
    texts = say_and_wait(server, DM_ADA, "a long answer please", count=3, user_id=ADA)
    assert "\n\n".join(texts) == LONG
    assert all(len(t) <= 16383 for t in texts) and len(texts) > 1
    assert all(t.startswith("Paragraph") for t in texts)


def test_a_429_is_retried_after_the_reset(gw: Gateway, server: FakeMattermost) -> None:
    server.fail("POST", "/posts", 429, "too many requests",
                headers={"X-Ratelimit-Limit": "10", "X-Ratelimit-Remaining": "0",
                         "X-Ratelimit-Reset": "2"})
    start = len(server.of("POST", "/posts"))
    [answer] = say_and_wait(server, DM_ADA, "rate me", user_id=ADA)
    assert answer == "re: rate me"
    refused, delivered = server.of("POST", "/posts")[start:start + 2]
    assert (refused.status, delivered.status) == (429, 200)
    assert delivered.at - refused.at >= 1.9


def test_approval_in_a_channel_from_allowed_and_disallowed_users(
        gw: Gateway, server: FakeMattermost, workspace: Path) -> None:
    victim = workspace / "victim"
    victim.mkdir()
    [question] = say_and_wait(server, TOWN, f"@hermes delete {victim} now", user_id=ADA,
                              channel_type="O")
    assert f"rm -rf {victim}" in question and "/approve" in question and "/deny" in question
    server.push("@hermes /approve", user_id=EVE, channel_id=TOWN, channel_type="O")
    [ack, done] = say_and_wait(server, TOWN, "@hermes /approve", count=2, user_id=BO,
                               channel_type="O")
    assert ack == "approved (once): running it"
    assert done.startswith("tool said:") and not victim.exists()
    audit = (gw.home / "logs" / "approvals.jsonl").read_text().splitlines()
    assert json.loads(audit[-1])["by"] == "user (once)"


def test_deny_in_a_direct_message(gw: Gateway, server: FakeMattermost,
                                  workspace: Path) -> None:
    kept = workspace / "kept"
    kept.mkdir()
    say_and_wait(server, DM_BO, f"delete {kept} please", user_id=BO)
    [ack, done] = say_and_wait(server, DM_BO, "@hermes /deny", count=2, user_id=BO)
    assert ack == "denied: the command will not run"
    assert "the user denied this command" in done and kept.exists()


def test_cron_delivers_to_a_channel_and_the_home_channel(
        hermes, root: Path, server: FakeMattermost, fake_llm: FakeLLM) -> None:
    configure_messaging(root, fake_llm.openai_base_url, {"mattermost": mattermost(server)},
                        {"MATTERMOST_TOKEN": TOKEN})
    other = new_id()
    home_job = ok(hermes("cron", "add", "every 1d", "Summarise the backups", "--deliver",
                         "mattermost")).split()[2]
    other_job = ok(hermes("cron", "add", "every 1d", "Count the tickets", "--deliver",
                          f"mattermost:{other}")).split()[2]
    jobs = root / "cron" / "jobs.json"
    data = json.loads(jobs.read_text())
    for job in data["jobs"]:  # due now
        job["next_run"] = "2000-01-01T00:00:00+00:00"
    jobs.write_text(json.dumps(data))
    ticked = ok(hermes("cron", "tick"))
    assert f"{home_job} (Summarise the backups): ok, delivered to mattermost:{TOWN}" in ticked
    assert f"{other_job} (Count the tickets): ok, delivered to mattermost:{other}" in ticked
    assert server.texts(TOWN)[-1] == "Done: Summarise the backups"
    assert server.texts(other) == ["Done: Count the tickets"]


def test_posts_made_while_the_websocket_was_cut_are_answered(
        gw: Gateway, server: FakeMattermost, llm: Since) -> None:
    say_and_wait(server, DM_ADA, "before the cut", user_id=ADA)
    start = len(server.texts(DM_ADA))
    server.refuse_websockets = True  # no connection until the posts are in
    try:
        server.drop()
        wait_until(lambda: not server.connected, what="the WebSocket cut")
        server.push("posted while cut off", user_id=ADA, channel_id=DM_ADA)
        server.push("and another", user_id=ADA, channel_id=DM_ADA)
    finally:
        server.refuse_websockets = False
    wait_until(lambda: len(server.texts(DM_ADA)) >= start + 2, timeout=90,
               what="both answers")
    assert server.texts(DM_ADA)[start:] == ["re: posted while cut off", "re: and another"]
    asked = [r.last_user_text for r in llm.requests]
    assert asked == ["before the cut", "posted while cut off", "and another"]  # each once


def test_reconnects_after_the_server_restarts_without_losing_replies(
        gw: Gateway, server: FakeMattermost, script: Scripted, llm: Since) -> None:
    script.hold.clear()
    start = len(server.texts(DM_ADA))
    try:
        server.push("a slow question", user_id=ADA, channel_id=DM_ADA)
        wait_until(lambda: [r for r in llm.requests if r.last_user_text == "a slow question"],
                   what="the turn to start")
        server.stop()
        wait_until(lambda: _state(gw) == "reconnecting", what="status reconnecting")
    finally:
        script.hold.set()  # the answer is ready while the server is down: it must wait
    server.start()
    wait_until(lambda: server.connected, timeout=90, what="the WebSocket again")
    wait_until(lambda: len(server.texts(DM_ADA)) > start, timeout=90, what="the answer")
    [answer] = say_and_wait(server, DM_ADA, "and now?", user_id=ADA)
    assert server.texts(DM_ADA)[start:] == ["re: a slow question", answer]
    wait_until(lambda: _state(gw) == "running", what="status running again")
    log = (gw.home / "logs" / "gateway.log").read_text()
    assert "connection lost" in log and "reconnected" in log and TOKEN not in log


def test_a_refused_token_stops_the_gateway_in_one_line(
        tmp_path: Path, environ: dict[str, str], root: Path, server: FakeMattermost,
        fake_llm: FakeLLM) -> None:
    configure_messaging(root, fake_llm.openai_base_url, {"mattermost": mattermost(server)},
                        {"MATTERMOST_TOKEN": "not-the-token"})
    with gateway(environ, root, ready=False) as gw:  # its only platform cannot start
        wait_until(lambda: gw.proc.poll() is not None, timeout=90, what="the gateway exit")
        output = gw.output().strip()
    assert gw.proc.returncode == 2 and "\n" not in output, output
    assert output.startswith(f"error: no platform could start: default/mattermost: "
                             f"{server.url} rejected the token")
    assert "not-the-token" not in output


def _state(gw: Gateway) -> str:
    try:
        return str(json.loads((gw.home / "gateway.json").read_text())["platforms"]
                   ["mattermost"]["state"])
    except (OSError, ValueError, KeyError):
        return ""


def test_doctor_checks_the_token_with_one_call(hermes, root: Path, server: FakeMattermost,
                                               fake_llm: FakeLLM) -> None:
    configure_messaging(root, fake_llm.openai_base_url, {"mattermost": mattermost(server)},
                        {"MATTERMOST_TOKEN": TOKEN})
    before = len(server.of("GET", "/users/me"))
    out = hermes("doctor").stdout
    row = next(line for line in out.splitlines() if "platform mattermost" in line)
    assert "ok" in row and f"@hermes on {server.url}" in out
    assert len(server.of("GET", "/users/me")) == before + 1
    (root / ".env").write_text("CUSTOM_API_KEY=sk-fake-test-key-1234\n"
                               "MATTERMOST_TOKEN=revoked-token\n")
    refused = hermes("doctor")
    assert refused.exit_code == 1 and "HTTP 401" in refused.stdout
    assert "revoked-token" not in refused.stdout


def test_a_server_without_its_scheme_is_refused_in_one_line(hermes, root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    refused(hermes("config", "set", "platforms.enabled.mattermost",
                   '{kind: mattermost, token: "${secret:MATTERMOST_TOKEN}", settings: '
                   '{url: chat.example.org}}'),
            "platforms.enabled.mattermost.settings.url", "https://chat.example.org")
    assert not (root / "config.yaml").exists()


def test_a_token_revoked_while_serving_fails_the_platform(gw: Gateway,
                                                         server: FakeMattermost) -> None:
    """Last in the module (tests run in file order): the platform does not come back."""
    server.token = "a-new-token"  # the old one is revoked
    try:
        server.drop()
        wait_until(lambda: _state(gw) == "failed", timeout=90, what="status failed")
    finally:
        server.token = TOKEN
    detail = json.loads((gw.home / "gateway.json").read_text())["platforms"]["mattermost"][
        "detail"]
    assert detail.startswith(f"{server.url} rejected the token") and TOKEN not in detail
