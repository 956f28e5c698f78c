"""The README's Matrix and email section runs as written, in a real shell, against the real
servers: the Synapse homeserver (its server name is example.org, like the README's ids)
and dovecot with the SMTP server in front of it (the README's mailbox and password are
its users'). Test-only steps point the profile at the fake LLM and at the servers'
loopback ports, and give the agent account's real token (a homeserver makes its own
tokens); the README's commands are otherwise unchanged."""

from __future__ import annotations

from pathlib import Path

from conftest import wait_until
from fakellm import FakeLLM, Reply
from gateway_support import gateway
from mail_support import AUTHSERV, MailServers, mail, send
from messaging_support import platform_detail
from readme_support import bash, code_blocks, section
from synapse_support import MatrixClient, Synapse

SECTION = "## Messaging: Matrix and email"


def readme_blocks() -> list[str]:
    return code_blocks(section(SECTION))


def test_the_matrix_and_email_section_runs_as_written(
        environ: dict[str, str], root: Path, tmp_path: Path, synapse: Synapse,
        mail_servers: MailServers) -> None:
    matrix, email = readme_blocks()
    dovecot, smtp = mail_servers.dovecot, mail_servers.smtp
    for user, password in (("hermes@example.org", "app-password-of-the-mailbox"),
                           ("you@example.org", "pw-you-0123456789")):
        dovecot.add_user(user, password)
    agent = synapse.register("readme-agent")
    you = MatrixClient(synapse, synapse.register("you"))
    bash(environ, "hermes profile create work", tmp_path)
    bash(environ, matrix, tmp_path)
    bash(environ, email, tmp_path)
    with FakeLLM(fallback=lambda r: Reply(text=f"re: {r.last_user_text}"),
                 strict=False) as llm:
        for key, value in (("provider", "custom"), ("provider.model", "gpt-4o"),
                           ("provider.api_base", llm.openai_base_url),
                           ("CUSTOM_API_KEY", "sk-fake-test-key-1234"),
                           ("MATRIX_ACCESS_TOKEN", agent.token),
                           ("platforms.enabled.matrix.settings.homeserver", synapse.url),
                           ("platforms.enabled.email.settings.imap_host", "127.0.0.1"),
                           ("platforms.enabled.email.settings.imap_port", str(dovecot.port)),
                           ("platforms.enabled.email.settings.imap_tls", "none"),
                           ("platforms.enabled.email.settings.smtp_host", "127.0.0.1"),
                           ("platforms.enabled.email.settings.smtp_port", str(smtp.port)),
                           ("platforms.enabled.email.settings.smtp_tls", "none"),
                           ("platforms.enabled.email.settings.authserv_id", AUTHSERV)):
            bash(environ, f"hermes -p work config set {key} '{value}'", tmp_path)
        home = root / "profiles" / "work"
        with gateway(environ, home, ["-p", "work"], ready=False) as gw:
            platform_detail(gw, "matrix", timeout=120)
            platform_detail(gw, "email")
            room = you.create_room([agent.user_id])
            wait_until(lambda: you.membership(room, agent.user_id) == "join", 60, "a join")
            you.say(room, "hello from Matrix")
            said = wait_until(lambda: you.from_user(room, agent.user_id), 90, "the answer")
            question = mail("you@example.org", "hermes@example.org", "Hi", "hello by mail")
            send(smtp, question, login="you@example.org")
            answered = wait_until(lambda: [m for _f, m in dovecot.inbox("you@example.org")
                                           if m["In-Reply-To"] == question["Message-ID"]],
                                  90, "the mail answer")
    assert isinstance(said, list) and said[0]["content"]["body"] == "re: hello from Matrix"
    assert isinstance(answered, list)
    assert str(answered[0].get_content()).startswith("re: Subject: Hi\r\n\r\nhello by mail")
