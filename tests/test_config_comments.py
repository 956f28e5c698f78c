"""``config set`` / ``config unset`` keep every comment of the profile's config.yaml.

Through the real CLI, each test with its own home: a comments-only file (what
``profile create`` writes), an empty file, comments between top-level keys,
after the last key and on the items of the ``defaults`` list.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ok

PROFILE = """\
# Work profile: what differs from the defaults.

defaults:
  - override toolsets: coding   # the coding tools
  # memory stays local
  - override memory: none       # no memory
  # (more choices go here)

# The agent loop.
agent:
  max_iterations: 50  # room for refactors
  # personality: terse

# Terminal output.
display:
  spinner: false
# end of profile
"""


@pytest.fixture
def config(root: Path) -> Path:
    root.mkdir(mode=0o700)
    path = root / "config.yaml"
    path.write_text(PROFILE)
    return path


def comment_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


def test_a_new_profiles_comment_header_stays_on_top(hermes, root: Path) -> None:
    ok(hermes("profile", "create", "work"))
    config = root / "profiles" / "work" / "config.yaml"
    header = config.read_text()
    assert header.startswith("# ") and all(line.startswith("#") for line in header.splitlines())

    ok(hermes("-p", "work", "config", "set", "agent.max_iterations", "42"))
    assert config.read_text() == header + "\nagent:\n  max_iterations: 42\n"
    assert ok(hermes("-p", "work", "config", "get", "agent.max_iterations")) == "42\n"

    ok(hermes("-p", "work", "config", "set", "provider", "anthropic"))
    assert config.read_text() == (header + "\ndefaults:\n  - override provider: anthropic\n"
                                  "agent:\n  max_iterations: 42\n")

    ok(hermes("-p", "work", "config", "unset", "provider"))
    ok(hermes("-p", "work", "config", "unset", "agent.max_iterations"))
    assert config.read_text() == header  # back to the comments alone


@pytest.mark.parametrize("text", ["", "\n\n", "   \n"])
def test_an_empty_file_gets_just_the_key(hermes, root: Path, text: str) -> None:
    root.mkdir()
    config = root / "config.yaml"
    config.write_text(text)
    ok(hermes("config", "set", "agent.max_iterations", "42"))
    assert config.read_text() == "agent:\n  max_iterations: 42\n"
    ok(hermes("config", "unset", "agent.max_iterations"))
    assert config.read_text() == ""


def test_a_key_added_to_a_block_goes_above_the_comments_that_follow_it(
    hermes, config: Path
) -> None:
    ok(hermes("config", "set", "agent.personality", "brief"))
    assert config.read_text() == PROFILE.replace(
        "  max_iterations: 50  # room for refactors\n",
        "  max_iterations: 50  # room for refactors\n  personality: brief\n")


def test_removing_a_block_keeps_the_comments_between_top_level_keys(
    hermes, config: Path
) -> None:
    ok(hermes("config", "unset", "agent.max_iterations"))  # agent's only key: the block goes
    assert config.read_text() == PROFILE.replace(
        "agent:\n  max_iterations: 50  # room for refactors\n", "")
    assert comment_lines(config.read_text()) == comment_lines(PROFILE)  # every full line


def test_comments_after_the_last_key_stay_last(hermes, config: Path) -> None:
    ok(hermes("config", "set", "environment.timeout", "30"))
    assert config.read_text() == PROFILE.replace(
        "  spinner: false\n", "  spinner: false\nenvironment:\n  timeout: 30\n")

    ok(hermes("config", "unset", "environment.timeout"))
    assert config.read_text() == PROFILE

    ok(hermes("config", "unset", "display.spinner"))  # the last block goes, its comments stay
    assert config.read_text() == PROFILE.replace("display:\n  spinner: false\n", "")


def test_choices_in_the_defaults_list_keep_their_comments(hermes, config: Path) -> None:
    ok(hermes("config", "set", "memory", "builtin"))  # changed in place
    assert config.read_text() == PROFILE.replace(
        "override memory: none       # no memory", "override memory: builtin    # no memory")

    ok(hermes("config", "set", "provider", "anthropic"))  # a new item, above the trailing note
    assert config.read_text() == PROFILE.replace(
        "override memory: none       # no memory\n",
        "override memory: builtin    # no memory\n  - override provider: anthropic\n")

    ok(hermes("config", "unset", "provider"))
    ok(hermes("config", "set", "memory", "none"))
    assert config.read_text() == PROFILE


def test_removing_choices_keeps_the_comments_around_them(hermes, config: Path) -> None:
    ok(hermes("config", "unset", "memory"))
    assert config.read_text() == PROFILE.replace(
        "  - override memory: none       # no memory\n", "")

    ok(hermes("config", "unset", "toolsets"))  # the list goes; no comment line does
    text = config.read_text()
    assert "defaults:" not in text and "override" not in text
    assert comment_lines(text) == [line for line in comment_lines(PROFILE)
                                   if line not in ("# the coding tools", "# no memory")]
    assert text.index("# (more choices go here)") < text.index("agent:")
    assert ok(hermes("config", "get", "toolsets.name")) == "default\n"


def test_removing_the_first_choice_keeps_the_comment_below_it(hermes, config: Path) -> None:
    ok(hermes("config", "unset", "toolsets"))
    assert config.read_text() == PROFILE.replace(
        "  - override toolsets: coding   # the coding tools\n", "")


def test_removing_the_first_key_of_a_block_keeps_the_comment_below_it(
    hermes, root: Path
) -> None:
    root.mkdir()
    config = root / "config.yaml"
    text = "agent:\n  max_iterations: 5\n  # the voice\n  personality: terse\n"
    config.write_text(text)
    ok(hermes("config", "unset", "agent.max_iterations"))
    assert config.read_text() == "agent:\n  # the voice\n  personality: terse\n"
