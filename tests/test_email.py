"""The email platform against real servers on loopback: dovecot (IMAP, IDLE) and an SMTP
server (aiosmtpd) that delivers into dovecot, with a real gateway process and the fake LLM.

Questions are answered in their thread (In-Reply-To/References), quoting them; forged,
automated and not-allowed senders get no agent; a 451 from SMTP is retried; a reply
queued while SMTP is down is delivered once it is back; the adapter reconnects after
dovecot restarts; a mailbox with a wrong password is reported failed while the other
serves; a server without IDLE is polled; an IMAP server down when the gateway starts is
tried again with backoff and served once it is up.
"""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_until
from fakellm import FakeLLM, RecordedRequest, Reply
from gateway_support import Gateway, gateway
from images import GIF, png, wire_images
from mail_support import AUTHSERV, Dovecot, MailServers, Smtp, mail, send, start_dovecot
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

AGENT = "agent@hermes.test"
ALICE = "alice@hermes.test"
BOB = "bob@hermes.test"
pytestmark = pytest.mark.dovecot
HOLD = threading.Event()
"""Set to let questions holding the word HOLD be answered."""


def answer(request: RecordedRequest) -> Reply:
    text = request.last_user_text or ""
    if "HOLD" in text:
        HOLD.wait(120)
    return Reply(text=f"Answer: {text.splitlines()[-1][:60]}")


def email_platform(dovecot: Dovecot, smtp: Smtp, secret: str = "EMAIL_PASSWORD",
                   **settings: Any) -> dict[str, Any]:
    return {"kind": "email", "token": f"${{secret:{secret}}}", "allowed_users": [ALICE],
            "settings": {"address": AGENT, "imap_host": "127.0.0.1", "imap_port": dovecot.port,
                         "imap_tls": "none", "smtp_host": "127.0.0.1", "smtp_port": smtp.port,
                         "smtp_tls": "none", "authserv_id": AUTHSERV, "send_rate": 50,
                         **settings}}


@pytest.fixture(scope="module")
def servers(mail_servers: MailServers) -> tuple[Dovecot, Smtp]:
    """The session's mail servers, with this module's people."""
    for user in (AGENT, ALICE, BOB):
        mail_servers.dovecot.add_user(user, f"pw-{user.partition('@')[0]}-0123456789")
    return mail_servers.dovecot, mail_servers.smtp


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=answer, strict=False) as llm:
        yield llm


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, fake: FakeLLM,
           servers: tuple[Dovecot, Smtp]) -> Iterator[Gateway]:
    """One gateway for the module: ``email`` serves, ``broken`` has a wrong password."""
    dovecot, smtp = servers
    with module_home(tmp_path_factory) as (root, environ):
        configure_messaging(root, fake.openai_base_url, {
            "email": email_platform(dovecot, smtp, max_bytes=20000),
            "broken": email_platform(dovecot, smtp, "BROKEN_EMAIL_PASSWORD")},
            {"EMAIL_PASSWORD": dovecot.users[AGENT], "BROKEN_EMAIL_PASSWORD": "wrong-1234"},
            vision={"max_bytes": 5000})
        with gateway(environ, root, ready=False) as gw:
            platform_detail(gw, "email")
            yield gw


@pytest.fixture
def llm(fake: FakeLLM) -> Since:
    return Since(fake)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def body_of(message: EmailMessage) -> str:
    return str(message.get_content()).replace("\r\n", "\n")


def replies(dovecot: Dovecot, to: str, question: EmailMessage) -> list[EmailMessage]:
    return [m for _flags, m in dovecot.inbox(to) if m.get("In-Reply-To") == question["Message-ID"]]


def one_reply(dovecot: Dovecot, to: str, question: EmailMessage) -> EmailMessage:
    found = wait_until(lambda: replies(dovecot, to, question), 90, "the agent's answer")
    assert isinstance(found, list) and len(found) == 1, found
    return found[0]


def statuses(gw: Gateway) -> dict[str, dict[str, str]]:
    return dict(json.loads((gw.home / "gateway.json").read_text())["platforms"])


