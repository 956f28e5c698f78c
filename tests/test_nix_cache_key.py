"""NixOS keeps the composed-config cache. Its key must live outside every Hermes root
(runtime/hermes/config/cache_signing.py), but the module's ``hermes`` user has the root
as its home, so its default ``~/.local/state`` lies inside the root and nothing would be
cached. The units and the admin ``hermes`` run by root (which becomes the service user)
get ``XDG_STATE_HOME=<stateDir>-state`` instead, a 0700 directory of the service user
beside the root. Evaluated like tests/test_nix.py; as root, the evaluated units'
environment and wrapper also run for real as ``nobody`` on a root made by
systemd-tmpfiles from the module's own rules.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes.config.cache_signing import key_file
from nobody_support import nobody_prefix
from test_nix import evaluate, nixpkgs_lib, two_profiles  # noqa: F401 (nixpkgs_lib: a fixture)

NOTES = "profiles.notes = { settings.agent.max_iterations = 20; cron.timer.enable = true; };"
UNITS = ("hermes-agent-work", "hermes-agent-research", "hermes-agent-notes-cron")
RUNUSER = shutil.which("runuser")
TMPFILES = shutil.which("systemd-tmpfiles")


def state_home_of(unit: dict[str, Any]) -> str:
    return str(unit["environment"]["XDG_STATE_HOME"])


def test_the_units_keep_the_key_beside_the_root_under_var_lib(
        nixpkgs_lib: str) -> None:  # noqa: F811
    deployed = evaluate(nixpkgs_lib, two_profiles(extra=NOTES))
    assert deployed["failedAssertions"] == []
    root = Path("/var/lib/hermes-agent")
    assert deployed["users"]["hermes"]["home"] == str(root)
    # Why: the service user's default state home is inside the root, so no key.
    assert key_file(root, {"HOME": str(root)}) is None
    for name in UNITS:
        unit = deployed["units"][name]
        assert state_home_of(unit) == "/var/lib/hermes-agent-state"
        key = key_file(root, {"HOME": str(root), **unit["environment"]})
        assert key is not None and key.parent == Path(
            "/var/lib/hermes-agent-state/hermes/cache-keys")
        service = unit["serviceConfig"]
        assert "hermes-agent-state" in service["StateDirectory"]
        assert service["StateDirectoryMode"] == "0700"
    # The admin hermes needs it without any unit too.
    assert "d /var/lib/hermes-agent-state 0700 hermes hermes - -" in deployed["tmpfiles"]


def test_outside_var_lib_tmpfiles_makes_it_and_the_units_may_write_it(
        nixpkgs_lib: str) -> None:  # noqa: F811
    deployed = evaluate(nixpkgs_lib, two_profiles(extra=NOTES + ' stateDir = "/srv/hermes";'))
    assert deployed["failedAssertions"] == []
    assert "d /srv/hermes-state 0700 hermes hermes - -" in deployed["tmpfiles"]
    for name in UNITS:
        unit = deployed["units"][name]
        assert state_home_of(unit) == "/srv/hermes-state"
        assert "/srv/hermes-state" in unit["serviceConfig"]["ReadWritePaths"]
        assert "StateDirectory" not in unit["serviceConfig"]


def test_a_trailing_slash_keeps_the_siblings_outside_the_root(
        nixpkgs_lib: str) -> None:  # noqa: F811
    """``/var/lib/hermes-agent/`` + ``-state`` would be a directory inside the root (no
    key), + ``-workspaces`` a working directory the sandbox hides."""
    deployed = evaluate(nixpkgs_lib, two_profiles(extra='stateDir = "/var/lib/hermes-agent/";'))
    assert deployed["failedAssertions"] == []
    unit = deployed["units"]["hermes-agent-work"]
    service = unit["serviceConfig"]
    assert state_home_of(unit) == "/var/lib/hermes-agent-state"
    assert service["WorkingDirectory"] == "/var/lib/hermes-agent-workspaces/work"
    assert service["StateDirectory"] == [
        "hermes-agent", "hermes-agent/profiles", "hermes-agent/profiles/work",
        "hermes-agent-state", "hermes-agent-workspaces", "hermes-agent-workspaces/work"]


def wrapper_branches(text: str) -> tuple[str, str, str]:
    """The admin wrapper's (as root, as the service user, everyone else) parts."""
    match = re.search(r'\nif \[ "\$\(\S+/bin/id -u\)" = 0 \]; then\n(.*?)\n'
                      r'elif \[ "\$\(\S+/bin/id -un\)" = hermes \]; then\n(.*?)\nfi\n',
                      text, re.S)
    assert match, text
    return match[1], match[2], text[:match.start()] + text[match.end():]


