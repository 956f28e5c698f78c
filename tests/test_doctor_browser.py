"""`hermes doctor` says whether the browser toolset has a browser, and how to add one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import write_fake_provider
from test_doctor import flat, http_server, table  # noqa: F401 — the fixture


@pytest.fixture
def path_with_chromium(tmp_path: Path) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    chromium = bin_dir / "chromium"
    chromium.write_text("#!/bin/sh\nexit 0\n")
    chromium.chmod(0o755)
    return str(bin_dir)


def test_the_chromium_on_path_is_named(hermes, root: Path, http_server: str,  # noqa: F811
                                       path_with_chromium: str) -> None:
    write_fake_provider(root, http_server)
    result = hermes("doctor", "--offline", env={"PATH": path_with_chromium})
    status, detail, _ = table(result)["browser"]
    assert status == "ok" and detail == f"Chromium: {path_with_chromium}/chromium"


def test_without_a_browser_doctor_says_how_to_add_one(hermes, root: Path, http_server: str,  # noqa: F811
                                                      tmp_path: Path) -> None:
    write_fake_provider(root, http_server)
    empty = tmp_path / "empty"
    empty.mkdir()
    result = hermes("doctor", "--offline", env={"PATH": str(empty)})
    status, detail, fix = table(result)["browser"]
    assert status == "warn" and "the browser tools are hidden" in detail
    assert "apt-get install chromium" in fix and "containers/build.sh --browser" in fix
    assert "services.hermes-agent.browser.enable = true" in fix
    assert result.exit_code == 0, result.stdout  # a missing browser fails nothing else
    named = hermes("doctor", "--offline", "browser.executable=/opt/none/chrome",
                   env={"PATH": os.environ["PATH"]})
    assert "browser.executable /opt/none/chrome" in flat(named)
    assert table(named)["browser"][0] == "warn"


def test_a_cdp_browser_is_reported_without_a_local_one(hermes, root: Path,
                                                       http_server: str) -> None:  # noqa: F811
    write_fake_provider(root, http_server)
    result = hermes("doctor", "--offline", "browser=cdp",
                    "browser.cdp_url=http://127.0.0.1:9222")
    status, detail, _ = table(result)["browser"]
    assert status == "ok" and "cdp: the browser at http://127.0.0.1:9222" in detail
