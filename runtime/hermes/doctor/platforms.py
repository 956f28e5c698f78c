"""The credentials of each configured chat platform, checked with one cheap call where its
kind offers one: a ``check(token, settings) -> (passed, detail)`` function in its
``hermes.config.platform_kinds`` module (Slack's ``auth.test``, an XMPP login, ...), or
for the first kinds in ``hermes.doctor.first_kinds`` (Telegram's ``getMe``, Matrix's
``whoami``, an IMAP login)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

from hermes.doctor.base import Check

CredentialCheck = Callable[[str | None, Any], tuple[bool, str]]


def check_platforms(platforms: Any, *, offline: bool) -> list[Check]:
    """One row per enabled platform whose kind can check its credentials."""
    checks = _kind_checks()
    rows = []
    for name, platform in platforms.enabled.items():
        check = checks.get(platform.kind)
        if check is None:
            continue
        title = f"platform {name}"
        if offline:
            rows.append(Check(title, "ok", f"not checked (--offline): {platform.kind}"))
            continue
        passed, detail = check(platform.token, platform.settings)
        rows.append(Check(title, "ok", detail) if passed else Check(
            title, "fail", detail, f"check platforms.enabled.{name}.token and .settings "
            f"(`hermes config explain platforms.enabled.{name}`)"))
    return rows


def _kind_checks() -> dict[str, CredentialCheck]:
    from hermes.config import platform_kinds
    from hermes.doctor.first_kinds import CHECKS

    found: dict[str, CredentialCheck] = dict(CHECKS)
    for module_info in pkgutil.iter_modules(platform_kinds.__path__):
        module = importlib.import_module(f"{platform_kinds.__name__}.{module_info.name}")
        if callable(getattr(module, "check", None)):
            found[module.KIND] = module.check
    return found
