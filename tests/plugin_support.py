"""Helpers for the plugin tests: the sample plugins under ``plugins_data/``, ad-hoc
plugins written by a test, and runtimes against the fake LLM."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

from conftest import write_fake_provider
from hermes.config import compose_config
from hermes.container import Runtime, build_runtime
from hermes.home import home_from_path

SAMPLES = Path(__file__).resolve().parent / "plugins_data"
SINK_ENV = {"SINK_TOKEN": "tok-1234", "SINK_REGION": "eu"}
"""What the sink plugin requires (``requires_env``)."""


def install_sample(home: Path, name: str) -> Path:
    """Copy ``plugins_data/<name>`` into ``home``'s ``plugins/``."""
    target = home / "plugins" / name
    shutil.copytree(SAMPLES / name, target)
    return target


def write_plugin(home: Path, name: str, code: str, manifest: str = "") -> Path:
    """A plugin of the test's own: ``plugin.yaml`` and ``__init__.py`` (dedented)."""
    directory = home / "plugins" / name
    directory.mkdir(parents=True)
    (directory / "plugin.yaml").write_text(manifest or f"name: {name}\nversion: 0.1.0\n")
    (directory / "__init__.py").write_text(textwrap.dedent(code))
    return directory


def enable_at_terminal(environ: dict[str, str], name: str) -> Any:
    """``hermes plugins enable NAME`` at a terminal (a ``pexpect`` child), to answer its
    questions."""
    import sys

    import pexpect

    return pexpect.spawn(sys.executable, ["-m", "hermes", "plugins", "enable", name],
                         env=environ, encoding="utf-8", timeout=60, dimensions=(40, 300))


def events(home: Path) -> list[dict[str, Any]]:
    """What the sink plugin recorded (``sink-events.jsonl``), in order."""
    path = home / "sink-events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def kinds(home: Path) -> list[str]:
    return [event["event"] for event in events(home)]


def make_runtime(home: Path, environ: dict[str, str], base_url: str | None,
                 *overrides: str, provider: bool = True) -> Runtime:
    """A runtime of ``home`` (the fake LLM as its provider when ``base_url``)."""
    if base_url is not None and provider:
        write_fake_provider(home, base_url)
    hermes_home = home_from_path(home).ensure()
    config = compose_config(hermes_home, environ, list(overrides)).config
    return build_runtime(hermes_home, config, environ)