def test_the_admin_hermes_exports_it_for_the_service_user_only(
        nixpkgs_lib: str) -> None:  # noqa: F811
    deployed = evaluate(nixpkgs_lib, two_profiles())
    (wrapper,) = deployed["systemPackages"]
    as_root, as_service_user, elsewhere = wrapper_branches(wrapper["text"])
    export = "export XDG_STATE_HOME=/var/lib/hermes-agent-state"
    first, then = (line.strip() for line in as_root.splitlines())
    assert first == export  # before root becomes the service user
    assert then.startswith("exec ") and then.endswith('/bin/runuser -u hermes -- "$hermes" "$@"')
    assert as_service_user.strip() == export
    # An admin running it as themselves keeps their own XDG state.
    assert "XDG_STATE_HOME" not in elsewhere


def test_odd_characters_in_the_state_dir_reach_the_wrapper_quoted(
        nixpkgs_lib: str) -> None:  # noqa: F811
    deployed = evaluate(nixpkgs_lib, two_profiles(extra='stateDir = "/srv/h$(id)";'))
    assert deployed["failedAssertions"] == []
    assert state_home_of(deployed["units"]["hermes-agent-work"]) == "/srv/h$(id)-state"
    assert "export XDG_STATE_HOME='/srv/h$(id)-state'\n" in deployed["systemPackages"][0]["text"]


def test_home_manager_needs_no_state_home(nixpkgs_lib: str) -> None:  # noqa: F811
    """The root is ~/.hermes and the key goes to the user's ~/.local/state."""
    configuration = two_profiles().replace("services.hermes-agent", "programs.hermes-agent")
    deployed = evaluate(nixpkgs_lib, configuration, target="home-manager")
    assert deployed["failedAssertions"] == []
    environment = dict(line.split("=", 1)
                       for line in deployed["units"]["hermes-agent-work"]["Service"]["Environment"])
    assert "XDG_STATE_HOME" not in environment
    key = key_file(Path("/home/alice/.hermes"), {"HOME": "/home/alice", **environment})
    assert key is not None and key.parent == Path("/home/alice/.local/state/hermes/cache-keys")
    assert "XDG_STATE_HOME" not in deployed["packages"][0]["text"]


# --- for real, as nobody: the units' environment and the admin wrapper run by root ---

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or RUNUSER is None or TMPFILES is None,
    reason="needs root, runuser and systemd-tmpfiles to run as nobody on a made root")


