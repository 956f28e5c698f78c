"""The home-manager module (``programs.hermes-agent``): the same profiles for one user,
gateways as systemd user services on Linux; on darwin, where home-manager has no
systemd, the homes and seed files come from an activation step. Evaluated like the
NixOS module (see tests/test_nix.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from test_nix import command_of, evaluate, locate_nixpkgs_lib, two_profiles


@pytest.fixture(scope="module")
def nixpkgs_lib() -> str:
    return locate_nixpkgs_lib()


def test_the_home_manager_module_runs_user_gateways_on_the_same_layer(
        nixpkgs_lib: str) -> None:
    configuration = two_profiles().replace("services.hermes-agent", "programs.hermes-agent")
    deployed = evaluate(nixpkgs_lib, configuration, target="home-manager")
    assert deployed["failedAssertions"] == []
    layer = deployed["layer"]["path"]
    work = deployed["units"]["hermes-agent-work"]
    assert work["Service"]["Environment"] == [f"HERMES_CONFIG_LAYERS={layer}",
                                              "HERMES_HOME=/home/alice/.hermes/profiles/work"]
    assert work["Service"]["EnvironmentFile"] == ["/run/agenix/hermes-work.env"]
    assert command_of(work)[1:] == ["-p", "work", "gateway", "run"]
    assert work["Install"]["WantedBy"] == ["default.target"]
    assert set(deployed["units"]) == {"hermes-agent-work", "hermes-agent-research"}
    assert "d /home/alice/.hermes/profiles/work 0700 - - - -" in deployed["tmpfiles"]
    assert "z /home/alice/.hermes/profiles/work/SOUL.md 0600 - - - -" in deployed["tmpfiles"]
    assert deployed["activation"] == {}  # on Linux, tmpfiles makes the homes
    (wrapper,) = deployed["packages"]
    assert f"export HERMES_CONFIG_LAYERS={layer}\n" in wrapper["text"]
    assert "runuser" not in wrapper["text"]


def seeded_profiles(tmp_path: Path) -> str:
    """A root in ``tmp_path`` with a seeded profile and a bare one (seeds read-only,
    as they are in the store)."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for name, text in (("soul.md", "You answer tersely.\n"), ("user.md", "Alice, an SRE.\n")):
        (seeds / name).write_text(text)
        (seeds / name).chmod(0o444)
    return """{
      programs.hermes-agent = {
        enable = true;
        stateDir = @ROOT@;
        profiles.work = {
          settings.agent.max_iterations = 5;
          soul = @SEEDS@ + "/soul.md";
          memories.user = @SEEDS@ + "/user.md";
        };
        profiles.notes = { };
      };
    }""".replace("@ROOT@", json.dumps(str(tmp_path / "hermes"))).replace(
        "@SEEDS@", json.dumps(str(seeds)))


def activate(script: str) -> None:
    """Runs an activation step as home-manager does (bash, errexit; `run` runs)."""
    subprocess.run(["bash", "-c", 'set -eu -o pipefail\nrun() { "$@"; }\n' + script],
                   check=True, timeout=60)


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_on_darwin_an_activation_step_makes_the_homes_and_seeds_them(
        nixpkgs_lib: str, tmp_path: Path) -> None:
    deployed = evaluate(nixpkgs_lib, seeded_profiles(tmp_path), target="home-manager",
                        darwin=True)
    # home-manager refuses systemd options on darwin: none are set.
    assert deployed["failedAssertions"] == []
    assert deployed["tmpfiles"] == [] and deployed["units"] == {}
    step = deployed["activation"]["hermesAgentHomes"]
    assert step["after"] == ["writeBoundary"]

    activate(step["data"])
    root = tmp_path / "hermes"
    for directory in (root, root / "profiles", root / "profiles/work",
                      root / "profiles/work/memories", root / "profiles/notes"):
        assert mode(directory) == 0o700, directory
    soul = root / "profiles/work/SOUL.md"
    assert soul.read_text() == "You answer tersely.\n" and mode(soul) == 0o600
    assert (root / "profiles/work/memories/USER.md").read_text() == "Alice, an SRE.\n"
    assert not (root / "profiles/work/memories/MEMORY.md").exists()
    assert sorted(p.name for p in (root / "profiles/notes").iterdir()) == []

    # A seed is copied only while the file is absent: the agent's edits stay.
    soul.write_text("Edited by the agent.\n")
    activate(step["data"])
    assert soul.read_text() == "Edited by the agent.\n"


@pytest.mark.parametrize("darwin", [False, True], ids=["linux", "darwin"])
@pytest.mark.parametrize(("state_dir", "what"), [
    ("/", "a system directory"), ("/var/lib", "a system directory"),
    ("/Users", "a system directory"), ("/home/alice", "your home directory"),
    ("/home/alice/", "your home directory")])
def test_a_system_directory_or_the_home_is_refused_as_the_state_dir(
        nixpkgs_lib: str, darwin: bool, state_dir: str, what: str) -> None:
    """The homes' tmpfiles lines (or the darwin step) would make it mode 0700."""
    configuration = ("{ programs.hermes-agent = { enable = true; profiles.work = { }; "
                     f"stateDir = {json.dumps(state_dir)}; }}; }}")
    deployed = evaluate(nixpkgs_lib, configuration, target="home-manager", darwin=darwin)
    assert deployed["failedAssertions"] == [
        f"programs.hermes-agent.stateDir: {state_dir} is {what}, which Hermes would make "
        "mode 0700; use a directory of its own, such as /home/alice/.hermes."]


def test_on_darwin_a_gateway_is_refused_with_the_fix(nixpkgs_lib: str) -> None:
    """No systemd there: a gateway would silently never run."""
    configuration = two_profiles().replace("services.hermes-agent", "programs.hermes-agent")
    deployed = evaluate(nixpkgs_lib, configuration, target="home-manager", darwin=True)
    assert deployed["failedAssertions"] == [
        f"programs.hermes-agent.profiles.{name}.gateway.enable: gateways run as systemd user "
        "services, which home-manager has on Linux only; set it to false here (or to "
        "pkgs.stdenv.isLinux) and start `hermes -p "
        f"{name} gateway run` yourself." for name in ("research", "work")]
    assert deployed["units"] == {}
