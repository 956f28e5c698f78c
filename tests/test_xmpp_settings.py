"""The xmpp platform's settings through the real CLI: ``config set`` refuses a bad value
in one line naming the key (nothing written), including plain text to a server that is
not on loopback; a gateway whose xmpp platform has no password, or allowed users that
are not lower-case bare JIDs, stops with the fix. No server is needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ok, refused, write_fake_provider

XMPP = '{kind: xmpp, token: "${secret:XMPP_PASSWORD}", allowed_users: ["you@example.org"], ' \
       'settings: {jid: hermes@example.org, rooms: ["ops@conference.example.org"]}}'


@pytest.fixture
def profile(root: Path) -> Path:
    write_fake_provider(root, "http://127.0.0.1:9/v1")
    return root / "config.yaml"


@pytest.mark.parametrize(("value", "fragments"), [
    (XMPP.replace("jid: hermes@example.org", "jid: hermes"),
     ["platforms.enabled.xmpp.settings.jid", "not a bare jid; e.g. hermes@example.org"]),
    (XMPP.replace("jid: hermes@example.org", "jid: hermes@example.org/laptop"),
     ["settings.jid", "not a bare jid"]),
    (XMPP.replace('rooms: ["ops@conference.example.org"]', "rooms: [ops]"),
     ["settings.rooms.0", "not a room's jid; e.g. ops@conference.example.org, got 'ops'"]),
    (XMPP.replace("rooms:", "tls: none, host: xmpp.example.org, rooms:"),
     ["platforms.enabled.xmpp.settings", "tls: none would send the password to "
      "xmpp.example.org in the clear"]),
    (XMPP.replace("rooms:", "tls: none, rooms:"),
     ["tls: none would send the password to the jid's server in the clear"]),
    (XMPP.replace("rooms:", "tls: off, rooms:"), ["settings.tls", "'starttls', 'direct'"]),
    (XMPP.replace("rooms:", "room:"), ["settings.room: unknown key", 'did you mean "rooms"']),
])
def test_config_set_refuses_bad_settings(hermes, profile: Path, value: str,
                                         fragments: list[str]) -> None:
    before = profile.read_bytes()
    refused(hermes("config", "set", "platforms.enabled.xmpp", value), *fragments)
    assert profile.read_bytes() == before


def test_good_settings_are_accepted(hermes, profile: Path) -> None:
    ok(hermes("config", "set", "XMPP_PASSWORD", "pw-of-the-agent-1234"))
    ok(hermes("config", "set", "platforms.enabled.xmpp", XMPP.replace(
        "hermes@example.org", "Hermes@Example.org")))
    ok(hermes("config", "set", "platforms.enabled.local", "{kind: xmpp, token: x, settings: "
              "{jid: a@localhost, host: 127.0.0.1, tls: none}}"))
    ok(hermes("config", "validate"))
    get = "platforms.enabled.xmpp.settings"
    assert ok(hermes("config", "get", f"{get}.tls")).strip() == "starttls"
    assert "pw-of-the-agent-1234" not in ok(hermes("config", "show"))


@pytest.mark.parametrize(("platform", "fix"), [
    ("{kind: xmpp, settings: {jid: hermes@example.org}}",
     "platforms.enabled.chat.token: no password — give the account's password by reference"),
    ("{kind: xmpp, token: '${secret:XMPP_PASSWORD}', allowed_users: [You@Example.org/phone], "
     "settings: {jid: hermes@example.org}}",
     "platforms.enabled.chat.allowed_users: write bare JIDs in lower case "
     "('You@Example.org/phone' → 'you@example.org')"),
])
def test_a_gateway_with_bad_credentials_names_the_fix(hermes_subprocess, hermes,
                                                      profile: Path, platform: str,
                                                      fix: str) -> None:
    ok(hermes("config", "set", "XMPP_PASSWORD", "pw-1234-example"))
    ok(hermes("config", "set", "platforms.enabled.chat", platform))
    done = hermes_subprocess("gateway", "run")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert fix in done.stderr and "Traceback" not in done.stderr
