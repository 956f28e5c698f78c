"""``config set`` / ``config unset`` keep every comment of the profile's config.yaml.

Through the real CLI, each test with its own home: a comments-only file (what
``profile create`` writes), an empty file, comments between top-level keys,
after the last key and on the items of the ``defaults`` list.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ok
from hermes.config.edit import (
    dump_roundtrip,
    load_roundtrip,
    remove_choice,
    set_choice,
    set_path,
    unset_path,
)

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


# --- any sequence of edits keeps every full comment line, in order ---------------------

NESTED = """\
agent:  # the loop
  # first in agent
  max_iterations: 1
  # before personality
  personality: p   # short
# between blocks
display:
  # first in display
  spinner: true
defaults:
  # before the first choice
  - override provider: openai
  # after the last choice
"""
KEYS = [("agent", "max_iterations"), ("agent", "personality"), ("display", "spinner"),
        ("environment", "timeout"), ("toolsets", "disabled_tools")]
GROUPS = ["provider", "memory", "toolsets"]
EDITS = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(KEYS), st.sampled_from([1, "x", ["a", "b"]])),
    st.tuples(st.just("unset"), st.sampled_from(KEYS), st.none()),
    st.tuples(st.just("choose"), st.sampled_from(GROUPS), st.sampled_from(["a", "b"])),
    st.tuples(st.just("unchoose"), st.sampled_from(GROUPS), st.none()),
)


def full_comment_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.lstrip().startswith("#")]


def apply(data: dict, edit: tuple) -> None:
    """What ``edit`` does to the plain data (the reference the YAML must match)."""
    kind, target, value = edit
    defaults = data.setdefault("defaults", [])
    if kind == "set":
        section = data.get(target[0])
        if not isinstance(section, dict):
            section = data[target[0]] = {}
        section[target[1]] = value
    elif kind == "unset" and target[1] in data.get(target[0], {}):
        del data[target[0]][target[1]]
        if not data[target[0]]:
            del data[target[0]]
    elif kind == "choose":
        entry = next((e for e in defaults if f"override {target}" in e), None)
        if entry is None:
            defaults.append({f"override {target}": value})
        else:
            entry[f"override {target}"] = value
    elif kind == "unchoose":
        data["defaults"] = [e for e in defaults if f"override {target}" not in e]
    if not data["defaults"]:
        del data["defaults"]


@settings(max_examples=150, deadline=None)
@given(start=st.sampled_from([PROFILE, NESTED, "# only comments\n# here\n", ""]),
       edits=st.lists(EDITS, min_size=1, max_size=8))
def test_no_sequence_of_edits_loses_a_comment_line(start: str, edits: list) -> None:
    text, expected = start, yaml.safe_load(start) or {}
    for edit in edits:
        kind, target, value = edit
        doc = load_roundtrip(text)
        if kind == "set":
            set_path(doc, list(target), value)
        elif kind == "unset":
            unset_path(doc, list(target))
        elif kind == "choose":
            set_choice(doc, target, value)
        else:
            remove_choice(doc, target)
        text = dump_roundtrip(doc)
        apply(expected, edit)
        assert (yaml.safe_load(text) or {}) == expected, text
        remaining = iter(full_comment_lines(text))
        assert all(line in remaining for line in full_comment_lines(start)), text
