"""Arms of an experiment: profiles × the cross product of override sweeps.

Each arm is a whole profile plus one run's overrides; it is composed and validated
before anything runs, and kept as its composed config so it can be run again
exactly (``hermes ab rerun``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes.credentials import REDACTED, is_reference, is_secret_key
from hermes.errors import HermesError
from hermes.hints import for_profile


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
            label = [_shown(run[i]) for i in varying]
            if len(profiles) > 1:
                label.insert(0, profile)
            arms.append(Arm(" ".join(label) or profile, profile, tuple(run)))
    return arms


def _shown(override: str) -> str:
    """An override as an arm's name shows it: a literal secret redacted."""
    key, equals, value = override.partition("=")
    if equals and is_secret_key(key) and not is_reference(value):
        return f"{key}={REDACTED}"
    return override


@dataclass(frozen=True)
class ComposedArm:
    """An arm whose config composed and validated."""

    arm: Arm
    raw: dict[str, Any]
    """Composed values, interpolations (secrets) unresolved: what is stored."""


def compose_arms(arms: Sequence[Arm], manager: Any, environ: Mapping[str, str]
                 ) -> tuple[list[ComposedArm], list[str]]:
    """Compose every arm; the composed ones and a problem line for each one that fails
    (its hints name the arm's profile when the arms come from several)."""
    from hermes.agent.prechecks import missing_api_key
    from hermes.config import compose_config

    composed: list[ComposedArm] = []
    problems: list[str] = []
    several = len({arm.profile for arm in arms}) > 1
    for number, arm in enumerate(arms, 1):
        try:
            result = compose_config(manager.home(arm.profile), environ, arm.overrides)
            missing = missing_api_key(result.config, result.raw)
            problem = (f"no API key for provider {result.config.provider.name} — set {missing}"
                       if missing else _literal_secret(result))
        except HermesError as exc:
            problem = str(exc)
        if problem:
            problems.append(f"arm {number} ({arm.name}): "
                            f"{for_profile(problem, arm.profile, always=several)}")
        else:
            composed.append(ComposedArm(arm, result.raw))
    return composed, problems


def _literal_secret(composed: Any) -> str | None:
    """A secret written as a value would be stored with the experiment (redacted there,
    so every run would fail): refused, with the fix — the secret in .env, the arm
    referring to it. Where it came from is named, never its value."""
    from hermes.config.placeholders import redacted_keys

    keys = redacted_keys(composed.raw)
    if not keys:
        return None
    key = keys[0]
    name = key.upper().replace(".", "_")
    reference = "${secret:" + name + "}"
    origin = (composed.sources.who_set(key) or "a layer").split(": ", 1)[0]  # not the value
    if origin == "command line":
        where, use = "given on the command line", f"pass {key}='{reference}'"
    else:
        where, use = f"in {origin}", f"write {reference} in its place"
    return (f"{key}: a literal secret {where} would be stored with the experiment — put it "
            f"in .env (`hermes config set {name} …`) and {use}")
