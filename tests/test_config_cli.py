"""``hermes config ...`` through the real CLI: show, get, explain, set, unset, edit, errors.

Every test runs the CLI in-process with its own temporary ``$HOME`` (see
conftest.py) and checks what it printed, its exit code and the files on disk.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from hermes.config import compose_config
from hermes.home import home_from_path

PROFILE = """\
# My profile: only what differs from the defaults.
defaults:
  - override toolsets: coding   # the coding tools

agent:
  # more room for long refactors
  max_iterations: 50
  personality: terse   # short answers

display:
  spinner: false
"""
SECRET = "sk-test-0123456789abcdef"


def snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Every file below ``directory`` with its bytes and permission bits.

    The composition cache (``.cache/``) is left out: storing a validated
    composition is the one write a read-only command may make.
    """
    return {str(p.relative_to(directory)): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in sorted(directory.rglob("*"))
            if p.is_file() and ".cache" not in p.relative_to(directory).parts}


def assert_one_line_error(result, *fragments: str) -> str:
    """Exit code 2, nothing on stdout, one ``error:`` line on stderr holding every fragment."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


@pytest.fixture
def profile(root: Path) -> Path:
    """The default profile's config.yaml with comments, blank lines and a defaults list."""
    root.mkdir(mode=0o700)
    config = root / "config.yaml"
    config.write_text(PROFILE, encoding="utf-8")
    return config


# --- show, get, path, validate -----------------------------------------------------


def test_show_prints_the_composed_config_with_references_unresolved(hermes, profile) -> None:
    result = hermes("config", "show")
    assert result.exit_code == 0, result.stderr
    assert "  max_iterations: 50\n" in result.stdout
    assert "  - session_search\n" in result.stdout  # from toolsets/coding
    assert "api_key: ${secret:OPENAI_API_KEY}" in result.stdout

    resolved = hermes("config", "show", "--resolved")
    assert "api_key: '<unset: OPENAI_API_KEY>'" in resolved.stdout


def test_show_and_get_apply_overrides_for_one_run(hermes, profile) -> None:
    before = snapshot(profile.parent)
    result = hermes("config", "show", "provider=anthropic", "agent.max_iterations=5")
    assert result.exit_code == 0, result.stderr
    assert "model: claude-sonnet-4-5" in result.stdout and "max_iterations: 5" in result.stdout
    assert hermes("config", "get", "provider.name", "provider=ollama").stdout == "ollama\n"
    assert snapshot(profile.parent) == before


def test_get_prints_values_lists_and_schema_defaults(hermes, profile) -> None:
    assert hermes("config", "get", "agent.max_iterations").stdout == "50\n"
    assert hermes("config", "get", "agent.reasoning_effort").stdout == "null\n"
    assert hermes("config", "get", "toolsets.disabled_tools").stdout == "[]\n"
    assert hermes("config", "get", "environment").stdout.startswith("name: local\nkind: local\n")
    # Not in any YAML file, but a real key with a schema default:
    assert hermes("config", "get", "provider.requires_key").stdout == "true\n"
    assert hermes("config", "get", "display.spinner").stdout == "false\n"
    assert hermes("config", "get", "environment.docker.image").stdout == "hermes-sandbox:latest\n"


def test_get_unknown_key_suggests_the_closest(hermes, profile) -> None:
    assert_one_line_error(hermes("config", "get", "agent.max_iteratons"),
                          "agent.max_iteratons: no such key", 'did you mean "max_iterations"',
                          "keys under agent: max_iterations")


def test_path_and_validate(hermes, root: Path, profile) -> None:
    assert hermes("config", "path").stdout == f"{root / 'config.yaml'}\n"
    result = hermes("config", "validate")
    assert result.exit_code == 0
    assert result.stdout == f"ok: {root / 'config.yaml'} (provider openai, model gpt-4o)\n"


def test_path_of_a_named_profile(hermes, root: Path) -> None:
    (root / "profiles" / "work").mkdir(parents=True)
    result = hermes("-p", "work", "config", "path")
    assert result.stdout == f"{root / 'profiles' / 'work' / 'config.yaml'}\n"


def test_show_on_a_fresh_home_writes_nothing(hermes, user_home: Path, root: Path) -> None:
    result = hermes("config", "show")
    assert result.exit_code == 0 and "model: gpt-4o" in result.stdout
    assert not root.exists()
    assert snapshot(user_home) == {}


