"""The matrix and email platforms' settings are typed and checked when the config is
composed: through the real CLI, ``config set`` refuses a bad value in one line naming
the key (nothing written), and a gateway whose only platform lacks its credentials
stops with the fix instead of serving nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ok, refused, write_fake_provider

MATRIX = '{kind: matrix, token: "${secret:MATRIX_ACCESS_TOKEN}", settings: {homeserver: ' \
         '"https://matrix.example.org"}}'
EMAIL = '{kind: email, token: "${secret:EMAIL_PASSWORD}", allowed_users: ["you@example.org"], ' \
        'settings: {address: hermes@example.org, imap_host: imap.example.org, smtp_host: ' \
        'smtp.example.org, authserv_id: mx.example.org}}'


@pytest.fixture
def profile(root: Path) -> Path:
    write_fake_provider(root, "http://127.0.0.1:9/v1")
    return root / "config.yaml"


@pytest.mark.parametrize(("key", "value", "fragments"), [
    ("matrix", '{kind: matrix, settings: {homeserver: "matrix.example.org"}}',
     ["platforms.enabled.matrix.settings.homeserver", "not an http(s) url; e.g. https://matrix.example.org"]),
    ("matrix", '{kind: matrix, settings: {homeserver: "https://m.org", user_id: hermes}}',
     ["settings.user_id", "not a matrix user id; e.g. @hermes:example.org"]),
    ("matrix", '{kind: matrix, settings: {homeserver: "https://m.org", sync_timeout: 0}}',
     ["settings.sync_timeout", "greater than or equal to 1"]),
    ("matrix", "{kind: matrix, settings: {}}", ["settings.homeserver: missing value"]),
    ("email", EMAIL.replace("smtp_host: smtp.example.org", "smtp_host: smtp.example.org, "
                            "smtp_tls: none"),
     ["platforms.enabled.email.settings", "smtp_tls: none would send the password to "
      "smtp.example.org in the clear"]),
    ("email", EMAIL.replace(", authserv_id: mx.example.org", ""),
     ["authserv_id: empty", "or set require_authentication: false"]),
    ("email", EMAIL.replace("address: hermes@example.org", "address: hermes"),
     ["settings.address", "not an email address"]),
    ("email", EMAIL.replace("imap_host: imap.example.org, ", ""),
     ["settings.imap_host: missing value"]),
    ("email", EMAIL.replace("smtp_host:", "smtp_hots:"),
     ["settings.smtp_hots: unknown key", 'did you mean "smtp_host"']),
])
def test_config_set_refuses_bad_settings(hermes, profile: Path, key: str, value: str,
                                         fragments: list[str]) -> None:
    before = profile.read_bytes()
    refused(hermes("config", "set", f"platforms.enabled.{key}", value), *fragments)
    assert profile.read_bytes() == before


def test_good_settings_are_accepted(hermes, profile: Path) -> None:
    ok(hermes("config", "set", "MATRIX_ACCESS_TOKEN", "syt_example_token_1234"))
    ok(hermes("config", "set", "EMAIL_PASSWORD", "app-password-1234"))
    ok(hermes("config", "set", "platforms.enabled.matrix", MATRIX))
    ok(hermes("config", "set", "platforms.enabled.email", EMAIL))
    ok(hermes("config", "validate"))
    assert ok(hermes("config", "get", "platforms.enabled.email.settings.imap_port")).strip() \
        == "993"
    assert "app-password-1234" not in ok(hermes("config", "show"))


@pytest.mark.parametrize(("platform", "fix"), [
    ("{kind: matrix, settings: {homeserver: 'https://matrix.example.org'}}",
     "platforms.enabled.chat.token: no credentials — give an access token"),
    ("{kind: matrix, settings: {homeserver: 'https://matrix.example.org', password: "
     "'${secret:MATRIX_PASSWORD}'}}",
     "platforms.enabled.chat.settings.user_id: a password login needs the account"),
    ("{kind: email, allowed_users: [You@Example.org], settings: {address: a@b.org, "
     "imap_host: i.b.org, smtp_host: s.b.org, authserv_id: mx.b.org}}",
     "platforms.enabled.chat.token: no password"),
    ("{kind: email, token: '${secret:EMAIL_PASSWORD}', allowed_users: [You@Example.org], "
     "settings: {address: a@b.org, imap_host: i.b.org, smtp_host: s.b.org, "
     "authserv_id: mx.b.org}}",
     "platforms.enabled.chat.allowed_users: write addresses in lower case ('You@Example.org'"
     " → 'you@example.org')"),
])
def test_a_gateway_without_credentials_names_the_fix(hermes_subprocess, hermes,
                                                     profile: Path, platform: str,
                                                     fix: str) -> None:
    ok(hermes("config", "set", "MATRIX_PASSWORD", "pw-1234-example"))
    ok(hermes("config", "set", "EMAIL_PASSWORD", "pw-1234-example"))
    ok(hermes("config", "set", "platforms.enabled.chat", platform))
    done = hermes_subprocess("gateway", "run")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert fix in done.stderr and "Traceback" not in done.stderr
