"""Each platform's ``settings`` are typed and checked when the config is composed: through the
real CLI, ``config set`` refuses a bad value (nothing written), ``config validate`` and
``doctor`` refuse a bad file, and ``gateway run`` refuses it before anything serves."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import refused, write_fake_provider
from hermes.config.platform_schema import PLATFORM_SETTINGS
from hermes.gateway.platforms import ADAPTERS
from test_doctor import table

KEY = "platforms.enabled.api_server.settings"

BAD_VALUES = [
    ("port", "abc", "input should be a valid integer"),
    ("port", "99999", "less than or equal to 65535"),
    ("port", "-1", "greater than or equal to 0"),
    ("port", "true", "input should be a valid integer"),
    ("host", "''", "empty value"),
    ("max_concurrency", "-3", "greater than or equal to 1"),
    ("max_concurrency", "2.5", "input should be a valid integer"),
    ("read_timeout", "0", "greater than 0"),
    ("read_timeout", "soon", "input should be a valid number"),
    ("max_body_bytes", "0", "greater than or equal to 1"),
]


@pytest.fixture
def serving(root: Path) -> Path:
    """A profile with the API server enabled (and its own setting of the port)."""
    write_fake_provider(root, "http://127.0.0.1:9/v1")
    config = yaml.safe_load((root / "config.yaml").read_text())
    config["defaults"].append({"override platforms": "api_server"})
    config["platforms"] = {"enabled": {"api_server": {"settings": {"port": 8700}}}}
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return root / "config.yaml"


@pytest.mark.parametrize(("name", "value", "fragment"), BAD_VALUES)
def test_config_set_refuses_a_bad_setting(hermes, serving: Path, name: str, value: str,
                                          fragment: str) -> None:
    before = serving.read_bytes()
    line = refused(hermes("config", "set", f"{KEY}.{name}", value), f"{KEY}.{name}", fragment)
    assert str(serving) in line
    assert serving.read_bytes() == before


def test_an_unknown_setting_is_refused_with_the_closest_name(hermes, serving: Path) -> None:
    before = serving.read_bytes()
    refused(hermes("config", "set", f"{KEY}.prot", "8000"), f"{KEY}.prot: unknown key",
            'did you mean "port"', "allowed_hosts, header_timeout, host, max_body_bytes, "
            "max_client_connections, max_concurrency, port, read_timeout")
    assert serving.read_bytes() == before


def test_good_settings_are_written_and_read_back(hermes, serving: Path) -> None:
    for name, value in (("port", "8123"), ("host", "::1"), ("max_concurrency", "3"),
                        ("read_timeout", "2.5"), ("max_body_bytes", "1024")):
        assert hermes("config", "set", f"{KEY}.{name}", value).exit_code == 0
        assert hermes("config", "get", f"{KEY}.{name}").stdout.strip() == value


@pytest.mark.parametrize(("name", "value", "fragment"), [
    ("port", "abc", "valid integer"), ("port", 99999, "65535"), ("host", "", "empty value"),
    ("max_concurrency", -3, "greater than or equal to 1"), ("prot", 1, "unknown key")])
def test_validate_and_doctor_refuse_a_bad_file(hermes, serving: Path, name: str,
                                               value: object, fragment: str) -> None:
    config = yaml.safe_load(serving.read_text())
    config["platforms"]["enabled"]["api_server"]["settings"][name] = value
    serving.write_text(yaml.safe_dump(config, sort_keys=False))
    refused(hermes("config", "validate"), str(serving), f"{KEY}.{name}", fragment)
    doctor = hermes("doctor")
    status, detail, _fix = table(doctor)["config"]
    assert doctor.exit_code != 0 and status == "fail"
    assert f"{KEY}.{name}" in detail and fragment in detail


def test_gateway_run_refuses_bad_settings_before_serving(hermes_subprocess, serving: Path
                                                         ) -> None:
    text = serving.read_text().replace("port: 8700", "port: abc")
    serving.write_text(text)
    result = hermes_subprocess("gateway", "run")
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and f"{KEY}.port" in result.stderr
    assert "serving" not in result.stderr and "Traceback" not in result.stderr


def test_an_unknown_platform_kind_names_the_known_ones(hermes, serving: Path) -> None:
    refused(hermes("config", "set", "platforms.enabled.api_server.kind", "api_servr"),
            "platforms.enabled.api_server.kind", 'no platform kind "api_servr"',
            'did you mean "api_server"', "available: api_server")


def test_every_platform_kind_has_settings_and_an_adapter() -> None:
    assert set(PLATFORM_SETTINGS) == set(ADAPTERS)


def test_a_kind_module_imports_first() -> None:
    """Importing a kind's module before ``platform_schema`` found itself half-made there
    (``platform_schema`` imports every kind): AttributeError, no Settings."""
    import subprocess
    import sys

    from hermes.config.platform_schema import PLATFORM_ADAPTERS

    for kind in PLATFORM_ADAPTERS:
        done = subprocess.run([sys.executable, "-c", f"import hermes.config.platform_kinds."
                               f"{kind} as m; print(m.KIND)"], capture_output=True, text=True,
                              timeout=60, check=False)
        assert (done.returncode, done.stdout) == (0, f"{kind}\n"), done.stderr