# --- explain -------------------------------------------------------------------------


def test_explain_names_the_setter_and_what_it_overrode(hermes, root: Path, profile) -> None:
    packaged = compose_config(home_from_path(root), {}).sources.history(
        "agent.max_iterations")[0][0]
    result = hermes("config", "explain", "agent.max_iterations")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "agent.max_iterations = 50",
        f"  set by: profile ({profile})",
        f"  overrode: 90 from {packaged}",
    ]

    stacked = hermes("config", "explain", "agent.max_iterations", "agent.max_iterations=9",
                     env={"HERMES_MAX_ITERATIONS": "7"})
    assert stacked.stdout.splitlines() == [
        "agent.max_iterations = 9",
        "  set by: command line: agent.max_iterations=9",
        "  overrode: '7' from environment HERMES_MAX_ITERATIONS: agent.max_iterations=7",
        f"  overrode: 50 from profile ({profile})",
        f"  overrode: 90 from {packaged}",
    ]


def test_explain_group_choices_and_group_option_values(hermes, profile) -> None:
    result = hermes("config", "explain", "toolsets")
    assert result.stdout.splitlines() == ["toolsets = coding", f"  chosen by: profile ({profile})"]

    model = hermes("config", "explain", "provider.model", "provider=anthropic")
    lines = model.stdout.splitlines()
    assert lines[0] == "provider.model = claude-sonnet-4-5"
    assert lines[1].startswith("  set by: group option provider/anthropic (")
    assert lines[1].endswith("conf/provider/anthropic.yaml)")

    default = hermes("config", "explain", "provider.max_retries", "provider=ollama")
    assert default.stdout.splitlines()[0] == "provider.max_retries = 1"
    schema = hermes("config", "explain", "provider.requires_key")
    assert schema.stdout.splitlines() == ["provider.requires_key = true",
                                          "  set by: schema default (no config file sets it)"]


def test_explain_a_system_layer_value(hermes, tmp_path: Path, profile) -> None:
    layer = tmp_path / "nixos"
    layer.mkdir()
    (layer / "config.yaml").write_text("display:\n  show_cost: false\n")
    result = hermes("config", "explain", "display.show_cost",
                    env={"HERMES_CONFIG_LAYERS": str(layer)})
    assert result.stdout.splitlines()[:2] == [
        "display.show_cost = false", f"  set by: system ({layer / 'config.yaml'})"]


# --- bad config: one line, exit 2, no traceback, nothing written ----------------------

BAD_PROFILES = {
    "unknown key": ("agent:\n  max_iteration: 3\n",
                    ["agent.max_iteration: unknown key", 'did you mean "max_iterations"']),
    "wrong type": ("agent:\n  max_iterations: lots\n",
                   ["agent.max_iterations: input should be a valid integer", "'lots'"]),
    "wrong nested type": ("agent: 3\n", ["agent: input should be a valid dictionary"]),
    "bad literal choice": ("agent:\n  reasoning_effort: extreme\n",
                           ["agent.reasoning_effort: input should be 'none', 'low'"]),
    "unknown group option": ("defaults:\n  - override provider: opneai\n",
                             ['provider: unknown option "opneai" (did you mean "openai"?)',
                              "available: anthropic, azure, bedrock, cerebras, custom, deepseek, "
                              "fireworks, gemini, groq, huggingface, llamacpp, lmstudio"]),
    "unknown group": ("defaults:\n  - override providers: openai\n",
                      ['defaults: unknown config group "providers" (did you mean "provider"?)']),
    "invalid YAML": ("agent:\n  max_iterations: 3\n  - x\n", [":3: invalid YAML"]),
    "list at top level": ("- agent\n- display\n", ["expected a mapping of settings, got list"]),
    "scalar at top level": ("just words\n", ["expected a mapping of settings, got str"]),
    "bad interpolation": ("agent:\n  personality: ${}\n", ["agent.personality: "]),
    "unknown extends": ("extends: codr\n", ['extends: no profile or example named "codr"']),
    "hydra key": ("hydra:\n  run:\n    dir: x\n", ["hydra: unknown key"]),
    "empty required string": ("provider:\n  model: ''\n",
                              ["provider.model: empty value — set it with "
                               "`hermes config set provider.model VALUE`"]),
    "blank required string": ("environment:\n  name: '  '\n", ["environment.name: empty value"]),
    "blank address": ("provider:\n  api_base: ' '\n", ["provider.api_base: empty value"]),
}