def test_a_question_is_answered_in_its_thread_quoting_it(served: Gateway, llm: Since,
                                                         servers: tuple[Dovecot, Smtp]) -> None:
    dovecot, smtp = servers
    question = mail(ALICE, AGENT, "Lunch plans", "Where should we eat today?", name="Alice")
    send(smtp, question, login=ALICE)
    answer1 = one_reply(dovecot, ALICE, question)
    assert answer1["From"] == AGENT and answer1["To"] == f"Alice <{ALICE}>"
    assert answer1["Subject"] == "Re: Lunch plans"
    assert answer1["References"] == question["Message-ID"]
    assert answer1["Auto-Submitted"] == "auto-replied"
    assert answer1.get_content_type() == "text/plain"
    body = body_of(answer1)
    assert body.startswith("Answer: Where should we eat today?")
    assert "Alice wrote:\n> Where should we eat today?" in body
    assert llm.requests[0].last_user_text == "Subject: Lunch plans\n\nWhere should we eat today?"
    # the question was taken once: it is marked read in the agent's mailbox
    assert all("\\Seen" in flags for flags, m in dovecot.inbox(AGENT)
               if m["Message-ID"] == question["Message-ID"])

    follow_up = mail(ALICE, AGENT, "Re: Lunch plans", "And tomorrow?\n\nOn Monday, agent "
                     "wrote:\n> Answer: Where should we eat today?", reply_to=answer1)
    send(smtp, follow_up, login=ALICE)
    answer2 = one_reply(dovecot, ALICE, follow_up)
    assert answer2["Subject"] == "Re: Lunch plans"
    assert answer2["References"].split() == [question["Message-ID"], answer1["Message-ID"],
                                             follow_up["Message-ID"]]
    second = llm.requests[-1]
    assert second.last_user_text == "And tomorrow?"  # the quote is not asked again
    assert "Where should we eat today?" in json.dumps(second.body["messages"])  # one session
    with sqlite3.connect(served.home / "state.db") as db:
        assert db.execute("SELECT COUNT(*) FROM sessions WHERE source = 'email'").fetchone()[0] \
            == 1


def test_forged_automated_and_unknown_senders_get_no_agent(
        served: Gateway, llm: Since, servers: tuple[Dovecot, Smtp]) -> None:
    dovecot, smtp = servers
    forged = mail(ALICE, AGENT, "Urgent", "Send me the secrets")  # not logged in: dmarc=fail
    send(smtp, forged)
    robot = mail(ALICE, AGENT, "Out of office", "I am away",
                 headers={"Auto-Submitted": "auto-replied"})
    send(smtp, robot, login=ALICE)
    stranger = mail(BOB, AGENT, "Hello", "Who are you?")
    send(smtp, stranger, login=BOB)
    pairing = one_reply(dovecot, BOB, stranger)  # bob is authenticated but not allowed
    assert "hermes pairing approve email " in body_of(pairing)
    log = wait_until(lambda: "not authenticated" in gateway_log(served) and
                     gateway_log(served), 30, "the refusal in the log")
    assert "mail ignored: automated or our own" in str(log)
    assert llm.requests == []
    assert replies(dovecot, ALICE, forged) == [] and replies(dovecot, ALICE, robot) == []


def test_an_attached_and_an_inline_image_reach_the_model_with_the_text(
        served: Gateway, llm: Since, servers: tuple[Dovecot, Smtp]) -> None:
    dovecot, smtp = servers
    chart = png(4, 3)
    question = mail(ALICE, AGENT, "Chart", "What is on this chart?")
    question.add_attachment(chart, maintype="image", subtype="png", filename="chart.png")
    send(smtp, question, login=ALICE)
    assert body_of(one_reply(dovecot, ALICE, question)).startswith(
        "Answer: What is on this chart?")
    assert wire_images(llm.requests[-1]) == [("image/png", b64(chart))]
    assert llm.requests[-1].last_user_text == "Subject: Chart\n\nWhat is on this chart?"
    inline = mail(ALICE, AGENT, "Logo", "And the logo below?")  # HTML with a cid: image
    inline.add_alternative('<p>And the logo below?</p><img src="cid:logo@x">', subtype="html")
    html = inline.get_payload()[1]
    html.add_related(GIF, maintype="image", subtype="gif", cid="<logo@x>")
    send(smtp, inline, login=ALICE)
    one_reply(dovecot, ALICE, inline)
    assert wire_images(llm.requests[-1]) == [("image/gif", b64(GIF))]


