"""Approving a dangerous command by email, end to end against the real mail servers
(dovecot and the SMTP server in front of it, tests/mail_support.py), a real gateway
process and the fake LLM: the question arrives in the asker's thread; `/approve` from a
sender not allowed, from an allowed person writing in their own name about someone
else's thread, and from a forged From are all refused; the asker's own `/approve`,
written by a phone's mail client (a signature and the quote under it), runs the command.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest

from conftest import wait_until
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import Gateway, gateway
from mail_support import AUTHSERV, MailServers, mail, send
from messaging_support import configure_messaging, module_home, platform_detail

AGENT = "keeper@hermes.test"
ANN = "ann@hermes.test"  # allowed; she asks
CAL = "cal@hermes.test"  # allowed too, but it is not his conversation
BEN = "ben@hermes.test"  # not allowed


def answer(request: RecordedRequest) -> Reply:
    """``delete PATH`` asks for ``rm -rf PATH``, then says what the tool said."""
    text = request.last_user_text or ""
    if "delete " in text and not request.tool_results:
        target = text.split("delete ", 1)[1].split()[0]
        return Reply(tool_calls=[ToolCall("terminal", {"command": f"rm -rf {target}"})])
    if request.tool_results:
        return Reply(text=f"tool said: {str(request.tool_results[-1].content)[:80]}")
    return Reply(text=f"Answer: {text[:60]}")


@pytest.fixture(scope="module")
def servers(mail_servers: MailServers) -> MailServers:
    for user in (AGENT, ANN, CAL, BEN):
        mail_servers.dovecot.add_user(user, f"pw-{user.partition('@')[0]}-0123456789")
    return mail_servers


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspace")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, servers: MailServers,
           workspace: Path) -> Iterator[Gateway]:
    dovecot, smtp = servers.dovecot, servers.smtp
    with FakeLLM(fallback=answer, strict=False) as fake, \
            module_home(tmp_path_factory) as (root, environ):
        configure_messaging(root, fake.openai_base_url, {"email": {
            "kind": "email", "token": "${secret:EMAIL_PASSWORD}", "allowed_users": [ANN, CAL],
            "settings": {"address": AGENT, "imap_host": "127.0.0.1", "imap_port": dovecot.port,
                         "imap_tls": "none", "smtp_host": "127.0.0.1", "smtp_port": smtp.port,
                         "smtp_tls": "none", "authserv_id": AUTHSERV, "send_rate": 50}}},
            {"EMAIL_PASSWORD": dovecot.users[AGENT]}, approvals={"chat_timeout": 180},
            environment={"cwd": str(workspace)})
        with gateway(environ, root, ready=False) as gw:
            platform_detail(gw, "email")
            yield gw


def in_thread(servers: MailServers, to: str, question: EmailMessage, count: int = 1
              ) -> list[EmailMessage]:
    """The first ``count`` messages to ``to`` answering ``question``, oldest first."""
    def found() -> list[EmailMessage]:
        return [m for _flags, m in servers.dovecot.inbox(to)
                if m.get("In-Reply-To") == question["Message-ID"]]

    got = wait_until(lambda: len(found()) >= count and found(), 90, f"{count} answer(s)")
    assert isinstance(got, list)
    return got[:count]


def text_of(message: EmailMessage) -> str:
    return str(message.get_content()).replace("\r\n", "\n")


def log_events(gw: Gateway) -> list[dict[str, object]]:
    lines = (gw.home / "logs" / "gateway.log").read_text().splitlines()
    return [json.loads(line) for line in lines]


def logged(gw: Gateway, event: str, **fields: str) -> bool:
    return any(e["event"] == event and all(e.get(k) == v for k, v in fields.items())
               for e in log_events(gw))


def test_only_the_asker_approves_by_replying_in_the_thread(
        served: Gateway, servers: MailServers, workspace: Path) -> None:
    smtp = servers.smtp
    victim = workspace / "victim"
    victim.mkdir()
    asked = mail(ANN, AGENT, "Clean up", f"Please delete {victim} for me")
    send(smtp, asked, login=ANN)
    [question] = in_thread(servers, ANN, asked)
    assert f"rm -rf {victim}" in text_of(question) and "/approve" in text_of(question)

    strangers = mail(BEN, AGENT, question["Subject"], "/approve", reply_to=question)
    send(smtp, strangers, login=BEN)  # authenticated, but not allowed: a pairing offer
    assert "hermes pairing approve email " in text_of(in_thread(servers, BEN, strangers)[0])
    colleagues = mail(CAL, AGENT, question["Subject"], "/approve", reply_to=question)
    send(smtp, colleagues, login=CAL)  # allowed, but Ann's command is not his to approve
    [refused] = in_thread(servers, CAL, colleagues)
    assert text_of(refused).startswith("nothing is waiting for approval here")
    forged = mail(ANN, AGENT, question["Subject"], "/approve", reply_to=question)
    send(smtp, forged)  # From: Ann, but not logged in as her: dmarc=fail
    wait_until(lambda: logged(served, "mail refused: sender not authenticated",
                              message=forged["Message-ID"]), 60, "the forgery refused")
    assert victim.exists()

    approval = mail(ANN, AGENT, question["Subject"], "/approve\n\nSent from my phone\n\n"
                    f"On {question['Date']}, {AGENT} wrote:\n> "
                    + "\n> ".join(text_of(question).splitlines()), reply_to=question)
    send(smtp, approval, login=ANN)
    ack, done = in_thread(servers, ANN, approval, 2)
    assert text_of(ack).startswith("approved (once): running it")
    assert text_of(done).startswith("tool said:") and not victim.exists()
    audit = (served.home / "logs" / "approvals.jsonl").read_text().splitlines()
    assert json.loads(audit[-1])["by"] == "user (once)"
    assert logged(served, "chat approval", user=ANN, choice="once")
    assert not logged(served, "chat approval", user=CAL)
