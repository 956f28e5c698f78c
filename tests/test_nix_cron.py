"""The Nix modules' ``cron.timer``: for a profile without a gateway, a systemd timer runs
``hermes -p <name> cron tick`` in a unit hardened like the gateway's (NixOS), or a user
timer (home-manager). Evaluated like the rest of the module (see tests/test_nix.py)."""

from __future__ import annotations

from typing import Any

from test_nix import HARDENING, command_of, evaluate, nixpkgs_lib, two_profiles  # noqa: F401

NOTES = """
  profiles.notes = {
    settings.agent.max_iterations = 20;
    environmentFiles = [ "/run/agenix/notes.env" ];
    cron.timer.enable = true;
  };"""


def test_a_profile_without_a_gateway_gets_a_hardened_cron_tick_on_a_timer(
        nixpkgs_lib: str) -> None:  # noqa: F811
    deployed: dict[str, Any] = evaluate(nixpkgs_lib, two_profiles(extra=NOTES))
    assert deployed["failedAssertions"] == []
    unit = deployed["units"]["hermes-agent-notes-cron"]
    service = unit["serviceConfig"]
    binary, *args = command_of(unit)
    assert binary.endswith("/bin/hermes") and args == ["-p", "notes", "cron", "tick"]
    assert service["Type"] == "oneshot" and "Restart" not in service
    hardening = {k: v for k, v in HARDENING.items() if k != "Restart"}
    assert {k: service.get(k) for k in hardening} == hardening
    assert service["EnvironmentFile"] == ["/run/agenix/notes.env"]
    assert service["WorkingDirectory"] == "/var/lib/hermes-agent-workspaces/notes"
    assert unit["environment"]["HERMES_HOME"] == "/var/lib/hermes-agent/profiles/notes"
    assert unit["wantedBy"] == []  # the timer starts it
    assert deployed["timers"] == {"hermes-agent-notes-cron": {
        "description": "Hermes scheduled jobs of profile notes", "wantedBy": ["timers.target"],
        "timerConfig": {"OnCalendar": "minutely", "Persistent": True}}}
    assert "hermes-agent-notes" not in deployed["units"]  # no gateway for it


def test_the_timer_fires_when_told(nixpkgs_lib: str) -> None:  # noqa: F811
    deployed = evaluate(nixpkgs_lib, two_profiles(
        extra=NOTES + ' profiles.notes.cron.timer.onCalendar = "*:0/15";'))
    timer = deployed["timers"]["hermes-agent-notes-cron"]["timerConfig"]
    assert timer["OnCalendar"] == "*:0/15"


def test_a_timer_beside_the_gateway_is_refused(nixpkgs_lib: str) -> None:  # noqa: F811
    deployed = evaluate(nixpkgs_lib, two_profiles(extra="profiles.work.cron.timer.enable = true;"))
    assert deployed["failedAssertions"] == [
        "services.hermes-agent.profiles.work.cron.timer.enable: the profile's gateway runs "
        "its scheduled jobs already (every minute); set cron.timer.enable = false, or "
        "gateway.enable = false."]


def test_home_manager_runs_the_tick_on_a_user_timer(nixpkgs_lib: str) -> None:  # noqa: F811
    configuration = two_profiles(extra=NOTES).replace("services.hermes-agent",
                                                      "programs.hermes-agent")
    deployed = evaluate(nixpkgs_lib, configuration, target="home-manager")
    assert deployed["failedAssertions"] == []
    unit = deployed["units"]["hermes-agent-notes-cron"]
    assert command_of(unit)[1:] == ["-p", "notes", "cron", "tick"]
    assert unit["Service"]["Type"] == "oneshot"
    assert unit["Service"]["EnvironmentFile"] == ["/run/agenix/notes.env"]
    assert deployed["timers"]["hermes-agent-notes-cron"]["Timer"] == {
        "OnCalendar": "minutely", "Persistent": True}
    assert deployed["timers"]["hermes-agent-notes-cron"]["Install"] == {
        "WantedBy": ["timers.target"]}
    darwin = evaluate(nixpkgs_lib, configuration, target="home-manager", darwin=True)
    assert any(m.startswith("programs.hermes-agent.profiles.notes.cron.timer.enable: the "
                            "timer is a systemd user timer") for m in darwin["failedAssertions"])