@pytest.mark.parametrize("case", list(BAD_PROFILES))
def test_bad_profile_file(hermes, user_home: Path, profile: Path, case: str) -> None:
    text, fragments = BAD_PROFILES[case]
    profile.write_text(text)
    before = snapshot(user_home)
    for command in (["validate"], ["show"], ["get", "provider.model"]):
        assert_one_line_error(hermes("config", *command), str(profile), *fragments)
    assert snapshot(user_home) == before


BAD_OVERRIDES = {
    "bad syntax": (["agent.max_iterations=[1"], {},
                   ["command line: bad override 'agent.max_iterations=[1'"]),
    "not an override": (["max_iterations"], {}, ["bad override 'max_iterations'"]),
    "missing key without +": (["agent.foo=1"], {},
                              ["no such key 'agent.foo'; add a new key with +agent.foo=1"]),
    "+ on an existing key": (["+agent.max_iterations=5"], {},
                             ["'agent.max_iterations' is already set; change it with "
                              "agent.max_iterations=5"]),
    "+ then schema rejects": (["+agent.foo=1"], {},
                              ["command line: +agent.foo=1: agent.foo: unknown key"]),
    "delete missing key": (["~agent.nope"], {}, ["cannot delete 'agent.nope'"]),
    "unknown option": (["provider=nope"], {},
                       ['command line: provider: unknown option "nope"', "available: anthropic"]),
    "sweep": (["provider=openai,anthropic"], {}, ["one option per run", "hermes ab"]),
    "wrong type": (["agent.max_iterations=0"], {},
                   ["agent.max_iterations: input should be greater than 0"]),
    "empty key": (["=3"], {}, ["bad override '=3'"]),
    "empty required value": (["provider.model="], {},
                             ["command line: provider.model=: provider.model: empty value — "
                              "give it a value: provider.model=VALUE"]),
    "blank required value": (["provider.model='  '"], {}, ["provider.model: empty value"]),
    "blank value from the environment": ([], {"HERMES_CONFIG__PROVIDER__MODEL": " "},
                                         ["environment HERMES_CONFIG__PROVIDER__MODEL",
                                          "provider.model: empty value — give it a value"]),
    "hydra internals": (["hydra.job.name=x"], {}, ["bad override 'hydra.job.name=x'"]),
    "missing required value": (["provider=custom", "provider.model=my-model"], {},
                               ["conf/provider/custom.yaml): provider.api_base: missing value",
                                "hermes config set provider.api_base VALUE"]),
    "bad env value": ([], {"HERMES_MAX_ITERATIONS": "lots"},
                      ["environment HERMES_MAX_ITERATIONS: agent.max_iterations=lots: "
                       "agent.max_iterations: input should be a valid integer"]),
    "bad env option": ([], {"HERMES_PROVIDER": "nope"},
                       ['environment HERMES_PROVIDER: provider: unknown option "nope"']),
    "bad system layer": ([], {"HERMES_CONFIG_LAYERS": "{layer}"},
                         ["{layer}/config.yaml: expected a mapping of settings, got list"]),
}


@pytest.mark.parametrize("case", list(BAD_OVERRIDES))
def test_bad_override(hermes, user_home: Path, tmp_path: Path, profile: Path, case: str) -> None:
    overrides, env, fragments = BAD_OVERRIDES[case]
    layer = tmp_path / "layer"
    layer.mkdir()
    (layer / "config.yaml").write_text("- not a mapping\n")
    env = {k: v.format(layer=layer) for k, v in env.items()}
    fragments = [f.format(layer=layer) for f in fragments]
    before = snapshot(user_home)
    for command in (["validate"], ["show", "--resolved"]):
        assert_one_line_error(hermes("config", *command, *overrides, env=env), *fragments)
    assert snapshot(user_home) == before


# --- set and unset -------------------------------------------------------------------


def test_set_changes_one_line_and_keeps_comments_and_order(hermes, profile: Path) -> None:
    result = hermes("config", "set", "agent.max_iterations", "70")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"agent.max_iterations = 70  ({profile})\n"
    expected = PROFILE.replace("max_iterations: 50", "max_iterations: 70")
    assert profile.read_text() == expected
    assert hermes("config", "get", "agent.max_iterations").stdout == "70\n"

    hermes("config", "set", "agent.personality", "brief")  # the comment keeps its column
    assert profile.read_text() == expected.replace("terse   #", "brief   #")
    hermes("config", "set", "agent.personality", "a careful engineer")
    assert profile.read_text() == expected.replace("terse   #", "a careful engineer #")


