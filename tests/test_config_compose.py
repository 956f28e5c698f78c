"""Config composition as a library: every layer, its provenance, secrets, threads, fuzzing.

Each test composes a real config from files in its own temporary home; nothing
is mocked. The CLI surface (show, set, edit, error lines) is in test_config_cli.py.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes.config import ComposedConfig, compose_config
from hermes.config.schema import HermesConfig
from hermes.errors import ConfigError
from hermes.home import Home, home_from_path

CORP_PROVIDER = """\
name: corp
provider: openai
model: corp-model
api_base: http://corp.internal/v1
api_key: null
requires_key: false
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def profile_home(root: Path, name: str, config: str | None = None) -> Home:
    """A named profile under ``root`` with an optional ``config.yaml``."""
    home = home_from_path(root / "profiles" / name)
    home.path.mkdir(parents=True, exist_ok=True)
    if config is not None:
        write(home.config_file, config)
    return home


@pytest.fixture
def home(root: Path) -> Home:
    """The default profile (the root itself), empty."""
    root.mkdir()
    return home_from_path(root)


@pytest.fixture
def system_layer(tmp_path: Path) -> Path:
    """A read-only layer as the NixOS module renders it: values, a choice, its own option."""
    layer = tmp_path / "system"
    write(layer / "config.yaml",
          "defaults:\n  - override memory: none\nagent:\n  max_iterations: 11\n")
    write(layer / "conf" / "provider" / "corp.yaml", CORP_PROVIDER)
    return layer


def test_packaged_defaults_say_where_they_come_from(home: Home, environ: dict) -> None:
    composed = compose_config(home, environ)

    assert composed.config.provider.name == "openai"
    assert composed.config.provider.model == "gpt-4o"
    assert composed.config.toolsets.name == "default"
    assert composed.config.agent.max_iterations == 90
    model_source = composed.sources.who_set("provider.model")
    assert model_source is not None and "conf/provider/openai.yaml" in model_source
    iterations_source = composed.sources.who_set("agent.max_iterations")
    assert iterations_source is not None and iterations_source.startswith("packaged")
    assert iterations_source.endswith("conf/config.yaml)")
    assert composed.sources.choices["provider"].origin.startswith("packaged")


def test_system_layer_overrides_a_value_and_picks_a_group_option(
    home: Home, environ: dict, system_layer: Path
) -> None:
    env = environ | {"HERMES_CONFIG_LAYERS": str(system_layer)}
    composed = compose_config(home, env)

    assert composed.config.agent.max_iterations == 11
    assert composed.config.memory.name == "none"
    system_file = str(system_layer / "config.yaml")
    assert composed.sources.choices["memory"].origin == f"system ({system_file})"
    history = composed.sources.history("agent.max_iterations")
    assert [value for _, value in history] == [90, 11]
    assert history[-1][0] == f"system ({system_file})"


def test_system_layer_provides_its_own_group_option(
    home: Home, environ: dict, system_layer: Path
) -> None:
    env = environ | {"HERMES_CONFIG_LAYERS": str(system_layer)}
    write(home.config_file, "defaults:\n  - override provider: corp\n")
    composed = compose_config(home, env)

    assert composed.config.provider.name == "corp"
    assert composed.config.provider.api_base == "http://corp.internal/v1"
    assert str(system_layer / "conf/provider/corp.yaml") in str(
        composed.sources.who_set("provider.model"))
    with pytest.raises(ConfigError, match='unknown option "corp"'):
        compose_config(home, environ)  # without the layer the option does not exist


def test_later_system_layers_win(home: Home, environ: dict, tmp_path: Path,
                                 system_layer: Path) -> None:
    second = tmp_path / "image"
    write(second / "config.yaml", "agent:\n  max_iterations: 12\n")
    layers = f"{system_layer}:{second}"
    composed = compose_config(home, environ | {"HERMES_CONFIG_LAYERS": layers})

    assert composed.config.agent.max_iterations == 12
    assert composed.config.memory.name == "none"  # still chosen by the first layer
    assert [v for _, v in composed.sources.history("agent.max_iterations")] == [90, 11, 12]


