"""The Nix deployment: every ``.nix`` file parses, the NixOS module evaluates to what
it documents, and the runtime composes a layer directory shaped like the one the
module renders.

The module test needs nixpkgs' ``lib`` (not nixpkgs): set ``HERMES_TEST_NIXPKGS_LIB``
to a directory holding ``lib/default.nix``, e.g. a checkout of
``nix-community/nixpkgs.lib``. It evaluates ``tests/nix/eval-module.nix`` (stand-in
NixOS options and a tiny ``pkgs``) with ``nix-instantiate --eval --strict --json``.
With ``HERMES_TEST_UV2NIX`` and ``HERMES_TEST_PYPROJECT_NIX`` (checkouts of those
flake inputs) too, ``tests/nix/eval-workspace.nix`` checks that uv2nix reads uv.lock;
with ``HERMES_TEST_BUILD_SYSTEM_PKGS`` (the pyproject-build-systems input) as well,
``tests/nix/eval-package.nix`` gives the package's build plan (each package built from
source and its build backend).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes.config import compose_config
from hermes.container import build_runtime
from hermes.home import home_for

REPO = Path(__file__).resolve().parent.parent
HARNESS = REPO / "tests" / "nix" / "eval-module.nix"
LIB_ENV = "HERMES_TEST_NIXPKGS_LIB"
NIX_INSTANTIATE = shutil.which("nix-instantiate")
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
SKIP_DIRS = {"node_modules", "__pycache__"}


def nix_files() -> list[Path]:
    return sorted(p for p in REPO.rglob("*.nix")
                  if not any(part.startswith(".") or part in SKIP_DIRS
                             for part in p.relative_to(REPO).parts))


def test_the_flake_and_module_files_are_found() -> None:
    names = {str(p.relative_to(REPO)) for p in nix_files()}
    assert {"flake.nix", "nix/module.nix", "nix/lib.nix", "nix/package.nix",
            "nix/home-manager.nix", "nix/checks.nix", "nix/vm-test.nix", "nix/workspace.nix",
            "nix/python-set.nix", "tests/nix/eval-module.nix", "tests/nix/eval-workspace.nix",
            "tests/nix/eval-package.nix"} <= names


@pytest.mark.skipif(NIX_INSTANTIATE is None,
                    reason="nix-instantiate is not installed (Debian: apt-get install nix-bin)")
@pytest.mark.parametrize("path", nix_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_nix_file_parses(path: Path) -> None:
    result = subprocess.run([str(NIX_INSTANTIATE), "--parse", str(path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


# --- the NixOS module, evaluated with lib.evalModules --------------------------------


def locate_nixpkgs_lib() -> str:
    """nixpkgs' lib for the evaluations, or a skip saying how to provide it."""
    if NIX_INSTANTIATE is None:
        pytest.skip("nix-instantiate is not installed (Debian: apt-get install nix-bin)")
    path = os.environ.get(LIB_ENV)
    if not path:
        pytest.skip(f"{LIB_ENV} is not set: point it at a directory holding nixpkgs' "
                    "lib/default.nix (e.g. a checkout of nix-community/nixpkgs.lib)")
    assert (Path(path) / "lib" / "default.nix").is_file(), \
        f"{LIB_ENV}={path} holds no lib/default.nix"
    return str(Path(path).resolve())


@pytest.fixture(scope="module")
def nixpkgs_lib() -> str:
    return locate_nixpkgs_lib()