def test_set_a_new_key_adds_it_and_touches_no_other_line(hermes, profile: Path) -> None:
    assert hermes("config", "set", "display.show_cost", "false").exit_code == 0
    assert profile.read_text() == PROFILE + "  show_cost: false\n"

    assert hermes("config", "set", "environment.timeout", "30").exit_code == 0
    lines = profile.read_text().splitlines(keepends=True)
    assert lines[:len(PROFILE.splitlines())] == PROFILE.splitlines(keepends=True)
    assert lines[-2:] == ["environment:\n", "  timeout: 30\n"]
    assert hermes("config", "get", "environment.timeout").stdout == "30\n"


def test_set_parses_values_as_yaml(hermes, profile: Path) -> None:
    hermes("config", "set", "toolsets.disabled_tools", "[patch, write_file]")
    assert hermes("config", "get", "toolsets.disabled_tools").stdout == "- patch\n- write_file\n"
    added = "toolsets:\n  disabled_tools:\n    - patch\n    - write_file\n"
    assert profile.read_text() == PROFILE + added


def test_set_replaces_the_file_atomically_with_mode_0600(hermes, profile: Path) -> None:
    inode = profile.stat().st_ino
    hermes("config", "set", "agent.max_iterations", "70")
    assert profile.stat().st_ino != inode  # a new file renamed over the old, not rewritten
    assert profile.stat().st_mode & 0o777 == 0o600
    left = sorted(p.name for p in profile.parent.iterdir() if p.name != ".cache")
    assert left == ["config.yaml"]  # no temp file left behind


def test_set_on_a_fresh_home_creates_it_private(hermes, root: Path) -> None:
    assert hermes("config", "set", "agent.max_iterations", "12").exit_code == 0
    assert root.stat().st_mode & 0o777 == 0o700
    assert (root / "config.yaml").read_text() == "agent:\n  max_iterations: 12\n"
    assert (root / "config.yaml").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["agent.max_iterations", "lots"],
         ["agent.max_iterations: input should be a valid integer"]),
        (["--", "agent.max_iterations", "-3"], ["agent.max_iterations: input should be greater"]),
        (["agent.max_iterations", "-5"], ["agent.max_iterations: input should be greater than 0",
                                          "got -5"]),
        (["provider.model", ""], ["provider.model: empty value"]),
        (["provider.model", "  "], ["provider.model: empty value"]),
        (["agent.max_iteratons", "3"], ["agent.max_iteratons: unknown key",
                                        'did you mean "max_iterations"']),
        (["provider", "nope"], ['provider: unknown option "nope"']),
        (["agent", "3"], ["agent: input should be a valid dictionary"]),
        (["bad..key", "1"], ["invalid key 'bad..key'"]),
    ],
)
def test_set_rejects_invalid_values_and_leaves_the_file_alone(
    hermes, user_home: Path, profile: Path, args: list[str], fragments: list[str]
) -> None:
    before, inode = snapshot(user_home), profile.stat().st_ino
    assert_one_line_error(hermes("config", "set", *args), *fragments)
    assert snapshot(user_home) == before
    assert profile.stat().st_ino == inode


def test_set_refuses_to_edit_a_broken_file(hermes, user_home: Path, profile: Path) -> None:
    profile.write_text("agent:\n  max_iterations: [1\n")
    before = snapshot(user_home)
    assert_one_line_error(hermes("config", "set", "agent.max_iterations", "3"),
                          f"{profile}:3: invalid YAML: ")
    assert snapshot(user_home) == before


def test_set_provider_edits_the_defaults_list_and_unset_restores(hermes, root: Path) -> None:
    root.mkdir()
    config = root / "config.yaml"
    original = "# mine\nagent:\n  max_iterations: 50  # room\n"
    config.write_text(original)

    assert hermes("config", "set", "provider", "anthropic").exit_code == 0
    assert config.read_text() == ("# mine\ndefaults:\n  - override provider: anthropic\n"
                                  "agent:\n  max_iterations: 50  # room\n")
    assert hermes("config", "get", "provider.model").stdout == "claude-sonnet-4-5\n"
    assert hermes("config", "explain", "provider").stdout.splitlines()[1] == (
        f"  chosen by: profile ({config})")

    assert hermes("config", "set", "provider", "ollama").exit_code == 0
    assert config.read_text().count("override provider") == 1
    assert "  - override provider: ollama\n" in config.read_text()

    result = hermes("config", "unset", "provider")
    assert result.exit_code == 0 and result.stdout == f"unset provider  ({config})\n"
    assert config.read_text() == original
    assert hermes("config", "get", "provider.name").stdout == "openai\n"
    assert_one_line_error(hermes("config", "unset", "provider"),
                          f"{config}: provider: not set in this profile")


