"""``services.hermes-agent.dashboard``: ``hermes dashboard`` for the whole root as one more
hardened unit (loopback by default, the firewall closed unless asked). Evaluated like the
rest of the module (see tests/test_nix.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dashboard_support import csrf_of, dashboard_for
from fakellm import FakeLLM, Reply
from hermes.credentials import credential_name
from test_dashboard_chat import turn
from test_nix import HARDENING, command_of, evaluate, nixpkgs_lib, two_profiles  # noqa: F401

ON = "dashboard.enable = true;"


def test_the_dashboard_is_a_hardened_unit_on_loopback(nixpkgs_lib: str) -> None:  # noqa: F811
    deployed: dict[str, Any] = evaluate(nixpkgs_lib, two_profiles(extra=ON))
    assert deployed["failedAssertions"] == []
    unit = deployed["units"]["hermes-agent-dashboard"]
    service = unit["serviceConfig"]
    binary, *args = command_of(unit)
    assert binary.endswith("-hermes-runtime-0.1.0/bin/hermes")
    assert args == ["dashboard", "--no-open", "--host", "127.0.0.1", "--port", "9119"]
    hardening = {k: v for k, v in HARDENING.items()}
    assert {k: service.get(k) for k in hardening} == hardening
    assert "EnvironmentFile" not in service  # no profile's secrets
    assert service["StateDirectory"] == ["hermes-agent", "hermes-agent-state"]
    assert service["WorkingDirectory"] == "/var/lib/hermes-agent-state"
    assert unit["environment"] == {  # the admin hermes's home: defaultProfile's
        "HERMES_HOME": "/var/lib/hermes-agent/profiles/work",
        "HERMES_CONFIG_LAYERS": deployed["layer"]["path"],
        "XDG_STATE_HOME": "/var/lib/hermes-agent-state"}
    assert unit["wantedBy"] == ["multi-user.target"]
    assert deployed["firewall"] == []
    assert set(deployed["units"]) == {"hermes-agent-work", "hermes-agent-research",
                                      "hermes-agent-dashboard"}


def test_off_by_default(nixpkgs_lib: str) -> None:  # noqa: F811
    deployed = evaluate(nixpkgs_lib, two_profiles())
    assert "hermes-agent-dashboard" not in deployed["units"] and deployed["firewall"] == []


def test_beyond_loopback_the_firewall_opens_only_when_asked(
        nixpkgs_lib: str) -> None:  # noqa: F811
    wide = ON + ' dashboard.host = "0.0.0.0"; dashboard.port = 9200;'
    closed = evaluate(nixpkgs_lib, two_profiles(extra=wide))
    assert command_of(closed["units"]["hermes-agent-dashboard"])[-4:] == [
        "--host", "0.0.0.0", "--port", "9200"]
    assert closed["firewall"] == []
    opened = evaluate(nixpkgs_lib, two_profiles(extra=wide + " dashboard.openFirewall = true;"))
    assert opened["failedAssertions"] == [] and opened["firewall"] == [9200]


def test_opening_the_firewall_for_loopback_is_refused(nixpkgs_lib: str) -> None:  # noqa: F811
    deployed = evaluate(nixpkgs_lib, two_profiles(extra=ON + " dashboard.openFirewall = true;"))
    assert deployed["failedAssertions"] == [
        "services.hermes-agent.dashboard.openFirewall: opens port 9119, but the dashboard "
        "listens on 127.0.0.1 (loopback) only; set dashboard.host (behind TLS), or keep the "
        "firewall closed and use SSH port forwarding."]


def test_outside_var_lib_it_may_write_the_root_and_its_state(
        nixpkgs_lib: str) -> None:  # noqa: F811
    deployed = evaluate(nixpkgs_lib, two_profiles(extra=ON + ' stateDir = "/srv/hermes";'))
    service = deployed["units"]["hermes-agent-dashboard"]["serviceConfig"]
    assert service["ReadWritePaths"] == ["/srv/hermes", "/srv/hermes-state"]
    assert "StateDirectory" not in service


def test_the_gateways_keep_their_environment_files_and_the_dashboard_gets_credentials(
        nixpkgs_lib: str) -> None:  # noqa: F811
    deployed = evaluate(nixpkgs_lib, two_profiles(extra=ON))
    units = deployed["units"]
    files = {"work": ["/run/agenix/hermes-work.env"],
             "research": ["/run/agenix/hermes-research.env", "/run/secrets/shared.env"]}
    for name, paths in files.items():
        assert units[f"hermes-agent-{name}"]["serviceConfig"]["EnvironmentFile"] == paths
    service = units["hermes-agent-dashboard"]["serviceConfig"]
    assert "EnvironmentFile" not in service  # one environment would mix two profiles'
    assert sorted(service["LoadCredential"]) == sorted(
        f"{credential_name(path)}:{path}" for paths in files.values() for path in paths)
    assert credential_name("/run/agenix/hermes-work.env").startswith("hermes-env-")
    alone = evaluate(nixpkgs_lib, two_profiles(extra=ON + (
        " profiles.work.environmentFiles = lib.mkForce [ ];"
        " profiles.research.environmentFiles = lib.mkForce [ ];")))
    assert "LoadCredential" not in alone["units"]["hermes-agent-dashboard"]["serviceConfig"]


def with_keys_in_files(base_url: str) -> str:
    """Two profiles on the fake LLM whose key is only in their own environment file."""
    def profile(name: str) -> str:
        return f"""profiles.{name} = {{
          settings.defaults = [ {{ provider = "custom"; }} ];
          settings.provider = {{ model = "gpt-4o"; api_base = "{base_url}";
                                 retry_backoff = 0; max_retries = 1; timeout = 10; }};
          environmentFiles = [ "/run/agenix/hermes-{name}.env" ];
        }};"""
    return ("{ services.hermes-agent = { enable = true; dashboard.enable = true; "
            + profile("work") + profile("research") + " }; }")


def test_each_profile_chats_from_the_dashboard_with_its_own_secret_file(
        nixpkgs_lib: str, tmp_path: Path) -> None:  # noqa: F811
    """The unit as systemd runs it: the layer rendered by the module, and its
    LoadCredential= files in $CREDENTIALS_DIRECTORY (the paths themselves do not exist
    here, as a root-only agenix file is unreadable to the service user): each profile's
    turn reaches the model with its own key."""
    keys = {"work": "sk-work-key-0001", "research": "sk-research-key-0002"}
    with FakeLLM(strict=False) as llm:
        deployed = evaluate(nixpkgs_lib, with_keys_in_files(llm.openai_base_url))
        assert deployed["failedAssertions"] == []
        credentials = tmp_path / "credentials"
        credentials.mkdir()
        for line in deployed["units"]["hermes-agent-dashboard"]["serviceConfig"][
                "LoadCredential"]:
            name, _, path = line.partition(":")
            profile = path.removeprefix("/run/agenix/hermes-").removesuffix(".env")
            (credentials / name).write_text(f"CUSTOM_API_KEY={keys[profile]}\n")
        layer = tmp_path / "layer"
        for name, text in deployed["layer"]["files"].items():
            (layer / name).parent.mkdir(parents=True, exist_ok=True)
            (layer / name).write_text(text)

        def prepare(environ: dict[str, str]) -> None:
            for name in keys:  # the homes as tmpfiles makes them: empty
                (Path(environ["HOME"]) / ".hermes" / "profiles" / name).mkdir(parents=True)
            environ.update(HERMES_CONFIG_LAYERS=str(layer),
                           CREDENTIALS_DIRECTORY=str(credentials))

        with dashboard_for(tmp_path / "user", prepare=prepare) as board, \
                board.client() as client:
            for profile, key in keys.items():
                csrf = csrf_of(client.get(f"/p/{profile}/chat").text)
                llm.script.push(Reply(text=f"Hello from {profile}."))
                got = turn(client, csrf, "hi", profile=profile)
                assert got[-1]["type"] == "done", got
                assert llm.requests[-1].headers["authorization"] == f"Bearer {key}"
