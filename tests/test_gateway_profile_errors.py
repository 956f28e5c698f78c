"""`hermes gateway run --profiles a,b`: a config error of one profile is reported with
hints for that profile, whichever profile the command ran with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import ok


def test_a_served_profiles_config_error_hints_at_that_profile(
        hermes: Any, hermes_subprocess: Any, root: Path) -> None:
    for name in ("a", "b"):
        ok(hermes("profile", "create", name))
        ok(hermes("-p", name, "config", "set", "platforms", "api_server"))
        ok(hermes("-p", name, "config", "set", "OPENAI_API_KEY", "sk-test-0123456789abcdef"))
    with (root / "profiles" / "b" / "config.yaml").open("a") as config:
        config.write('provider:\n  model: ""\n')
    for ran_with in ([], ["-p", "a"]):
        proc = hermes_subprocess(*ran_with, "gateway", "run", "--profiles", "a,b")
        assert proc.returncode == 2, proc.stderr
        error = proc.stderr.strip().splitlines()[-1]
        assert "profiles/b/config.yaml" in error and "provider.model: empty value" in error
        assert "set it with `hermes -p b config set provider.model VALUE`" in error, error
