"""The NixOS module's `browser` option: Chromium on the units' and the admin's PATH,
where the browser toolset finds it (nix/module.nix; evaluated like tests/test_nix.py)."""

from __future__ import annotations

from typing import Any

import pytest

from test_nix import evaluate, locate_nixpkgs_lib, two_profiles


@pytest.fixture(scope="module")
def nixpkgs_lib() -> str:
    return locate_nixpkgs_lib()


def test_the_browser_is_on_every_units_path_and_the_admins(nixpkgs_lib: str) -> None:
    deployed = evaluate(nixpkgs_lib, two_profiles(extra="""
        browser.enable = true;
        profiles.research.gateway.enable = lib.mkForce false;
        profiles.research.cron.timer.enable = true;"""))
    assert deployed["failedAssertions"] == []
    units: dict[str, Any] = deployed["units"]
    assert set(units) == {"hermes-agent-work", "hermes-agent-research-cron"}
    for unit in units.values():
        [browser] = unit["path"]
        assert browser.endswith("-chromium-142.0")
    admin = deployed["systemPackages"][0]["text"]
    [line] = [line for line in admin.splitlines() if line.startswith("export PATH=")]
    assert line.replace("'", "") == f'export PATH="$PATH:"{browser}/bin'


def test_without_the_option_nothing_is_added(nixpkgs_lib: str) -> None:
    deployed = evaluate(nixpkgs_lib, two_profiles())
    assert all(unit["path"] == [] for unit in deployed["units"].values())
    assert "export PATH" not in deployed["systemPackages"][0]["text"]


def test_another_browser_package_can_be_named(nixpkgs_lib: str) -> None:
    deployed = evaluate(nixpkgs_lib, two_profiles(extra="""
        browser.enable = true;
        browser.package = { type = "derivation"; name = "ungoogled-chromium";
                            outPath = "/nix/store/ungoogled"; };"""))
    assert deployed["units"]["hermes-agent-work"]["path"] == ["/nix/store/ungoogled"]


def test_a_browser_under_memory_deny_write_execute_is_refused(nixpkgs_lib: str) -> None:
    deployed = evaluate(nixpkgs_lib, two_profiles(extra="""
        browser.enable = true;
        profiles.work.gateway.memoryDenyWriteExecute = true;"""))
    [message] = deployed["failedAssertions"]
    assert message.startswith("services.hermes-agent.browser.enable: Chromium cannot run "
                              "under MemoryDenyWriteExecute=true")
    assert "profiles.<name>.gateway.memoryDenyWriteExecute = false for work," in message