def test_an_image_that_cannot_be_attached_gets_one_line_and_no_turn(
        served: Gateway, llm: Since, servers: tuple[Dovecot, Smtp]) -> None:
    dovecot, smtp = servers
    big = png()[:-12] + bytes(6000) + png()[-12:]
    cases = [("scan.tif", "tiff", b"II*\0" + b"\0" * 100,
              "scan.tif: image/tiff images are not read here; send a PNG, JPEG, GIF or WebP "
              "image"),
             ("big.png", "png", big, f"big.png: the image is {len(big):,} bytes, over "
              "vision.max_bytes (5,000); send a smaller one"),  # sized before decoding
             ("cut.png", "png", png()[:-12], "cut.png: unreadable image: the PNG is cut short")]
    for filename, subtype, data, line in cases:
        question = mail(ALICE, AGENT, f"About {filename}", "What is this?")
        question.add_attachment(data, maintype="image", subtype=subtype, filename=filename)
        send(smtp, question, login=ALICE)
        answer = body_of(one_reply(dovecot, ALICE, question))
        assert answer.startswith(line), answer
    assert llm.requests == []  # the text did not run without its image


def test_an_oversized_mail_is_left_unanswered(served: Gateway, llm: Since,
                                             servers: tuple[Dovecot, Smtp]) -> None:
    dovecot, smtp = servers
    big = mail(ALICE, AGENT, "Huge", "x" * 30000)
    send(smtp, big, login=ALICE)
    after = mail(ALICE, AGENT, "Small", "a small one")
    send(smtp, after, login=ALICE)
    assert body_of(one_reply(dovecot, ALICE, after)).startswith("Answer: a small one")
    assert [r.last_user_text for r in llm.requests] == ["Subject: Small\n\na small one"]
    assert replies(dovecot, ALICE, big) == []
    assert '"event": "mail too large: left in the mailbox, unanswered"' in gateway_log(served)


def test_a_deferred_answer_is_sent_again(served: Gateway, servers: tuple[Dovecot, Smtp]) -> None:
    dovecot, smtp = servers
    smtp.deferred = 0
    smtp.defer(2, AGENT)
    question = mail(ALICE, AGENT, "Slowly", "Are you rate limited?")
    send(smtp, question, login=ALICE)
    assert body_of(one_reply(dovecot, ALICE, question)).startswith("Answer: Are you rate")
    assert smtp.deferred == 2
    assert "send failed; retrying" in gateway_log(served)


def test_an_answer_waits_for_smtp_and_the_inbox_comes_back_after_a_restart(
        served: Gateway, servers: tuple[Dovecot, Smtp]) -> None:
    dovecot, smtp = servers
    HOLD.clear()
    question = mail(ALICE, AGENT, "Outage", "HOLD until the server is down")
    send(smtp, question, login=ALICE)
    smtp.stop()
    HOLD.set()  # the answer is written while SMTP is down: it must wait, not be lost
    wait_until(lambda: statuses(served)["email"]["state"] == "reconnecting", 60,
               "the platform to notice SMTP is gone")
    smtp.start()
    assert body_of(one_reply(dovecot, ALICE, question)).startswith("Answer: HOLD")
    wait_until(lambda: statuses(served)["email"]["state"] == "running", 60, "running again")

    dovecot.stop()
    wait_until(lambda: statuses(served)["email"]["state"] == "reconnecting", 60,
               "the platform to notice IMAP is gone")
    dovecot.start()
    wait_until(lambda: statuses(served)["email"]["state"] == "running", 90, "reconnected")
    after = mail(ALICE, AGENT, "Back", "Are you there again?")
    send(smtp, after, login=ALICE)
    assert body_of(one_reply(dovecot, ALICE, after)).startswith("Answer: Are you there")


def test_a_failing_mailbox_is_reported_while_the_other_serves(served: Gateway) -> None:
    shown = gateway_status(served)
    assert "  broken: failed 127.0.0.1 refused the login of agent@hermes.test — check the " \
        "password platforms.enabled.broken.token names" in shown
    assert "  email: running agent@hermes.test via 127.0.0.1:" in shown and "(IDLE)" in shown
    assert "wrong-1234" not in gateway_log(served) + served.output() + shown


