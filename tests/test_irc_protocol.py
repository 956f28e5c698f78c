"""IRC lines and text, without a server: what is parsed from a line (tags, source,
trailing), what may be written (no line break smuggled into a command), answers cut to
the byte budget of the relayed line (never inside a character), formatting and Markdown
taken out, fallback nicks, and the allowlist's masks and accounts. The settings refuse
what would leak a password or cannot be a nick, through the real CLI."""

from __future__ import annotations

import pytest

from conftest import ok, refused
from hermes.errors import ConfigError
from hermes.gateway.irc.client import fallback
from hermes.gateway.irc.identity import AllowList, Sender
from hermes.gateway.irc.protocol import (
    MAX_LINE,
    ProtocolError,
    line,
    message_budget,
    messages,
    parse,
    plain_text,
    received_text,
)


def test_a_line_is_parsed_with_its_tags_source_and_trailing_parameter() -> None:
    got = parse(r"@account=alice;msgid=a\sb\:c :alice!a@host.example PRIVMSG #ops :hi: there")
    assert got.tags == {"account": "alice", "msgid": "a b;c"}
    assert (got.source, got.nick, got.command, got.params) == (
        "alice!a@host.example", "alice", "PRIVMSG", ["#ops", "hi: there"])
    assert parse("PING :irc.test").params == ["irc.test"]
    assert parse(":irc.test 001 hermes :Welcome").params == ["hermes", "Welcome"]


def test_no_line_break_or_bad_middle_parameter_is_written() -> None:
    assert line("PRIVMSG", "#ops", "hello there") == "PRIVMSG #ops :hello there\r\n"
    assert line("NICK", "hermes") == "NICK hermes\r\n"
    assert line("PRIVMSG", "bob", ":)") == "PRIVMSG bob ::)\r\n"
    with pytest.raises(ProtocolError):
        line("PRIVMSG", "#ops", "hi\r\nQUIT :pwned")
    with pytest.raises(ProtocolError):
        line("PRIVMSG", "#ops other", "hi")


@pytest.mark.parametrize("target", ["#ops", "someone-with-a-long-nick", "#" + "x" * 49])
def test_every_relayed_line_fits_in_512_bytes(target: str) -> None:
    text = ("é" * 300 + " ") * 3 + "😀" * 400 + "\n\n" + "word " * 200
    prefix = len(":hermes!~hermes@irc.example.org ")
    parts = messages(text, message_budget(target, prefix))
    for part in parts:
        relayed = f":hermes!~hermes@irc.example.org PRIVMSG {target} :{part}\r\n"
        assert len(relayed.encode()) <= MAX_LINE
    assert max(len(f"PRIVMSG {target} :{p}\r\n".encode()) + prefix for p in parts) > 500
    assert "".join(parts).replace(" ", "") == text.replace(" ", "").replace("\n", "")


def test_each_line_is_its_own_message_and_blank_lines_are_dropped() -> None:
    assert messages("one\ntwo\n\n\nthree  \n", 400) == ["one", "two", "three"]


def test_formatting_markdown_and_ctcp_are_taken_out() -> None:
    text = "## Title\n**bold** and `code` \x02b\x02 \x0304,01red\x03 \x01ACTION hi\x01\tx\n" \
           "```python\nprint(1)\n```\n[docs](https://example.org)"
    assert plain_text(text) == "Title\nbold and code b red ACTION hi    x\nprint(1)\n" \
                               "docs (https://example.org)"
    assert received_text("\x02hermes\x02: \x1fhi\x1f ") == "hermes: hi"


def test_fallback_nicks_keep_their_underscores_within_the_limit() -> None:
    assert [fallback("hermes", n) for n in (1, 2, 3, 4)] == [
        "hermes_", "hermes__", "hermes___", "hermes___1"]
    assert fallback("hermesagent", 2, 9) == "hermesa__"


def test_the_allowlist_matches_masks_and_accounts_and_names_the_sender() -> None:
    allow = AllowList(["alice!*@*.example.org", "$a:Bob"], "platforms.enabled.irc.allowed_users")
    assert allow.user_id(Sender("Alice", "~a", "home.example.org")) == "alice!*@*.example.org"
    assert allow.user_id(Sender("alice", "~a", "evil.test")) == "alice!~a@evil.test"
    assert allow.user_id(Sender("anyone", "x", "y", "bob")) == "$a:Bob"
    assert allow.user_id(Sender("bob", "x", "y", "mallory")) == "$a:mallory"
    assert allow.user_id(Sender("bob", "x", "y", "")) == "bob!x@y"


@pytest.mark.parametrize("entry", ["alice", "alice@host", "$a:"])
def test_a_bare_nick_is_refused_as_an_allowed_user(entry: str) -> None:
    with pytest.raises(ConfigError) as caught:
        AllowList([entry], "platforms.enabled.irc.allowed_users")
    assert caught.value.key == "platforms.enabled.irc.allowed_users"


def test_settings_are_refused_in_one_line(hermes) -> None:
    key = "platforms.enabled.irc"
    refused(hermes("config", "set", key, "{kind: irc, settings: {server: irc.example.org, "
                   "tls: false, password: secret-pw}}"), "in the clear")
    refused(hermes("config", "set", key, "{kind: irc, settings: {server: irc.example.org, "
                   "nick: '9lives'}}"), "not an irc nick")
    refused(hermes("config", "set", key, "{kind: irc, settings: {server: irc.example.org, "
                   "channels: [ops]}}"), "is not an irc channel")
    ok(hermes("config", "set", key, "{kind: irc, settings: {server: 127.0.0.1, tls: false, "
              "password: secret-pw}}"))
