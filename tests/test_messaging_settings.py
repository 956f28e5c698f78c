"""The webhook and telegram platforms' settings are typed and checked when the config is
composed: `config validate` (the real CLI) names the file and the key of a bad value."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ok, refused
from hermes.config.schema import PlatformConfig
from messaging_support import WEBHOOK_SECRET, configure_messaging, webhook_platform

PREFIX = "platforms.enabled"


def write(root: Path, platforms: dict[str, object], **secrets: str) -> Path:
    configure_messaging(root, "http://127.0.0.1:9/v1", platforms,
                        {"TEST_WEBHOOK_SECRET": WEBHOOK_SECRET, "TELEGRAM_BOT_TOKEN": "1:x",
                         **secrets})
    return root / "config.yaml"


def telegram(**settings: object) -> dict[str, object]:
    return {"kind": "telegram", "token": "${secret:TELEGRAM_BOT_TOKEN}", "settings": settings}


def test_good_settings_validate(hermes, root: Path) -> None:
    write(root, {"telegram": telegram(poll_timeout=10, markdown=False),
                 "webhook": webhook_platform({"gh": {"prompt": "{issue.title}",
                                                     "deliver": "telegram:1:2",
                                                     "toolsets": ["terminal", "file"]}})})
    ok(hermes("config", "validate"))


@pytest.mark.parametrize(("route", "key", "fragment"), [
    ({"prompt": "Issue {issue.title"}, "routes.gh.prompt", "unmatched '{'"),
    ({"prompt": "Issue {issue title}"}, "routes.gh.prompt", "is not a field path"),
    ({"prompt": "x", "toolsets": ["fil"]}, "routes.gh.toolsets", 'did you mean "file"'),
    ({"prompt": "x", "deliver": "telegram"}, "routes.gh.deliver", "platform:chat_id"),
    ({"prompt": "x", "signature": "gitlab"}, "routes.gh.signature", "'generic' or 'github'"),
    ({"prompt": "x", "secret": "${secret:UNSET_WEBHOOK_SECRET}"}, "routes.gh.secret",
     "missing: every route needs one"),
    ({"prompt": "x", "promt": "y"}, "routes.gh.promt", 'did you mean "prompt"'),
])
def test_bad_webhook_routes_are_refused(hermes, root: Path, route: dict[str, object], key: str,
                                        fragment: str) -> None:
    config = write(root, {"webhook": webhook_platform({"gh": route})})
    refused(hermes("config", "validate"), str(config), f"{PREFIX}.webhook.settings.{key}",
            fragment)


def test_a_delivery_target_must_name_an_enabled_platform(hermes, root: Path) -> None:
    config = write(root, {"webhook": webhook_platform({"gh": {"prompt": "x",
                                                              "deliver": "telegrm:42"}}),
                          "telegram": telegram()})
    refused(hermes("config", "validate"), str(config),
            "enabled.webhook.settings.routes.gh.deliver: 'telegrm:42' names platform "
            "'telegrm', which is not enabled", 'did you mean "telegram"')


@pytest.mark.parametrize(("name", "value", "fragment"), [
    ("poll_timeout", 0, "greater than or equal to 1"),
    ("send_rate", 0, "greater than 0"),
    ("base_url", "", "empty value"),
    ("pairng", True, 'did you mean "pairing"'),
])
def test_bad_telegram_settings_are_refused(hermes, root: Path, name: str, value: object,
                                           fragment: str) -> None:
    config = write(root, {"telegram": telegram(**{name: value})})
    refused(hermes("config", "validate"), str(config),
            f"{PREFIX}.telegram.settings.{name}", fragment)


def test_config_set_refuses_a_bad_route_and_writes_nothing(hermes, root: Path) -> None:
    config = write(root, {"webhook": webhook_platform({"gh": {"prompt": "x"}})})
    before = config.read_bytes()
    refused(hermes("config", "set", f"{PREFIX}.webhook.settings.routes.gh.prompt", "{a"),
            "unmatched '{'")
    assert config.read_bytes() == before



def test_numeric_user_ids_and_a_comma_list_are_taken(hermes, root: Path) -> None:
    write(root, {"telegram": {**telegram(), "allowed_users": [123456789, "42"]}})
    ok(hermes("config", "validate"))
    ok(hermes("config", "set", f"{PREFIX}.telegram.allowed_users", "111,222"))
    for given, taken in (([123456789, "42"], ["123456789", "42"]), ("111, 222", ["111", "222"])):
        platform = PlatformConfig.model_validate({"kind": "telegram", "allowed_users": given})
        assert platform.allowed_users == taken
