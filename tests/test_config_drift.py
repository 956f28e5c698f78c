"""Drift between a profile and the read-only system layers and environment files of its
deployment (the NixOS module's rendered settings and the unit's ``EnvironmentFile``):
``config set`` refuses a key such a layer sets (``--force`` overrides), secrets from the
environment win over ``.env`` under ``secrets.precedence: environment``, and ``doctor``
names every profile value and ``.env`` secret that shadows (or is shadowed by) them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from conftest import ok, refused
from fakellm import FakeLLM, Reply, ToolCall
from test_doctor import table


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


def write_layer(layer: Path, shared: dict, work: dict) -> None:
    (layer / "profiles" / "work").mkdir(parents=True, exist_ok=True)
    (layer / "config.yaml").write_text(yaml.safe_dump(shared))
    (layer / "profiles" / "work" / "config.yaml").write_text(yaml.safe_dump(work))


@pytest.fixture
def layer(hermes, tmp_path: Path) -> dict[str, str]:
    """A read-only system layer setting two keys and a group for profile work."""
    directory = tmp_path / "layer"
    write_layer(directory, {"display": {"show_cost": False}},
                {"defaults": [{"platforms": "api_server"}], "agent": {"max_iterations": 40}})
    ok(hermes("profile", "create", "work"))
    return {"HERMES_CONFIG_LAYERS": str(directory)}


def test_config_set_refuses_what_a_system_layer_sets(hermes, root: Path, tmp_path: Path,
                                                     layer: dict[str, str]) -> None:
    config = root / "profiles" / "work" / "config.yaml"
    before = config.read_bytes() if config.exists() else None
    own = tmp_path / "layer" / "profiles" / "work" / "config.yaml"
    for key, value, label, file in (
            ("agent.max_iterations", "60", "system:work", own),
            ("platforms", "none", "system:work", own),
            ("display.show_cost", "true", "system", tmp_path / "layer" / "config.yaml")):
        refused(hermes("-p", "work", "config", "set", key, value, env=layer),
                key, f"read-only system layer {label} ({file})", "--force")
    assert (config.read_bytes() if config.exists() else None) == before
    ok(hermes("-p", "work", "config", "set", "agent.tool_result_max_chars", "9000", env=layer))


def test_force_overrides_and_doctor_lists_what_shadows_the_layer(
        hermes, root: Path, tmp_path: Path, layer: dict[str, str]) -> None:
    assert table(hermes("-p", "work", "doctor", "--offline", env=layer))["config drift"][0] == "ok"
    ok(hermes("-p", "work", "config", "set", "agent.max_iterations", "60", "--force", env=layer))
    ok(hermes("-p", "work", "config", "set", "platforms", "none", "--force", env=layer))
    assert ok(hermes("-p", "work", "config", "get", "agent.max_iterations", env=layer)) == "60\n"
    status, detail, fix = table(hermes("-p", "work", "doctor", "--offline", env=layer))[
        "config drift"]
    own = tmp_path / "layer" / "profiles" / "work" / "config.yaml"
    assert status == "warn"
    assert f"agent.max_iterations (system:work, {own})" in detail
    assert f"platforms (system:work, {own})" in detail
    assert "config unset agent.max_iterations" in fix and "config unset platforms" in fix
    ok(hermes("-p", "work", "config", "unset", "agent.max_iterations", env=layer))
    ok(hermes("-p", "work", "config", "unset", "platforms", env=layer))
    assert table(hermes("-p", "work", "doctor", "--offline", env=layer))["config drift"][0] == "ok"


# --- secrets: the deployment's environment files and .env -----------------------------

FILE_KEY = "sk-from-the-environment-file-0001"
ROTATED = "sk-rotated-by-the-deployment-0002"
STALE = "sk-stale-in-dotenv-0003"


@pytest.fixture
def managed(hermes, root: Path, tmp_path: Path, llm: FakeLLM) -> dict[str, str]:
    """Profile work as the NixOS module deploys it: provider settings and the secrets
    policy in its layer, the key in an environment file, and a stale key in .env."""
    env_file = tmp_path / "agenix" / "hermes-work.env"
    env_file.parent.mkdir()
    env_file.write_text(f"CUSTOM_API_KEY={FILE_KEY}\n")
    write_layer(tmp_path / "layer", {}, {
        "defaults": [{"provider": "custom"}],
        "provider": {"api_base": llm.openai_base_url, "model": "gpt-4o", "max_retries": 1},
        "secrets": {"precedence": "environment", "environment_files": [str(env_file)]}})
    ok(hermes("profile", "create", "work"))
    dotenv = root / "profiles" / "work" / ".env"
    dotenv.write_text(f"# set by an admin long ago\nCUSTOM_API_KEY={STALE}\n")
    dotenv.chmod(0o600)
    return {"HERMES_CONFIG_LAYERS": str(tmp_path / "layer")}


def key_sent(llm: FakeLLM) -> str:
    return llm.requests[-1].headers["authorization"].removeprefix("Bearer ")


def test_environment_secrets_win_over_dotenv_under_the_module(hermes, managed, llm) -> None:
    llm.push(Reply("one"), Reply("two"))
    ok(hermes("-p", "work", "-z", "hi", env=managed))  # the admin CLI reads the file
    assert key_sent(llm) == FILE_KEY
    ok(hermes("-p", "work", "-z", "hi", env=managed | {"CUSTOM_API_KEY": ROTATED}))  # the unit
    assert key_sent(llm) == ROTATED
    llm.push(Reply("three"))
    dotenv_first = managed | {"HERMES_CONFIG__SECRETS__PRECEDENCE": "dotenv"}
    ok(hermes("-p", "work", "-z", "hi", env=dotenv_first))
    assert key_sent(llm) == STALE


def test_doctor_names_shadowed_secrets_and_config_set_refuses_them(
        hermes, root: Path, tmp_path: Path, managed: dict[str, str]) -> None:
    env_file = tmp_path / "agenix" / "hermes-work.env"
    doctor = hermes("-p", "work", "doctor", "--offline", env=managed)
    status, detail, fix = table(doctor)["secrets"]
    assert status == "warn"
    assert f"CUSTOM_API_KEY in .env is shadowed by {env_file}" in detail
    assert "config unset CUSTOM_API_KEY" in fix
    assert STALE not in doctor.stdout and FILE_KEY not in doctor.stdout
    dotenv = root / "profiles" / "work" / ".env"
    before = dotenv.read_bytes()
    refused(hermes("-p", "work", "config", "set", "CUSTOM_API_KEY", "sk-new-0004", env=managed),
            "CUSTOM_API_KEY", str(env_file), "secrets.precedence", "--force")
    assert dotenv.read_bytes() == before
    ok(hermes("-p", "work", "config", "set", "CUSTOM_API_KEY", "sk-new-0004", "--force",
              env=managed))
    assert "sk-new-0004" in dotenv.read_text()
    ok(hermes("-p", "work", "config", "unset", "CUSTOM_API_KEY", env=managed))
    assert table(hermes("-p", "work", "doctor", "--offline", env=managed))["secrets"][0] == "ok"


def test_dotenv_shadowing_the_environment_is_named_too(hermes, root: Path,
                                                       tmp_path: Path) -> None:
    ok(hermes("profile", "create", "work"))
    ok(hermes("-p", "work", "config", "set", "OPENAI_API_KEY", "sk-dotenv-0005"))
    doctor = hermes("-p", "work", "doctor", "--offline", env={"OPENAI_API_KEY": "sk-env-0006"})
    status, detail, _ = table(doctor)["secrets"]
    assert status == "warn" and "OPENAI_API_KEY in .env shadows the environment" in detail
    assert "sk-dotenv-0005" not in doctor.stdout and "sk-env-0006" not in doctor.stdout


def test_a_missing_managed_secret_points_at_the_environment_file(
        hermes, root: Path, tmp_path: Path, managed: dict[str, str]) -> None:
    env_file = tmp_path / "agenix" / "hermes-work.env"
    env_file.write_text("# rotated away\n")
    (root / "profiles" / "work" / ".env").write_text("")
    status, detail, fix = table(hermes("-p", "work", "doctor", "--offline", env=managed))[
        "provider credentials"]
    assert status == "fail" and "CUSTOM_API_KEY is not set" in detail
    assert fix == f"add CUSTOM_API_KEY=… to {env_file}"
    line = refused(hermes("-p", "work", "-z", "hi", env=managed),
                   f"add CUSTOM_API_KEY=… to {env_file}")
    assert "config set" not in line


def test_environment_file_values_are_redacted(hermes, managed, llm, tmp_path: Path) -> None:
    """The CLI loads the environment files, so their values are secrets: the sandbox
    hides the files from commands, and with it off their values are redacted."""
    env_file = tmp_path / "agenix" / "hermes-work.env"
    for mode in ("workspace-write", "off"):
        llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": f"cat {env_file.name}"})]),
                 Reply("done"))
        ok(hermes("-p", "work", "-z", "show the file", f"environment.cwd={env_file.parent}",
                  f"environment.local.sandbox.mode={mode}", env=managed))
        (result,) = llm.requests[-1].tool_results
        shown = json.loads(str(result.content))
        if mode == "off":
            assert "CUSTOM_API_KEY=<redacted>" in shown["output"]
        else:
            assert shown["exit_code"] != 0 and "CUSTOM_API_KEY" not in shown["output"]
    assert FILE_KEY not in json.dumps([request.body for request in llm.requests])