def test_extends_an_example_profile(home: Home, environ: dict) -> None:
    write(home.config_file, "extends: coder\nagent:\n  personality: mine\n")
    composed = compose_config(home, environ)

    assert composed.config.toolsets.name == "coding"
    assert composed.config.agent.max_iterations == 120
    assert composed.config.agent.personality == "mine"
    assert str(composed.sources.who_set("agent.max_iterations")).startswith(
        "extends:example coder (")
    assert str(composed.sources.who_set("agent.personality")).startswith("profile (")
    assert "extends:example coder" in composed.sources.choices["toolsets"].origin


def test_extends_another_profile_which_extends_an_example(root: Path, environ: dict) -> None:
    profile_home(root, "base", "extends: researcher\nagent:\n  personality: base voice\n")
    work = profile_home(root, "work", "extends: base\nagent:\n  max_iterations: 7\n")
    composed = compose_config(work, environ)

    assert composed.config.toolsets.name == "research"
    assert composed.config.agent.personality == "base voice"
    assert composed.config.agent.max_iterations == 7
    history = composed.sources.history("agent.max_iterations")
    assert [v for _, v in history] == [90, 60, 7]
    assert [where.split(" (")[0] for where, _ in history] == [
        "packaged", "extends:example researcher", "profile"]
    assert str(composed.sources.who_set("agent.personality")).startswith("extends:base (")


def test_a_profile_named_like_an_example_extends_the_example(root: Path, environ: dict) -> None:
    coder = profile_home(root, "coder", "extends: coder\nagent:\n  max_iterations: 5\n")
    composed = compose_config(coder, environ)
    assert composed.config.toolsets.name == "coding"
    assert composed.config.agent.max_iterations == 5


def test_extends_cycle_is_an_error(root: Path, environ: dict) -> None:
    base = profile_home(root, "base", "extends: work\n")
    work = profile_home(root, "work", "extends: base\n")
    with pytest.raises(ConfigError) as caught:
        compose_config(work, environ)
    assert caught.value.key == "extends"
    assert caught.value.source == str(base.config_file)
    assert caught.value.detail == '"work" extends itself in a cycle'


def test_extends_unknown_name_lists_the_examples(home: Home, environ: dict) -> None:
    write(home.config_file, "extends: codr\n")
    with pytest.raises(ConfigError) as caught:
        compose_config(home, environ)
    message = str(caught.value)
    assert message.startswith(f"{home.config_file}: extends: ")
    assert 'did you mean "coder"' in message and "coder, ops, researcher" in message


def test_profile_file_overrides_packaged_values(home: Home, environ: dict) -> None:
    write(home.config_file, "defaults:\n  - override provider: anthropic\n"
                            "provider:\n  model: claude-haiku-4-5\n")
    composed = compose_config(home, environ)

    assert composed.config.provider.name == "anthropic"
    assert composed.config.provider.model == "claude-haiku-4-5"
    assert composed.sources.who_set("provider.model") == f"profile ({home.config_file})"
    assert composed.sources.choices["provider"].origin == f"profile ({home.config_file})"
    models = [v for _, v in composed.sources.history("provider.model")]
    assert models == ["claude-sonnet-4-5", "claude-haiku-4-5"]


def test_profile_local_group_options_shadow_and_add(home: Home, environ: dict) -> None:
    write(home.conf_dir / "provider" / "openai.yaml",
          "name: openai\nprovider: openai\nmodel: shadow-model\n")
    write(home.conf_dir / "provider" / "mylocal.yaml",
          CORP_PROVIDER.replace("corp", "mylocal"))

    shadowed = compose_config(home, environ)
    assert shadowed.config.provider.model == "shadow-model"
    assert str(home.conf_dir / "provider" / "openai.yaml") in str(
        shadowed.sources.who_set("provider.model"))
    assert shadowed.config.provider.api_key is None  # the packaged file is not merged in

    write(home.config_file, "defaults:\n  - override provider: mylocal\n")
    added = compose_config(home, environ)
    assert added.config.provider.name == "mylocal"
    assert added.config.provider.model == "mylocal-model"


