"""Where a job's answer goes.

- ``local``: nowhere; the output file under ``cron/output/<job>/`` only;
- ``origin``: the chat the job was created from (by the agent's ``cronjob`` tool);
- a platform's name, e.g. ``telegram``: that platform's ``home_channel``;
- ``platform:chat_id[:thread]``: that chat.

Targets are checked against the profile's enabled platforms when a job is created or
edited, and resolved again at each run (the config may have changed since).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hermes.chats import Target, TargetError, parse_target
from hermes.config.schema import PlatformsConfig
from hermes.cron.jobs import JobError
from hermes.errors import did_you_mean, one_of

LOCAL, ORIGIN = "local", "origin"
FORMS = ("local, origin (the chat that created the job), a platform's name (its "
         "home_channel) or platform:chat_id[:thread]")


class TargetRefused(JobError):
    """A delivery target that names nothing this profile can deliver to."""


@dataclass(frozen=True)
class Destinations:
    """The platforms a profile's jobs may deliver to, with their home channels."""

    home_channels: Mapping[str, str | None]
    """Enabled platform -> its ``home_channel`` (None: not set)."""

    @classmethod
    def of(cls, platforms: PlatformsConfig) -> Destinations:
        return cls({name: platform.home_channel for name, platform in platforms.enabled.items()})

    def check(self, deliver: str, origin: Mapping[str, str] | None) -> str:
        """``deliver`` if a job of ``origin`` can deliver there, else ``TargetRefused``."""
        deliver = deliver.strip()
        if deliver == ORIGIN and origin is None:
            raise TargetRefused("deliver origin: the job was not created from a chat; "
                                f"write {FORMS}")
        if deliver not in (LOCAL, ORIGIN):
            self._resolve(deliver)
        return deliver

    def target(self, deliver: str, origin: Mapping[str, str] | None) -> Target | None:
        """Where a run's answer goes now; None for ``local``."""
        if deliver == LOCAL:
            return None
        if deliver == ORIGIN:
            if origin is None:
                raise TargetRefused("deliver origin: the job records no chat")
            return Target(origin["platform"], origin["chat_id"], origin.get("thread_id", ""))
        return self._resolve(deliver)

    def _resolve(self, deliver: str) -> Target:
        if ":" in deliver:
            try:
                target = parse_target(deliver)
            except TargetError as exc:
                raise TargetRefused(f"deliver: {exc}; or {FORMS}") from None
            self._enabled(target.platform)
            return target
        channel = self._enabled(deliver)
        if not channel:
            raise TargetRefused(f"deliver {deliver}: platform {deliver!r} has no home channel; "
                                f"set one (`hermes config set platforms.enabled.{deliver}."
                                "home_channel CHAT_ID`) or write platform:chat_id")
        return parse_target(f"{deliver}:{channel}")

    def _enabled(self, platform: str) -> str | None:
        if platform not in self.home_channels:
            enabled = one_of(self.home_channels) if self.home_channels else "none"
            raise TargetRefused(f"deliver: no platform {platform!r} is enabled"
                                f"{did_you_mean(platform, self.home_channels)} (enabled: "
                                f"{enabled}); write {FORMS}")
        return self.home_channels[platform]
