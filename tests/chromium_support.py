"""The system's Chromium for the tests that drive it (the A/B report, the browser toolset):
its path, or a skip saying what is missing — on CI (``CI`` set) a failure instead, since
.ci/run installs chromium."""

from __future__ import annotations

import os
import shutil

import pytest


def chromium_path() -> str:
    """Chromium's path; skips (fails on CI) without one."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        reason = "Chromium is not installed (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI must render the report and drive the browser toolset: "
                        ".ci/run installs chromium)")
        pytest.skip(reason)
    return found


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_path()