@pytest.mark.parametrize(
    ("variable", "value", "field", "expected"),
    [
        ("HERMES_PROVIDER", "anthropic", "provider.name", "anthropic"),
        ("HERMES_MODEL", "gpt-4.1-mini", "provider.model", "gpt-4.1-mini"),
        ("HERMES_TOOLSETS", "minimal", "toolsets.name", "minimal"),
        ("HERMES_ENVIRONMENT", "docker", "environment.kind", "docker"),
        ("HERMES_MAX_ITERATIONS", "7", "agent.max_iterations", 7),
        ("HERMES_CONFIG__AGENT__MAX_ITERATIONS", "8", "agent.max_iterations", 8),
        ("HERMES_CONFIG__PROVIDER__TIMEOUT", "9.5", "provider.timeout", 9.5),
    ],
)
def test_environment_overrides(home: Home, environ: dict, variable: str, value: str,
                               field: str, expected: object) -> None:
    write(home.config_file, "agent:\n  max_iterations: 50\n")
    composed = compose_config(home, environ | {variable: value})

    node: object = composed.config
    for part in field.split("."):
        node = getattr(node, part)
    assert node == expected
    group = field.split(".")[0]
    if field.endswith(".name") or field == "environment.kind":
        assert composed.sources.choices[group].origin == f"environment {variable}"
    else:
        assert composed.sources.who_set(field) == f"environment {variable}: {field}={value}"


def test_cli_overrides_set_add_delete_and_choose(home: Home, environ: dict) -> None:
    write(home.config_file, "agent:\n  max_iterations: 50\n")

    changed = compose_config(home, environ, ["provider.model=gpt-4.1", "toolsets=research"])
    assert changed.config.provider.model == "gpt-4.1"
    assert changed.config.toolsets.disabled_tools == ["write_file", "patch"]
    assert changed.sources.who_set("provider.model") == "command line: provider.model=gpt-4.1"
    assert changed.sources.choices["toolsets"].origin == "command line"

    added = compose_config(home, environ, ["+provider.extra.temperature=0.2"])
    assert added.config.provider.extra == {"temperature": 0.2}

    deleted = compose_config(home, environ, ["~agent.max_iterations"])
    assert deleted.config.agent.max_iterations == 90  # back to the schema default
    assert "max_iterations" not in deleted.raw["agent"]
    assert deleted.sources.history("agent.max_iterations")[-1] == (
        "command line: ~agent.max_iterations", "<deleted>")

    with pytest.raises(ConfigError) as caught:
        compose_config(home, environ, ["+agent.max_iteration=3"])
    assert caught.value.key == "agent.max_iteration"
    assert 'unknown key (did you mean "max_iterations"?)' in str(caught.value)
    assert caught.value.source == "command line: +agent.max_iteration=3"


def test_cli_beats_env_beats_profile_beats_system_beats_packaged(
    home: Home, environ: dict, system_layer: Path
) -> None:
    env = environ | {"HERMES_CONFIG_LAYERS": str(system_layer)}
    write(home.config_file, "agent:\n  max_iterations: 22\n")
    env_and_file = env | {"HERMES_MAX_ITERATIONS": "33"}

    def iterations(environment: dict, overrides: list[str]) -> int:
        return compose_config(home, environment, overrides).config.agent.max_iterations

    assert iterations(env_and_file, ["agent.max_iterations=44"]) == 44
    assert iterations(env_and_file, []) == 33
    assert iterations(env, []) == 22
    home.config_file.unlink()
    assert iterations(env, []) == 11
    assert iterations(environ, []) == 90

    write(home.config_file, "agent:\n  max_iterations: 22\n")
    composed = compose_config(home, env_and_file, ["agent.max_iterations=44"])
    assert [where.split(" (")[0].split(":")[0] for where, _ in
            composed.sources.history("agent.max_iterations")] == [
        "packaged", "system", "profile", "environment HERMES_MAX_ITERATIONS", "command line"]


def test_group_choice_precedence(home: Home, environ: dict) -> None:
    write(home.config_file, "defaults:\n  - override provider: ollama\n")
    env = environ | {"HERMES_PROVIDER": "openrouter"}
    assert compose_config(home, environ).config.provider.name == "ollama"
    assert compose_config(home, env).config.provider.name == "openrouter"
    assert compose_config(home, env, ["provider=anthropic"]).config.provider.name == "anthropic"


def test_secrets_come_from_the_home_env_file_then_the_environment(
    home: Home, environ: dict
) -> None:
    unset = compose_config(home, environ)
    assert unset.config.provider.api_key is None
    assert unset.display["provider"]["api_key"] == "<unset: OPENAI_API_KEY>"
    assert unset.raw["provider"]["api_key"] == "${secret:OPENAI_API_KEY}"

    from_env = compose_config(home, environ | {"OPENAI_API_KEY": "sk-from-environment"})
    assert from_env.config.provider.api_key == "sk-from-environment"
    assert from_env.display["provider"]["api_key"] == "<redacted>"

    write(home.env_file, "OPENAI_API_KEY=sk-from-dotenv\n")
    from_file = compose_config(home, environ | {"OPENAI_API_KEY": "sk-from-environment"})
    assert from_file.config.provider.api_key == "sk-from-dotenv"
    assert "sk-from" not in repr(from_file.display) + repr(from_file.raw)


