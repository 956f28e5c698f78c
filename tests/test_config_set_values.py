"""``hermes config set`` / ``unset``: secrets edited in a hand-written ``.env`` in place,
notes after switching a group option, negative numbers and comma lists as values."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import ok, refused

ENV = """\
# Keys for the work profile
export OPENAI_API_KEY=sk-old-1111  # rotated monthly

CUSTOM_API_KEY="old-custom"   # the gateway
this line is broken
ZED_TOKEN='z z'
"""
NEW_SECRET = "sk-new-secret-2222"


@pytest.fixture
def env_file(root: Path) -> Path:
    root.mkdir(mode=0o700)
    path = root / ".env"
    path.write_text(ENV)
    path.chmod(0o600)
    return path


def assert_secret_hidden(result) -> None:
    assert NEW_SECRET not in result.stdout + result.stderr
    assert "sk-old-1111" not in result.stdout + result.stderr


# --- .env edited in place --------------------------------------------------------------


def test_set_replaces_only_the_value_on_the_keys_line(hermes, env_file: Path) -> None:
    inode = env_file.stat().st_ino
    result = hermes("config", "set", "CUSTOM_API_KEY", NEW_SECRET)
    assert ok(result) == f"CUSTOM_API_KEY = <redacted>  ({env_file})\n"
    assert env_file.read_text() == ENV.replace('"old-custom"', f'"{NEW_SECRET}"')
    assert env_file.stat().st_mode & 0o777 == 0o600 and env_file.stat().st_ino != inode
    assert_secret_hidden(result)

    exported = hermes("config", "set", "OPENAI_API_KEY", NEW_SECRET)
    assert_secret_hidden(exported)
    assert f"export OPENAI_API_KEY={NEW_SECRET}  # rotated monthly\n" in env_file.read_text()


def test_set_of_a_new_key_appends_it_and_keeps_every_other_byte(hermes, env_file: Path) -> None:
    ok(hermes("config", "set", "ANTHROPIC_API_KEY", "it's $secret"))
    assert env_file.read_text() == ENV + "ANTHROPIC_API_KEY='it\\'s $secret'\n"
    shown = hermes("config", "get", "provider.api_key", "provider=anthropic")
    assert ok(shown) == "<redacted>\n"

    env_file.write_text("A_TOKEN=a")  # no newline at the end
    ok(hermes("config", "set", "B_TOKEN", "b"))
    assert env_file.read_text() == "A_TOKEN=a\nB_TOKEN=b\n"


def test_the_new_value_is_the_one_used(hermes, env_file: Path) -> None:
    from hermes.credentials import read_env_file

    ok(hermes("config", "set", "CUSTOM_API_KEY", NEW_SECRET))
    ok(hermes("config", "set", "ZED_TOKEN", 'a "quoted" #value'))
    values = read_env_file(env_file)
    assert values["CUSTOM_API_KEY"] == NEW_SECRET
    assert values["ZED_TOKEN"] == 'a "quoted" #value'
    assert values["OPENAI_API_KEY"] == "sk-old-1111"


def test_unparseable_lines_are_reported_and_kept(hermes, env_file: Path) -> None:
    result = hermes("config", "set", "CUSTOM_API_KEY", NEW_SECRET)
    assert f"warning: {env_file}:5: cannot parse this line; it is left as it is" in result.stderr
    assert "this line is broken\n" in env_file.read_text()

    removed = hermes("config", "unset", "ZED_TOKEN")
    assert ok(removed) == f"unset ZED_TOKEN  ({env_file})\n"
    assert f"{env_file}:5: cannot parse this line" in removed.stderr
    expected = ENV.replace("ZED_TOKEN='z z'\n", "").replace('"old-custom"', f'"{NEW_SECRET}"')
    assert env_file.read_text() == expected

    checked = hermes("config", "validate")
    assert ok(checked).startswith("ok: ")
    assert checked.stderr == (f"warning: {env_file}:5: cannot parse this line; it is ignored — "
                              "write it as KEY=value or comment it out with #\n")


def test_unset_removes_only_that_line(hermes, env_file: Path) -> None:
    ok(hermes("config", "unset", "OPENAI_API_KEY"))
    assert env_file.read_text() == ENV.replace("export OPENAI_API_KEY=sk-old-1111  "
                                               "# rotated monthly\n", "")
    assert env_file.stat().st_mode & 0o777 == 0o600
    refused(hermes("config", "unset", "OPENAI_API_KEY"), f"{env_file}: OPENAI_API_KEY is not set")


# --- switching a group option -----------------------------------------------------------

CUSTOM = """\
defaults:
  - override provider: custom