def test_set_provider_keeps_other_choices_and_comments(hermes, profile: Path) -> None:
    assert hermes("config", "set", "provider", "anthropic").exit_code == 0
    text = profile.read_text()
    assert "  - override toolsets: coding   # the coding tools\n" in text
    assert "  - override provider: anthropic\n" in text
    for line in PROFILE.splitlines():  # every original line, in order, even if moved
        assert line in text
    order = [text.index(line) for line in PROFILE.splitlines() if line.strip()]
    assert order == sorted(order)
    assert hermes("config", "get", "toolsets.name").stdout == "coding\n"


def test_unset_falls_back_to_lower_layers_and_keeps_comments(hermes, profile: Path) -> None:
    result = hermes("config", "unset", "agent.max_iterations")
    assert result.exit_code == 0, result.stderr
    assert profile.read_text() == PROFILE.replace("  max_iterations: 50\n", "")
    assert hermes("config", "get", "agent.max_iterations").stdout == "90\n"

    hermes("config", "unset", "display.spinner")
    assert "display" not in profile.read_text()  # the emptied parent goes too
    assert "# more room for long refactors" in profile.read_text()


@pytest.mark.parametrize("key", ["agent.reasoning_effort", "provider.model", "nothing.here",
                                 "memory", "NOPE_API_KEY"])
def test_unset_of_a_key_not_set_is_an_error(hermes, user_home: Path, profile: Path,
                                            key: str) -> None:
    before = snapshot(user_home)
    where = profile.parent / ".env" if key.endswith("_API_KEY") else profile
    line = assert_one_line_error(hermes("config", "unset", key), str(where), key)
    assert line.endswith(("is not set", "not set in this profile (see `hermes config explain`)"))
    assert snapshot(user_home) == before


# --- secrets -------------------------------------------------------------------------


def test_secret_goes_to_env_file_0600_and_is_never_printed(hermes, root: Path,
                                                           profile: Path) -> None:
    result = hermes("config", "set", "OPENAI_API_KEY", SECRET)
    assert result.exit_code == 0
    assert result.stdout == f"OPENAI_API_KEY = <redacted>  ({root / '.env'})\n"
    env_file = root / ".env"
    assert env_file.read_text() == f"OPENAI_API_KEY={SECRET}\n"
    assert env_file.stat().st_mode & 0o777 == 0o600
    assert profile.read_text() == PROFILE

    # The secret is really used...
    assert compose_config(home_from_path(root), {}).config.provider.api_key == SECRET
    # ...and shown nowhere.
    hermes("config", "set", "agent.personality", "${secret:OPENAI_API_KEY}")
    outputs = [
        hermes("config", "show"),
        hermes("config", "show", "--resolved"),
        hermes("config", "get", "provider.api_key"),
        hermes("config", "get", "provider"),
        hermes("config", "get", "agent.personality"),
        hermes("config", "explain", "provider.api_key"),
        hermes("config", "explain", "agent.personality"),
        hermes("config", "validate"),
    ]
    for output in outputs:
        assert output.exit_code == 0, output.stderr
        assert SECRET not in output.stdout + output.stderr
    assert outputs[2].stdout == "<redacted>\n"
    assert outputs[4].stdout == "<redacted>\n"
    assert "api_key: <redacted>" in outputs[1].stdout


def test_secret_from_the_environment_is_redacted_too(hermes, profile: Path) -> None:
    env = {"ANTHROPIC_API_KEY": SECRET}
    result = hermes("config", "show", "--resolved", "provider=anthropic", env=env)
    assert "api_key: <redacted>" in result.stdout and SECRET not in result.stdout


