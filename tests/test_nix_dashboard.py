"""``services.hermes-agent.dashboard``: ``hermes dashboard`` for the whole root as one more
hardened unit (loopback by default, the firewall closed unless asked). Evaluated like the
rest of the module (see tests/test_nix.py)."""

from __future__ import annotations

from typing import Any

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
