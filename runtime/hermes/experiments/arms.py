"""Arms of an experiment: profiles × the cross product of override sweeps.

Each arm is a whole profile plus one run's overrides; it is composed and validated
before anything runs, and kept as its composed config so it can be run again
exactly (``hermes ab rerun``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes.errors import HermesError


@dataclass(frozen=True)
class Arm:
    """One configuration under test."""

    name: str
    """Unique label: the profile (when several) and the overrides that vary."""
    profile: str
    """The profile whose home is copied for every run of this arm."""
    overrides: tuple[str, ...] = ()
    """Hydra overrides applied on top of the profile."""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "profile": self.profile, "overrides": list(self.overrides)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Arm:
        return cls(str(data["name"]), str(data["profile"]), tuple(data.get("overrides", ())))


def plan_arms(profiles: Sequence[str], sweeps: Sequence[str]) -> list[Arm]:
    """Every profile × every run of ``sweeps`` (Hydra multirun grammar), named by what
    varies between them. Raises ``ConfigError`` for a sweep that does not parse."""
    from hermes.config.sweeps import expand_sweeps

    runs = expand_sweeps(sweeps)
    profiles = list(dict.fromkeys(profiles))  # a profile named twice is one arm
    varying = [i for i in range(len(runs[0]) if runs else 0)
               if len({run[i] for run in runs}) > 1]
    arms: list[Arm] = []
    for profile in profiles:
        for run in runs:
            label = [run[i] for i in varying]
            if len(profiles) > 1:
                label.insert(0, profile)
            arms.append(Arm(" ".join(label) or profile, profile, tuple(run)))
    return arms


@dataclass(frozen=True)
class ComposedArm:
    """An arm whose config composed and validated."""

    arm: Arm
    raw: dict[str, Any]
    """Composed values, interpolations (secrets) unresolved: what is stored."""


def compose_arms(arms: Sequence[Arm], manager: Any, environ: Mapping[str, str]
                 ) -> tuple[list[ComposedArm], list[str]]:
    """Compose every arm; the composed ones and a problem line for each one that fails."""
    from hermes.config import compose_config
    from hermes.doctor import missing_api_key

    composed: list[ComposedArm] = []
    problems: list[str] = []
    for number, arm in enumerate(arms, 1):
        try:
            result = compose_config(manager.home(arm.profile), environ, arm.overrides)
        except HermesError as exc:
            problems.append(f"arm {number} ({arm.name}): {exc}")
            continue
        missing = missing_api_key(result)
        if missing:
            problems.append(f"arm {number} ({arm.name}): no API key for provider "
                            f"{result.config.provider.name} — set {missing}")
            continue
        composed.append(ComposedArm(arm, result.raw))
    return composed, problems