def test_secret_set_and_unset_keep_other_secrets(hermes, root: Path, profile: Path) -> None:
    hermes("config", "set", "TELEGRAM_BOT_TOKEN", "123:abc")
    hermes("config", "set", "OPENAI_API_KEY", SECRET)
    env_file = root / ".env"
    assert env_file.read_text() == f"TELEGRAM_BOT_TOKEN=123:abc\nOPENAI_API_KEY={SECRET}\n"
    assert hermes("config", "unset", "OPENAI_API_KEY").exit_code == 0
    assert env_file.read_text() == "TELEGRAM_BOT_TOKEN=123:abc\n"
    assert env_file.stat().st_mode & 0o777 == 0o600
    assert hermes("config", "get", "provider.api_key").stdout == "<unset: OPENAI_API_KEY>\n"


# --- edit ----------------------------------------------------------------------------


@pytest.fixture
def editor(tmp_path: Path) -> dict[str, str]:
    """$EDITOR: a script that rewrites the file with a regex substitution from the env."""
    script = tmp_path / "editor.py"
    script.write_text(
        "import os, re, sys, pathlib\n"
        "path = pathlib.Path(sys.argv[1])\n"
        "text = re.sub(os.environ['FIND'], os.environ['REPLACE'], path.read_text())\n"
        "path.write_text(text)\n"
        "pathlib.Path(os.environ['SEEN']).write_text(os.environ['HERMES_HOME'])\n"
    )
    return {"EDITOR": f"{sys.executable} {script}", "SEEN": str(tmp_path / "seen")}


def test_edit_replaces_the_file_when_valid(hermes, root: Path, profile: Path, editor,
                                           tmp_path: Path) -> None:
    env = editor | {"FIND": "max_iterations: 50", "REPLACE": "max_iterations: 75"}
    result = hermes("config", "edit", env=env)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"saved {profile}\n"
    assert profile.read_text() == PROFILE.replace("max_iterations: 50", "max_iterations: 75")
    assert profile.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "seen").read_text() == str(root)  # the editor ran for this home
    assert hermes("config", "get", "agent.max_iterations").stdout == "75\n"


def test_edit_without_changes_writes_nothing(hermes, user_home: Path, profile: Path,
                                             editor) -> None:
    before = snapshot(user_home)
    result = hermes("config", "edit", env=editor | {"FIND": "no such text", "REPLACE": "x"})
    assert result.exit_code == 0 and result.stdout == "no changes\n"
    assert snapshot(user_home) == before


def test_edit_keeps_the_file_when_the_result_is_invalid(hermes, user_home: Path,
                                                        profile: Path, editor) -> None:
    before = snapshot(user_home)
    env = editor | {"FIND": "max_iterations: 50", "REPLACE": "max_iterations: lots"}
    line = assert_one_line_error(hermes("config", "edit", env=env),
                                 "agent.max_iterations: input should be a valid integer",
                                 "config.yaml is unchanged")
    assert snapshot(user_home) == before
    kept = Path(re.search(r"your edit is kept in (\S+?),", line).group(1))
    try:
        assert "max_iterations: lots" in kept.read_text()
    finally:
        kept.unlink()


def test_set_and_show_never_touch_another_profile(hermes, root: Path, profile: Path) -> None:
    work = root / "profiles" / "work"
    work.mkdir(parents=True)
    assert hermes("-p", "work", "config", "set", "agent.max_iterations", "5").exit_code == 0
    assert (work / "config.yaml").read_text() == "agent:\n  max_iterations: 5\n"
    assert profile.read_text() == PROFILE
    assert hermes("config", "get", "agent.max_iterations").stdout == "50\n"
    assert hermes("-p", "work", "config", "get", "agent.max_iterations").stdout == "5\n"
    assert os.stat(work / "config.yaml").st_mode & 0o777 == 0o600


def test_set_may_leave_required_values_for_the_next_set(hermes, root: Path) -> None:
    """Choosing an option that needs more settings is one step of several: it is saved
    with a note, the rest of the config is still checked, and running commands refuse
    until the value is set."""
    chosen = hermes("config", "set", "environment", "ssh")
    assert chosen.exit_code == 0
    assert "note: environment.ssh.host is still unset" in chosen.stderr
    assert "override environment: ssh" in (root / "config.yaml").read_text()
    assert_one_line_error(hermes("config", "validate"), "environment.ssh.host: missing value")
    assert_one_line_error(hermes("config", "set", "agent.max_iterations", "lots"),
                          "agent.max_iterations: input should be a valid integer")
    done = hermes("config", "set", "environment.ssh.host", "build.example.org")
    assert done.exit_code == 0 and "note:" not in done.stderr
    assert hermes("config", "validate").exit_code == 0