@pytest.fixture
def base() -> Iterator[Path]:
    """A directory nobody can traverse (tmp_path's parents are root's, 0700)."""
    path = Path(tempfile.mkdtemp(prefix="hermes-nix-", dir="/var/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def deploy_as_nobody(lib_dir: str, base: Path) -> dict[str, Any]:
    """The module evaluated for a root under ``base`` run by ``nobody``, its tmpfiles
    rules applied by systemd-tmpfiles, and its layer rendered where the runtime reads it
    (the evaluation's store paths do not exist)."""
    deployed = evaluate(lib_dir, two_profiles(
        extra=f'stateDir = {json.dumps(str(base / "root"))}; '
              'user = "nobody"; group = "nogroup"; '
              "profiles.work.soul = lib.mkForce null; "
              "profiles.work.memories.user = lib.mkForce null; "
              "profiles.work.extraPlugins = lib.mkForce [ ]; "
              "profiles.work.environmentFiles = lib.mkForce [ ];"))
    assert deployed["failedAssertions"] == []
    rules = base / "hermes.conf"
    rules.write_text("\n".join(deployed["tmpfiles"]) + "\n")
    made = subprocess.run([str(TMPFILES), "--create", str(rules)],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    layer = base / "layer"
    for name, text in deployed["layer"]["files"].items():
        (layer / name).parent.mkdir(parents=True)
        (layer / name).write_text(text)
    layer.chmod(0o755)
    for path in layer.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    deployed["layerDir"] = str(layer)
    return deployed


def cached(root: Path, profile: str) -> list[Path]:
    return sorted((root / "profiles" / profile / ".cache" / "config").glob("*.json"))


def keys(state_home: Path) -> list[Path]:
    directory = state_home / "hermes" / "cache-keys"
    return sorted(directory.iterdir()) if directory.is_dir() else []


def run_as_nobody(environ: dict[str, str], cwd: str | Path) -> str:
    """``hermes -p work config get platforms.name`` as nobody, twice (the second run
    reads the cache when there is one); its output."""
    command = [*nobody_prefix(),
               sys.executable, "-m", "hermes", "-p", "work", "config", "get", "platforms.name"]
    outputs = set()
    for _ in range(2):
        run = subprocess.run(command, env=environ, capture_output=True, text=True, timeout=120,
                             cwd=cwd)
        assert run.returncode == 0, run.stderr
        outputs.add(run.stdout)
    (output,) = outputs
    return output


@needs_root
def test_a_unit_run_as_the_service_user_caches_its_config(
        nixpkgs_lib: str, base: Path) -> None:  # noqa: F811
    deployed = deploy_as_nobody(nixpkgs_lib, base)
    root = base / "root"
    unit = deployed["units"]["hermes-agent-work"]
    # As systemd starts it: the unit's environment, HOME the user's home (the root).
    environ = unit["environment"] | {
        "HERMES_CONFIG_LAYERS": deployed["layerDir"], "HOME": str(root),
        "PATH": os.environ["PATH"], "LANG": "C.UTF-8", "HERMES_NO_DAEMON": "1"}
    assert run_as_nobody(environ, unit["serviceConfig"]["WorkingDirectory"]) == "api_server\n"
    assert len(cached(root, "work")) == 1
    state_home = Path(state_home_of(unit))
    assert (state_home.stat().st_uid, state_home.stat().st_mode & 0o777) == (65534, 0o700)
    [key] = keys(state_home)
    assert key.stat().st_uid == 65534 and key.stat().st_mode & 0o777 == 0o600


@needs_root
def test_root_running_the_admin_hermes_caches_as_the_service_user(
        nixpkgs_lib: str, base: Path) -> None:  # noqa: F811
    """The wrapper runs with the real runuser; the program it starts records the
    environment it got (the venv's Python lies under /root, which nobody cannot reach
    through runuser here), and the CLI then runs as nobody with exactly that."""
    deployed = deploy_as_nobody(nixpkgs_lib, base)
    root = base / "root"
    seen = base / "seen"
    seen.mkdir()
    os.chown(seen, 65534, 65534)
    recorder = base / "record-environment"
    recorder.write_text(f"#!/bin/sh\nexec /usr/bin/env -0 > {seen}/environ\n")
    recorder.chmod(0o755)
    # The evaluation's store paths stand for these.
    text = deployed["systemPackages"][0]["text"]
    text = re.sub(r"^hermes=\S+$", f"hermes={recorder}", text, flags=re.M)
    text = re.sub(r"/nix/store/\S+-coreutils/bin/id", shutil.which("id") or "id", text)
    text = re.sub(r"/nix/store/\S+-util-linux/bin/runuser", str(RUNUSER), text)
    wrapper = base / "hermes"
    wrapper.write_text("#!/bin/sh\n" + text)
    wrapper.chmod(0o755)
    run = subprocess.run([str(wrapper), "config", "get", "platforms.name"],
                         env={"PATH": os.environ["PATH"], "LANG": "C.UTF-8"},
                         capture_output=True, text=True, timeout=60, cwd=base)
    assert run.returncode == 0, run.stderr
    assert (seen / "environ").stat().st_uid == 65534  # it ran as the service user
    environ = dict(entry.split("=", 1)
                   for entry in (seen / "environ").read_text().split("\0") if entry)
    assert environ["HOME"] == "/nonexistent"  # runuser's: nobody's home
    environ |= {"HERMES_CONFIG_LAYERS": deployed["layerDir"], "HERMES_NO_DAEMON": "1"}
    assert run_as_nobody(environ, base) == "api_server\n"
    assert len(cached(root, "work")) == 1
    [key] = keys(Path(f"{root}-state"))
    assert key.stat().st_uid == 65534