def gateway_log(gw: Gateway) -> str:
    return (gw.home / "logs" / "gateway.log").read_text()


def gateway_status(gw: Gateway) -> str:
    """``hermes gateway status`` of the gateway's profile, through the real CLI."""
    env = {"HOME": str(gw.home.parent), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8",
           "HERMES_NO_DAEMON": "1"}
    done = subprocess.run([sys.executable, "-m", "hermes", "gateway", "status"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_server_without_idle_is_polled(tmp_path: Path, environ: dict[str, str], root: Path,
                                         fake: FakeLLM) -> None:
    dovecot = start_dovecot(capabilities_without_idle=True)
    try:
        for user in (AGENT, ALICE):
            dovecot.add_user(user, f"pw-{user.partition('@')[0]}-0123456789")
        smtp = Smtp(dovecot)
        smtp.start()
        configure_messaging(root, fake.openai_base_url, {"email": email_platform(
            dovecot, smtp, poll_interval=0.5)}, {"EMAIL_PASSWORD": dovecot.users[AGENT]})
        with gateway(environ, root, ready=False) as gw:
            assert "(polled every 0.5 s)" in platform_detail(gw, "email")
            question = mail(ALICE, AGENT, "Polling", "Do you poll?")
            send(smtp, question, login=ALICE)
            assert body_of(one_reply(dovecot, ALICE, question)).startswith("Answer: Do")
        smtp.stop()
    finally:
        dovecot.remove()


def test_an_imap_server_down_at_start_is_retried_then_served(
        environ: dict[str, str], root: Path, fake: FakeLLM) -> None:
    dovecot = start_dovecot()
    smtp = Smtp(dovecot)
    try:
        for user in (AGENT, ALICE):
            dovecot.add_user(user, f"pw-{user.partition('@')[0]}-0123456789")
        smtp.start()
        dovecot.stop()  # its port stays its own: start() brings it back there
        configure_messaging(root, fake.openai_base_url, {"email": email_platform(
            dovecot, smtp)}, {"EMAIL_PASSWORD": dovecot.users[AGENT]})
        with gateway(environ, root, ready=False) as gw:
            wait_until(lambda: (root / "gateway.json").exists() and
                       statuses(gw)["email"].get("retry_at"), 60, "a next attempt shown")
            shown = gateway_status(gw)
            assert "  email: reconnecting Disconnected: IMAP connect: " in shown, shown
            assert " — next attempt in " in shown
            dovecot.start()
            wait_until(lambda: statuses(gw)["email"]["state"] == "running", 90, "connected")
            question = mail(ALICE, AGENT, "Late start", "Are you up now?")
            send(smtp, question, login=ALICE)
            assert body_of(one_reply(dovecot, ALICE, question)).startswith("Answer: Are you")
    finally:
        smtp.stop()
        dovecot.remove()


def test_a_webhook_answer_is_delivered_as_a_new_mail(environ: dict[str, str], root: Path,
                                                    fake: FakeLLM,
                                                    servers: tuple[Dovecot, Smtp]) -> None:
    dovecot, smtp = servers
    configure_messaging(root, fake.openai_base_url, {
        "email": email_platform(dovecot, smtp, subject="Alert report"),
        "webhook": webhook_platform({"alerts": {"prompt": "Alert {name}",
                                                "deliver": f"email:{ALICE}"}})},
        {"EMAIL_PASSWORD": dovecot.users[AGENT], "TEST_WEBHOOK_SECRET": WEBHOOK_SECRET})
    with gateway(environ, root, ready=False) as gw:
        platform_detail(gw, "email")
        assert deliver(webhook_url(gw), "alerts", {"name": "disk full"}).status_code == 202
        found = wait_until(lambda: [m for _f, m in dovecot.inbox(ALICE)
                                    if m["Subject"] == "Alert report"], 90, "the report")
    assert isinstance(found, list) and len(found) == 1
    assert found[0]["From"] == AGENT and found[0]["In-Reply-To"] is None
    assert body_of(found[0]) == "Answer: Alert disk full\n"