def test_profile_text_stands_in_for_the_file(home: Home, environ: dict) -> None:
    write(home.config_file, "agent:\n  max_iterations: 5\n")
    composed = compose_config(home, environ, profile_text="agent:\n  max_iterations: 6\n")
    assert composed.config.agent.max_iterations == 6
    assert home.config_file.read_text() == "agent:\n  max_iterations: 5\n"


def test_threads_composing_different_homes_get_their_own_config(
    root: Path, environ: dict
) -> None:
    """Hydra's global state is shared by the process; the lock keeps compositions apart."""
    providers = ["openai", "anthropic", "openrouter", "ollama"]
    homes = []
    for i, provider in enumerate(providers):
        home = profile_home(root, f"p{i}", f"defaults:\n  - override provider: {provider}\n"
                                           f"provider:\n  model: model-{i}\n"
                                           f"agent:\n  max_iterations: {i + 1}\n")
        write(home.env_file, f"OPENAI_API_KEY=sk-home-{i}\nANTHROPIC_API_KEY=sk-home-{i}\n"
                             f"OPENROUTER_API_KEY=sk-home-{i}\n")
        homes.append(home)
    start = threading.Barrier(len(homes))

    def compose_many(i: int) -> list[tuple[str, str, int, str | None]]:
        start.wait()
        found = []
        for _ in range(10):
            config = compose_config(homes[i], environ).config
            found.append((config.provider.name, config.provider.model,
                           config.agent.max_iterations, config.provider.api_key))
        return found

    with ThreadPoolExecutor(max_workers=len(homes)) as pool:
        results = list(pool.map(compose_many, range(len(homes))))

    for i, provider in enumerate(providers):
        key = None if provider == "ollama" else f"sk-home-{i}"
        assert set(results[i]) == {(provider, f"model-{i}", i + 1, key)}


# --- fuzzing: any input gives a valid config or a ConfigError, nothing else ---------

KEYS = ["provider", "provider.model", "provider.extra", "agent", "agent.max_iterations",
        "toolsets", "memory.name", "defaults", "hydra", "a.b", "", "@", "_self_"]
OVERRIDES = st.one_of(
    st.text(max_size=40),
    st.builds(lambda prefix, key, value: f"{prefix}{key}={value}",
              st.sampled_from(["", "+", "++", "~"]), st.sampled_from(KEYS), st.text(max_size=15)),
)
LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12),
    st.sampled_from(["${}", "${secret:X}", "${provider.model}", "${oc.env:HOME}", "???",
                     "coder", "default", "..", "override provider: ollama", "_self_"]),
)
TREES = st.recursive(
    LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(KEYS + ["extends", "max_iterations"]),
                                  st.text(max_size=6), st.integers()), children, max_size=3),
    ),
    max_leaves=8,
)
PROFILE_TEXTS = st.one_of(
    st.text(max_size=80),
    TREES.map(lambda tree: yaml.safe_dump(tree, allow_unicode=True)),
    st.dictionaries(st.sampled_from(["provider", "agent", "defaults", "extends", "toolsets",
                                     "memory", "hydra", "display"]), TREES, max_size=3)
    .map(lambda tree: yaml.safe_dump(tree, allow_unicode=True)),
)
FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def _valid_or_config_error(call) -> None:
    try:
        composed = call()
    except ConfigError as exc:
        assert str(exc).strip(), "a ConfigError needs a message"
        return
    assert isinstance(composed, ComposedConfig)
    assert isinstance(composed.config, HermesConfig)


@FUZZ
@given(override=OVERRIDES)
def test_any_override_gives_a_config_or_a_config_error(home: Home, environ: dict,
                                                       override: str) -> None:
    _valid_or_config_error(lambda: compose_config(home, environ, [override]))


@FUZZ
@given(text=PROFILE_TEXTS)
def test_any_profile_text_gives_a_config_or_a_config_error(home: Home, environ: dict,
                                                           text: str) -> None:
    _valid_or_config_error(lambda: compose_config(home, environ, profile_text=text))
