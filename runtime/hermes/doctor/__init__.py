"""Health checks behind ``hermes doctor``: the home, its files, dependencies, and what
the profile's config actually uses (provider endpoint, docker or ssh), and what it adds
(MCP servers, plugins, shell hooks: ``extensions``). Imports
neither litellm nor docker; network checks use the standard library with short
timeouts.

Layer 1, a service: imports the foundation (``errors``, ``fsutil``, ``home``,
``credentials``, ``redact``, ``logs``, ``chats``, ``config``, ``sessions``,
``events``, ``models.types``) and the services whose settings it checks; never a
front door.
"""

from __future__ import annotations

from collections.abc import Mapping

from hermes.doctor.base import Check, Status
from hermes.doctor.config import check_config
from hermes.doctor.deps import check_dependencies
from hermes.doctor.drift import check_drift
from hermes.doctor.extensions import check_extensions
from hermes.doctor.files import check_env_file, check_home, check_state_db
from hermes.home import Home

__all__ = ["Check", "Status", "run_checks"]


def run_checks(home: Home, environ: Mapping[str, str], overrides: list[str], *,
               offline: bool = False) -> list[Check]:
    """Every row, in the order shown; ``offline`` skips the network checks."""
    return (check_home(home) + check_state_db(home) + check_env_file(home)
            + check_dependencies() + check_config(home, environ, overrides, offline=offline)
            + check_drift(home, environ, overrides)
            + check_extensions(home, environ, overrides, offline=offline))