provider:
  model: my-model
  api_base: http://127.0.0.1:8000/v1
"""


def test_switching_a_group_names_the_keys_that_still_override_it(hermes, root: Path) -> None:
    root.mkdir()
    config = root / "config.yaml"
    config.write_text(CUSTOM)
    result = hermes("config", "set", "provider", "anthropic")
    assert ok(result) == f"provider = anthropic  ({config})\n"
    assert result.stderr.splitlines() == [
        f"note: {config}: provider.model = my-model still overrides provider/anthropic "
        "(which sets claude-sonnet-4-5); drop it with `hermes config unset provider.model`",
        f"note: {config}: provider.api_base = http://127.0.0.1:8000/v1 still overrides "
        "provider/anthropic (which sets null); drop it with "
        "`hermes config unset provider.api_base`",
    ]
    assert ok(hermes("config", "get", "provider.model")) == "my-model\n"

    again = hermes("config", "set", "provider", "anthropic")  # no switch, no note
    assert ok(again) and again.stderr == ""

    ok(hermes("config", "unset", "provider.model"))
    ok(hermes("config", "unset", "provider.api_base"))
    assert ok(hermes("config", "get", "provider.model")) == "claude-sonnet-4-5\n"
    quiet = hermes("config", "set", "provider", "openai")
    assert ok(quiet) and quiet.stderr == ""


# --- negative numbers and lists ---------------------------------------------------------


def test_negative_numbers_are_values(hermes, root: Path) -> None:
    refused(hermes("config", "set", "agent.max_iterations", "-5"),
            "agent.max_iterations: input should be greater than 0, got -5")
    assert not (root / "config.yaml").exists()
    ok(hermes("config", "set", "provider.extra.temperature", "-0.5"))
    assert (root / "config.yaml").read_text() == "provider:\n  extra:\n    temperature: -0.5\n"


@pytest.mark.parametrize(("value", "shown"), [
    ("file,terminal", "- file\n- terminal\n"),
    ("file, terminal ,memory", "- file\n- terminal\n- memory\n"),
    ("[file,terminal]", "- file\n- terminal\n"),
    ("file", "- file\n"),
])
def test_list_keys_take_comma_lists(hermes, root: Path, value: str, shown: str) -> None:
    ok(hermes("config", "set", "toolsets.enabled", value))
    assert ok(hermes("config", "get", "toolsets.enabled")) == shown
    assert "  enabled:\n    - file\n" in (root / "config.yaml").read_text()


def test_other_keys_keep_commas_and_lists_of_objects_show_the_syntax(hermes) -> None:
    ok(hermes("config", "set", "agent.personality", "terse, kind"))
    assert ok(hermes("config", "get", "agent.personality")) == "terse, kind\n"
    ok(hermes("config", "set", "memory.providers", "factstore"))
    assert ok(hermes("config", "get", "memory.providers")) == "- factstore\n"
    refused(hermes("config", "set", "provider.fallbacks", "anthropic"),
            "provider.fallbacks: input should be a valid list", "give a list: [a, b]")



@pytest.mark.parametrize(("value", "stored"), [
    ("#ops", "#ops"),  # an IRC channel: YAML alone reads a comment, and null
    ("be terse # always", "be terse # always"),
    ("'quoted # inside'", "quoted # inside"),
    ("C#", "C#"),
])
def test_a_hash_is_part_of_the_value(hermes, root: Path, value: str, stored: str) -> None:
    ok(hermes("config", "set", "agent.personality", value))
    assert yaml.safe_load((root / "config.yaml").read_text()) == {
        "agent": {"personality": stored}}
    assert ok(hermes("config", "get", "agent.personality")) == f"{stored}\n"


def test_a_hash_after_a_list_keeps_the_text(hermes, root: Path) -> None:
    """``[a, b] # x`` is the text, not the list ``[a, b]`` with its comment dropped: a key
    that takes a list refuses it."""
    refused(hermes("config", "set", "provider.fallbacks", "[a, b] # x"),
            "provider.fallbacks: input should be a valid list")
