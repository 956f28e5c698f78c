"""Installed packages against the exact pins of this distribution."""

from __future__ import annotations

import re
from importlib import metadata

from hermes.doctor.base import Check

COMPROMISED = {"litellm": {"1.82.7", "1.82.8"}}
DISTRIBUTION = "hermes-runtime"


def check_dependencies() -> list[Check]:
    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return [Check("dependencies", "fail", f"{DISTRIBUTION} is not installed",
                      "uv sync --frozen")]
    problems = []
    for requirement in requirements:
        match = re.match(r"([A-Za-z0-9_.\-]+)==([^;\s]+)", requirement)
        if not match or "extra ==" in requirement:
            continue
        problem = _problem(*match.groups())
        if problem:
            problems.append(problem)
    if problems:
        return [Check("dependencies", "fail", "; ".join(problems), "uv sync --frozen")]
    return [Check("dependencies", "ok", f"{len(requirements)} pinned packages match")]


def _problem(name: str, pinned: str) -> str | None:
    try:
        installed = metadata.version(name)
    except metadata.PackageNotFoundError:
        return f"{name} missing"
    if installed in COMPROMISED.get(name.lower(), set()):
        return f"{name} {installed} is a compromised release"
    return f"{name} {installed} != {pinned}" if installed != pinned else None