def evaluate_harness(name: str, args: str) -> Any:
    """What ``tests/nix/<name>`` returns for ``args`` (Nix attribute bindings)."""
    expression = f"import {json.dumps(str(REPO / 'tests/nix' / name))} {{ {args} }}"
    result = subprocess.run([str(NIX_INSTANTIATE), "--eval", "--strict", "--json",
                             "--show-trace", "-E", expression],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def evaluate(nixpkgs_lib: str, configuration: str, target: str = "nixos",
             darwin: bool = False) -> dict[str, Any]:
    """The module's outcome for ``configuration`` (a module, in Nix syntax); ``target``
    ``home-manager`` evaluates ``nix/home-manager.nix`` instead, on a Mac with
    ``darwin``."""
    return evaluate_harness(HARNESS.name, (
        f"nixpkgsLib = {json.dumps(nixpkgs_lib)}; target = {json.dumps(target)}; "
        f"darwin = {json.dumps(darwin)}; configuration = {configuration};"))


def two_profiles(work_settings: str = "agent.max_iterations = 40;", extra: str = "") -> str:
    """Two gateway profiles with agenix-style secrets; ``extra`` is a second module's
    ``services.hermes-agent`` body (it may use ``lib``)."""
    return """{
      imports = [ ({ lib, ... }: { services.hermes-agent = { @EXTRA@ }; }) ];
      services.hermes-agent = {
        enable = true;
        defaultProfile = "work";
        profiles.work = {
          settings = {
            defaults = [ { platforms = "api_server"; } ];
            provider.api_key = "\\${secret:OPENAI_API_KEY}";
            @WORK@
          };
          environmentFiles = [ "/run/agenix/hermes-work.env" ];
          gateway.enable = true;
          extraPlugins = [ "/srv/hermes-plugins/weather" ];
          soul = "/etc/hermes/soul.md";
          memories.user = "/etc/hermes/user.md";
        };
        profiles.research = {
          settings.platforms.enabled.api_server = {
            kind = "api_server";
            settings.port = 8643;
          };
          environmentFiles = [ "/run/agenix/hermes-research.env" "/run/secrets/shared.env" ];
          gateway.enable = true;
          gateway.extraArgs = [ "gateway.shutdown_grace=5" ];
        };
      };
    }""".replace("@EXTRA@", extra).replace("@WORK@", work_settings)


def command_of(unit: dict[str, Any]) -> list[str]:
    """The words of a unit's ExecStart (quoted as a shell quotes them, for plain words)."""
    service = unit.get("serviceConfig") or unit["Service"]
    return shlex.split(service["ExecStart"])


HARDENING = {
    "User": "hermes", "Group": "hermes", "Restart": "on-failure", "UMask": "0077",
    "NoNewPrivileges": True, "ProtectSystem": "strict", "ProtectHome": True,
    "PrivateTmp": True, "PrivateDevices": True, "ProtectKernelTunables": True,
    "ProtectKernelModules": True, "ProtectKernelLogs": True, "ProtectControlGroups": True,
    "RestrictAddressFamilies": ["AF_UNIX", "AF_INET", "AF_INET6"],
    "RestrictNamespaces": True, "LockPersonality": True, "MemoryDenyWriteExecute": False,
    "SystemCallFilter": ["@system-service", "@sandbox", "~@privileged"],
    "CapabilityBoundingSet": "",
    "StateDirectoryMode": "0700",
}


@pytest.fixture(scope="module")
def deployed(nixpkgs_lib: str) -> dict[str, Any]:
    return evaluate(nixpkgs_lib, two_profiles())


def test_two_gateway_profiles_get_two_hardened_units(deployed: dict[str, Any]) -> None:
    assert deployed["failedAssertions"] == []
    units = deployed["units"]
    assert set(units) == {"hermes-agent-work", "hermes-agent-research"}
    layer = deployed["layer"]["path"]
    for name, files in (("work", ["/run/agenix/hermes-work.env"]),
                        ("research", ["/run/agenix/hermes-research.env",
                                      "/run/secrets/shared.env"])):
        unit = units[f"hermes-agent-{name}"]
        service = unit["serviceConfig"]
        assert unit["environment"] == {"HERMES_HOME": f"/var/lib/hermes-agent/profiles/{name}",
                                       "HERMES_CONFIG_LAYERS": layer,
                                       "XDG_STATE_HOME": "/var/lib/hermes-agent-state"}
        assert service["EnvironmentFile"] == files
        assert {k: service.get(k) for k in HARDENING} == HARDENING
        assert service["StateDirectory"] == [
            "hermes-agent", "hermes-agent/profiles", f"hermes-agent/profiles/{name}",
            "hermes-agent-state", "hermes-agent-workspaces", f"hermes-agent-workspaces/{name}"]
        # Commands run outside the root, which the local sandbox hides from them.
        assert service["WorkingDirectory"] == f"/var/lib/hermes-agent-workspaces/{name}"
        assert "ReadWritePaths" not in service
        assert unit["wantedBy"] == ["multi-user.target"]
    binary, *args = command_of(units["hermes-agent-work"])
    assert binary.startswith("/nix/store/") and binary.endswith("-hermes-runtime-0.1.0/bin/hermes")
    assert args == ["-p", "work", "gateway", "run"]
    assert command_of(units["hermes-agent-research"]) == [
        binary, "-p", "research", "gateway", "run", "gateway.shutdown_grace=5"]
    assert deployed["users"]["hermes"]["isSystemUser"] is True
    assert deployed["groups"] == ["hermes"]


def test_settings_are_rendered_into_one_read_only_layer(deployed: dict[str, Any]) -> None:
    files = deployed["layer"]["files"]
    assert set(files) == {"profiles/work/config.yaml", "profiles/research/config.yaml"}
    plugins = deployed["pluginDirs"]["work"]
    assert plugins["entries"] == [{"name": "weather", "path": "/srv/hermes-plugins/weather"}]
    expected_work = {
        "defaults": [{"platforms": "api_server"}],
        "provider": {"api_key": "${secret:OPENAI_API_KEY}"},
        "agent": {"max_iterations": 40},
        "plugins": {"directories": [plugins["path"]]},
        "secrets": {"precedence": "environment",
                    "environment_files": ["/run/agenix/hermes-work.env"]},
    }
    assert yaml.safe_load(files["profiles/work/config.yaml"]) == expected_work
    assert yaml.safe_load(files["profiles/research/config.yaml"]) == {
        "platforms": {"enabled": {"api_server": {"kind": "api_server",
                                                 "settings": {"port": 8643}}}},
        "secrets": {"precedence": "environment", "environment_files": [
            "/run/agenix/hermes-research.env", "/run/secrets/shared.env"]}}
    for name, text in files.items():
        assert yaml.safe_load(text) == deployed["settings"][name.split("/")[1]]


def test_environment_files_win_over_dotenv_unless_the_settings_say_otherwise(
        nixpkgs_lib: str) -> None:
    """The layer names the unit's environment files and makes them win over .env (the
    runtime then reads them in the admin CLI too); a profile without any gets neither,
    and `settings.secrets.precedence` still decides."""
    deployed = evaluate(nixpkgs_lib, two_profiles(
        work_settings='secrets.precedence = "dotenv";',
        extra="profiles.research.environmentFiles = lib.mkForce [ ]; "
              "profiles.research.gateway.enable = lib.mkForce false;"))
    assert deployed["failedAssertions"] == []
    files = deployed["layer"]["files"]
    assert yaml.safe_load(files["profiles/work/config.yaml"])["secrets"] == {
        "precedence": "dotenv", "environment_files": ["/run/agenix/hermes-work.env"]}
    assert "secrets" not in yaml.safe_load(files["profiles/research/config.yaml"])


def test_removing_a_setting_removes_it_from_the_layer(nixpkgs_lib: str,
                                                      deployed: dict[str, Any]) -> None:
    without = evaluate(nixpkgs_lib, two_profiles(work_settings=""))
    work = yaml.safe_load(without["layer"]["files"]["profiles/work/config.yaml"])
    assert "agent" not in work
    assert work["provider"] == {"api_key": "${secret:OPENAI_API_KEY}"}
    assert without["layer"]["path"] != deployed["layer"]["path"]
    env = without["units"]["hermes-agent-work"]["environment"]
    assert env["HERMES_CONFIG_LAYERS"] == without["layer"]["path"]


def test_the_admin_hermes_uses_the_same_root_and_layer(deployed: dict[str, Any]) -> None:
    (wrapper,) = deployed["systemPackages"]
    text = wrapper["text"]
    assert f"export HERMES_CONFIG_LAYERS={deployed['layer']['path']}\n" in text
    assert "export HERMES_HOME=/var/lib/hermes-agent/profiles/work\n" in text
    assert "/bin/runuser -u hermes -- \"$hermes\" \"$@\"" in text
    assert text.rstrip().endswith('exec "$hermes" "$@"')


def test_homes_and_seeds_come_from_tmpfiles(deployed: dict[str, Any]) -> None:
    home = "/var/lib/hermes-agent/profiles/work"
    assert deployed["tmpfiles"] == [
        "d /var/lib/hermes-agent 0700 hermes hermes - -",
        "d /var/lib/hermes-agent/profiles 0700 hermes hermes - -",
        "d /var/lib/hermes-agent/profiles/research 0700 hermes hermes - -",
        f"d {home} 0700 hermes hermes - -",
        f"d {home}/memories 0700 hermes hermes - -",
        f"C {home}/SOUL.md - - - - /etc/hermes/soul.md",
        f"z {home}/SOUL.md 0600 hermes hermes - -",
        f"C {home}/memories/USER.md - - - - /etc/hermes/user.md",
        f"z {home}/memories/USER.md 0600 hermes hermes - -",
        "d /var/lib/hermes-agent-state 0700 hermes hermes - -",
    ]


def test_extra_python_packages_reach_their_profile_and_the_admin(nixpkgs_lib: str) -> None:
    deployed = evaluate(nixpkgs_lib, two_profiles(extra="""
        profiles.research.extraPythonPackages = [
          { type = "derivation"; name = "hermes-plugin-notes"; outPath = "/nix/store/notes"; }
        ];"""))
    assert deployed["failedAssertions"] == []
    research = command_of(deployed["units"]["hermes-agent-research"])
    work = command_of(deployed["units"]["hermes-agent-work"])
    assert research[0].endswith("-hermes-runtime-0.1.0-with-plugins/bin/hermes")
    assert work[0].endswith("-hermes-runtime-0.1.0/bin/hermes")
    assert "-hermes-runtime-0.1.0-with-plugins/bin/hermes" in deployed["systemPackages"][0]["text"]


def test_a_state_dir_outside_var_lib_is_made_writable(nixpkgs_lib: str) -> None:
    deployed = evaluate(nixpkgs_lib, two_profiles(extra='stateDir = "/srv/hermes";'))
    assert deployed["failedAssertions"] == []  # under /srv, not /srv itself
    service = deployed["units"]["hermes-agent-work"]["serviceConfig"]
    assert service["ReadWritePaths"] == ["/srv/hermes", "/srv/hermes-state",
                                         "/srv/hermes-workspaces/work"]
    assert "StateDirectory" not in service
    assert deployed["units"]["hermes-agent-work"]["environment"]["HERMES_HOME"] == (
        "/srv/hermes/profiles/work")
    assert "d /srv/hermes/profiles/work 0700 hermes hermes - -" in deployed["tmpfiles"]
    assert "d /srv/hermes-workspaces/work 0700 hermes hermes - -" in deployed["tmpfiles"]


def test_jit_friendliness_and_the_workspace_are_per_profile(nixpkgs_lib: str) -> None:
    """MemoryDenyWriteExecute crashes node and java in the agent's commands: off unless a
    profile asks for it; a profile may name its own working directory."""
    deployed = evaluate(nixpkgs_lib, two_profiles(extra="""
        profiles.work.gateway.memoryDenyWriteExecute = true;
        profiles.research.gateway.workingDirectory = "/srv/research";"""))
    assert deployed["failedAssertions"] == []
    work = deployed["units"]["hermes-agent-work"]["serviceConfig"]
    research = deployed["units"]["hermes-agent-research"]["serviceConfig"]
    assert work["MemoryDenyWriteExecute"] is True
    assert research["MemoryDenyWriteExecute"] is False
    assert research["WorkingDirectory"] == "/srv/research"
    assert research["StateDirectory"] == [
        "hermes-agent", "hermes-agent/profiles", "hermes-agent/profiles/research",
        "hermes-agent-state"]


CONTRADICTIONS = {
    "gateway without a platform": (
        'profiles.quiet.gateway.enable = true;',
        "services.hermes-agent.profiles.quiet.gateway.enable is set but its settings enable "
        "no platform"),
    "literal secret": (
        'profiles.work.settings.provider.api_key = lib.mkForce "sk-live-123";',
        "services.hermes-agent.profiles.work.settings.provider.api_key: a literal secret "
        "would be world-readable in the Nix store"),
    "secrets file in the store": (
        'profiles.research.environmentFiles = [ "/nix/store/abc-secrets.env" ];',
        "services.hermes-agent.profiles.research.environmentFiles: /nix/store/abc-secrets.env "
        "is in the Nix store"),
    "% in an environment file": (
        'profiles.research.environmentFiles = lib.mkForce [ "/run/agenix/100%2F.env" ];',
        "services.hermes-agent.profiles.research.environmentFiles: /run/agenix/100%2F.env "
        "contains %, which systemd reads as a specifier in EnvironmentFile="),
    "% in the state dir": (
        'stateDir = "/var/lib/hermes%2Fagent";',
        "services.hermes-agent.stateDir: /var/lib/hermes%2Fagent contains %, which systemd "
        "reads as a specifier in the units' Environment=HERMES_HOME=..."),
    "unknown default profile": (
        'defaultProfile = lib.mkForce "wrok";',
        'services.hermes-agent.defaultProfile: "wrok" is not among '
        "services.hermes-agent.profiles (research, work)"),
    "reserved profile name": (
        "profiles.default = { };",
        'services.hermes-agent.profiles.default: "default" is not a profile name'),
    "invalid profile name": (
        "profiles.Work = { };",
        'services.hermes-agent.profiles.Work: "Work" is not a profile name'),
    "two gateways on one port": (
        "profiles.research.settings.platforms.enabled.api_server.settings.port = "
        "lib.mkForce 8642;",
        "services.hermes-agent.profiles.work: its api_server listens on port 8642, as "
        "profile research's does"),
    "a profile served by two gateways": (
        'profiles.work.settings.gateway.profiles = [ "research" ];',
        "services.hermes-agent.profiles.work.settings.gateway.profiles: its gateway serves "
        "research, which runs its own gateway too"),
    "extends in a system layer": (
        'profiles.research.settings.extends = "coder";',
        "services.hermes-agent.profiles.research.settings.extends: a system layer cannot "
        "extend a profile"),
    "whitespace in the state dir": (
        'stateDir = "/srv/hermes agent";',
        "services.hermes-agent.stateDir: /srv/hermes agent contains whitespace, a quote or a "
        "backslash, which systemd reads as separators or quoting in StateDirectory="),
    "state dir hidden by ProtectHome": (
        'stateDir = "/home/hermes";',
        "services.hermes-agent.stateDir: /home/hermes is hidden from the gateways by "
        "ProtectHome=true"),
}


@pytest.mark.parametrize("case", CONTRADICTIONS)
def test_contradictions_fail_with_a_clear_message(nixpkgs_lib: str, case: str) -> None:
    extra, message = CONTRADICTIONS[case]
    deployed = evaluate(nixpkgs_lib, two_profiles(extra=extra))
    assert len(deployed["failedAssertions"]) == 1, deployed["failedAssertions"]
    assert deployed["failedAssertions"][0].startswith(message)


def test_environment_files_of_a_profile_without_a_gateway_serve_the_admin_cli(
        nixpkgs_lib: str) -> None:
    """The layer names them (secrets.environment_files): the admin `hermes -p notes`
    reads them, so no gateway or timer is needed for them to be read."""
    deployed = evaluate(nixpkgs_lib, two_profiles(
        extra='profiles.notes.environmentFiles = [ "/run/agenix/notes.env" ];'))
    assert deployed["failedAssertions"] == []


@pytest.mark.parametrize("state_dir",
                         ["/", "/var/lib", "/var/lib/", "/etc", "/usr//", "/var/./lib"])
def test_a_system_directory_is_refused_as_the_state_dir(nixpkgs_lib: str, state_dir: str) -> None:
    """Its tmpfiles line (d <stateDir> 0700 hermes hermes) would take it over."""
    deployed = evaluate(nixpkgs_lib, two_profiles(extra=f"stateDir = {json.dumps(state_dir)};"))
    assert deployed["failedAssertions"] == [
        f"services.hermes-agent.stateDir: {state_dir} is a system directory, which Hermes "
        "would make mode 0700 and the hermes user's; use a directory of its own, such as "
        "/var/lib/hermes-agent."]


# systemd expands %-specifiers (%2 is none: the unit does not load; %n is its name) and
# ${VARIABLES} in ExecStart. In Nix: [ "x.path=/in%2Fbound" "x.text=%n for ${USER}" ].
PERCENT_ARGS = ('profiles.research.gateway.extraArgs = lib.mkForce '
                r'[ "x.path=/in%2Fbound" "x.text=%n for \${USER}" ];')


def test_percent_and_dollar_in_extra_args_stay_literal(nixpkgs_lib: str) -> None:
    deployed = evaluate(nixpkgs_lib, two_profiles(extra=PERCENT_ARGS))
    assert deployed["failedAssertions"] == []
    binary = command_of(deployed["units"]["hermes-agent-work"])[0]
    assert deployed["units"]["hermes-agent-research"]["serviceConfig"]["ExecStart"] == (
        f'"{binary}" "-p" "research" "gateway" "run" "x.path=/in%%2Fbound" '
        '"x.text=%%n for $${USER}"')


@pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed")
def test_a_gateway_unit_with_percent_in_its_arguments_loads(nixpkgs_lib: str,
                                                            tmp_path: Path) -> None:
    deployed = evaluate(nixpkgs_lib, two_profiles(extra=PERCENT_ARGS))
    unit = deployed["units"]["hermes-agent-research"]
    # The store path does not exist here; systemd checks that the program does.
    program = tmp_path / "hermes"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    exec_start = unit["serviceConfig"]["ExecStart"].replace(command_of(unit)[0], str(program))
    unit_file = tmp_path / "hermes-agent-research.service"
    unit_file.write_text(f"[Unit]\nDescription={unit['description']}\n\n"
                         f"[Service]\nExecStart={exec_start}\n")
    result = subprocess.run([str(SYSTEMD_ANALYZE), "verify", "--man=no", str(unit_file)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


# --- the runtime side: a layer directory as the module renders it --------------------


def render_layer(tmp_path: Path, profiles: dict[str, dict[str, Any]]) -> Path:
    """``profiles/<name>/config.yaml`` links to JSON files elsewhere, as in the store."""
    layer = tmp_path / "store" / "hermes-agent-layer"
    for name, settings in profiles.items():
        rendered = tmp_path / "store" / f"hermes-{name}.yaml"
        rendered.write_text(json.dumps(settings), encoding="utf-8")
        (layer / "profiles" / name).mkdir(parents=True)
        (layer / "profiles" / name / "config.yaml").symlink_to(rendered)
    return layer


def test_a_rendered_layer_is_composed_under_the_profiles_own_config(
        hermes, root: Path, tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    layer = render_layer(tmp_path, {
        "work": {"defaults": [{"platforms": "api_server"}],
                 "agent": {"max_iterations": 40},
                 "display": {"show_cost": False, "spinner": False}},
        "research": {"agent": {"max_iterations": 7}},
    })
    env = {"HERMES_CONFIG_LAYERS": str(layer)}
    assert hermes("profile", "create", "work").exit_code == 0
    (root / "profiles" / "work" / "config.yaml").write_text("display:\n  show_cost: true\n")

    explained = hermes("-p", "work", "config", "explain", "agent.max_iterations", env=env)
    assert explained.stdout.splitlines()[:2] == [
        "agent.max_iterations = 40",
        f"  set by: system:work ({layer / 'profiles/work/config.yaml'})"]
    assert hermes("-p", "work", "config", "get", "platforms.name", env=env).stdout == (
        "api_server\n")
    # The profile's own file wins over the layer; what it leaves alone comes from it.
    assert hermes("-p", "work", "config", "get", "display.show_cost", env=env).stdout == "true\n"
    assert hermes("-p", "work", "config", "get", "display.spinner", env=env).stdout == "false\n"
    # Another profile's part of the layer never applies; nor does the layer when unset.
    assert hermes("config", "get", "agent.max_iterations", env=env).stdout == "90\n"
    assert hermes("-p", "work", "config", "get", "agent.max_iterations").stdout == "90\n"


def test_a_setting_removed_from_the_layer_is_gone(hermes, root: Path, tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    layer = render_layer(tmp_path, {"work": {"agent": {"max_iterations": 40}}})
    env = {"HERMES_CONFIG_LAYERS": str(layer)}
    assert hermes("profile", "create", "work").exit_code == 0
    assert hermes("-p", "work", "config", "get", "agent.max_iterations", env=env).stdout == "40\n"

    (tmp_path / "store" / "hermes-work.yaml").write_text("{}", encoding="utf-8")
    assert hermes("-p", "work", "config", "get", "agent.max_iterations", env=env).stdout == "90\n"
    assert "max_iterations" not in (root / "profiles" / "work" / "config.yaml").read_text()


def test_extra_plugin_directories_are_discovered(root: Path, tmp_path: Path,
                                                 environ: dict[str, str]) -> None:
    extra = tmp_path / "store" / "hermes-work-plugins"
    (extra / "weather").mkdir(parents=True)
    (extra / "weather" / "plugin.yaml").write_text("name: weather\n")
    (extra / "notes").mkdir()  # no plugin.yaml: not a plugin
    layer = render_layer(tmp_path, {"work": {"plugins": {"directories": [str(extra)]}}})
    home = home_for(root, "work").ensure()
    (home.plugins_dir / "local").mkdir(parents=True)
    (home.plugins_dir / "local" / "plugin.yaml").write_text("name: local\n")

    env = environ | {"HERMES_CONFIG_LAYERS": str(layer)}
    composed = compose_config(home, env)
    assert composed.config.plugins.directories == [str(extra)]
    runtime = build_runtime(home, composed.config, env)
    plain = build_runtime(home, compose_config(home, environ).config, environ)
    without = plain.container.plugins().discover()  # the bundled ones, and this home's
    assert "local" in without and "weather" not in without
    assert runtime.container.plugins().discover() == sorted([*without, "weather"])


# --- the package: uv2nix reads uv.lock -------------------------------------------------

# The harnesses' arguments: (environment variable, the flake input it is a checkout of).
SOURCES_ENV = {"uv2nixSrc": ("HERMES_TEST_UV2NIX", "pyproject-nix/uv2nix"),
               "pyprojectNixSrc": ("HERMES_TEST_PYPROJECT_NIX", "pyproject-nix/pyproject.nix")}
BUILD_SYSTEMS_ENV = {"buildSystemPkgsSrc": ("HERMES_TEST_BUILD_SYSTEM_PKGS",
                                            "pyproject-nix/build-system-pkgs")}
SYSTEMS = ["x86_64-linux", "aarch64-linux", "aarch64-darwin"]  # flake.nix's packages


def flake_inputs(nixpkgs_lib: str, envs: dict[str, tuple[str, str]]) -> str:
    """The Nix arguments naming checkouts of the flake's inputs, or a skip."""
    sources = {arg: os.environ.get(env) for arg, (env, _) in envs.items()}
    if not all(sources.values()):
        wanted = ", ".join(f"{env} ({repo})" for env, repo in envs.values())
        pytest.skip(f"set {wanted} to checkouts of those flake inputs at flake.nix's "
                    "pinned revisions (the dev shell sets them)")
    sources["nixpkgsLib"] = nixpkgs_lib
    return " ".join(f"{arg} = {json.dumps(path)};" for arg, path in sources.items())


def test_uv2nix_resolves_the_lock_the_package_is_built_from(nixpkgs_lib: str) -> None:
    resolved = evaluate_harness("eval-workspace.nix", flake_inputs(nixpkgs_lib, SOURCES_ENV))

    lock = tomllib.loads((REPO / "uv.lock").read_text(encoding="utf-8"))
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    locked = {p["name"] for p in lock["package"]}
    direct = {spec.split("==")[0].lower().replace(".", "-").replace("_", "-")
              for spec in pyproject["project"]["dependencies"]}
    assert resolved["deps"] == {"hermes-runtime": []}
    assert direct <= set(resolved["packages"]) <= locked


def locked_wheel_hash(lock_path: Path, name: str, version: str) -> str:
    """The hash of the pure-Python wheel of ``name`` ``version`` in a uv.lock."""
    lock = tomllib.loads(lock_path.read_text(encoding="utf-8"))
    (package,) = [p for p in lock["package"] if p["name"] == name and p["version"] == version]
    (wheel,) = [w for w in package["wheels"] if w["url"].endswith("-py3-none-any.whl")]
    return str(wheel["hash"])


@pytest.mark.parametrize("system", SYSTEMS)
def test_every_package_built_from_source_gets_its_build_backend(
        nixpkgs_lib: str, system: str) -> None:
    """uv.lock records no build systems and uv2nix builds an sdist with only those it
    is given (`uv build --no-build-isolation`): antlr4-python3-runtime (hydra's and
    omegaconf's, sdist only) needs setuptools, declared in pyproject.toml; it comes from
    build-system-pkgs, fetched with the hash of that input's uv.lock."""
    args = flake_inputs(nixpkgs_lib, SOURCES_ENV | BUILD_SYSTEMS_ENV)
    plan = evaluate_harness("eval-package.nix", f"{args} system = {json.dumps(system)};")

    assert set(plan) == {"antlr4-python3-runtime", "hermes-runtime"}
    assert [name for name, backends in plan.items() if not backends] == []
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    declared = pyproject["tool"]["uv"]["extra-build-dependencies"]["antlr4-python3-runtime"]
    assert declared == [f"setuptools=={plan['antlr4-python3-runtime']['setuptools']['version']}"]
    setuptools = plan["antlr4-python3-runtime"]["setuptools"]
    lock = Path(os.environ[BUILD_SYSTEMS_ENV["buildSystemPkgsSrc"][0]]) / "uv.lock"
    assert setuptools["hash"] == locked_wheel_hash(lock, "setuptools", setuptools["version"])
    assert "hatchling" in plan["hermes-runtime"]
