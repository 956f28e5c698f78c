"""Shell hooks: commands the config runs on hook events (``hooks: {event: [...]}``).

Each runs without a shell (``shlex`` splits the command; ``~`` is the user's home),
gets the event as one JSON object on standard input::

    {"hook_event_name": "pre_tool_call", "tool_name": "terminal",
     "tool_input": {"command": "ls"}, "session_id": "...", "cwd": "...", "extra": {...}}

and may answer with one JSON object on standard output: ``{"action": "block",
"message": ...}`` (or ``{"decision": "block", "reason": ...}``) refuses a tool call,
``{"action": "modify", "args": {...}}`` changes its arguments, ``{"context": ...}``
adds context before the model. A command that fails (exit status, timeout) on a
blocking event blocks; elsewhere it is logged and skipped.

A command runs only once the user has accepted it for its event: the consent is
recorded in the home (``shell-hooks.json``, 0600) by ``hermes hooks accept``, by the
prompt of an interactive chat, or by ``--accept-hooks`` / ``HERMES_ACCEPT_HOOKS=1``
for runs nobody watches.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.events import TOOL_EVENTS, Callback, HookBus
from hermes.fsutil import atomic_write, private_dir
from hermes.home import Home

CONSENT_FILE = "shell-hooks.json"
ACCEPT_ENV = "HERMES_ACCEPT_HOOKS"
PAYLOAD_KEYS = ("tool_name", "args", "session_id")


@dataclass(frozen=True)
class ShellHookSpec:
    """One configured command for one event."""

    event: str
    command: str
    matcher: str | None = None
    timeout: float = 30.0

    @property
    def owner(self) -> str:
        return f"shell:{self.command}"

    def describe(self) -> str:
        where = f" (tools matching {self.matcher})" if self.matcher else ""
        return f"{self.event}: {self.command}{where}"


def hook_specs(hooks: Mapping[str, Any]) -> list[ShellHookSpec]:
    """The configured hooks (``hooks`` of a config, validated or as the YAML says)."""
    specs = []
    for event, entries in hooks.items():
        for entry in entries or ():
            get = entry.get if isinstance(entry, dict) else lambda k, e=entry: getattr(e, k)
            specs.append(ShellHookSpec(event, str(get("command")), get("matcher"),
                                       float(get("timeout") or 30.0)))
    return specs


class Consent:
    """The home's record of accepted ``(event, command)`` pairs."""

    def __init__(self, home: Home):
        self.path = home.path / CONSENT_FILE

    def accepted(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        entries = data.get("accepted") if isinstance(data, dict) else None
        return [e for e in entries or () if isinstance(e, dict)]

    def has(self, spec: ShellHookSpec) -> bool:
        return any(e.get("event") == spec.event and e.get("command") == spec.command
                   for e in self.accepted())

    def accept(self, spec: ShellHookSpec) -> bool:
        """Record ``spec``; False if it was accepted already."""
        if self.has(spec):
            return False
        entries = [*self.accepted(), {"event": spec.event, "command": spec.command,
                                      "accepted_at": round(time.time())}]
        self._write(entries)
        return True

    def revoke(self, command: str) -> int:
        """Forget every consent for ``command``; how many there were."""
        entries = self.accepted()
        kept = [e for e in entries if e.get("command") != command]
        if len(kept) != len(entries):
            self._write(kept)
        return len(entries) - len(kept)

    def _write(self, entries: list[dict[str, Any]]) -> None:
        private_dir(self.path.parent)
        atomic_write(self.path, json.dumps({"accepted": entries}, indent=2), mode=0o600)


def settle_consent(home: Home, hooks: Mapping[str, Any], *, accept: bool,
                   ask: Callable[[ShellHookSpec], bool] | None) -> None:
    """Before a runtime starts: record consent for the hooks not accepted yet, all of
    them (``accept``: ``--accept-hooks``) or those ``ask`` (a terminal) says yes to."""
    consent = Consent(home)
    for spec in hook_specs(hooks):
        if not consent.has(spec) and (accept or (ask is not None and ask(spec))):
            consent.accept(spec)


class ShellHooks:
    """The shell hooks of one runtime, registered on its ``HookBus``."""

    def __init__(self, home: Home, hooks: Mapping[str, Any], environ: Mapping[str, str],
                 warn: Callable[[str], None] | None = None):
        self.home = home
        self.specs = hook_specs(hooks)
        self.environ = environ
        self.consent = Consent(home)
        self.warn = warn or (lambda line: sys.stderr.write(f"warning: {line}\n"))

    def register_into(self, events: HookBus) -> None:
        """Register every accepted hook (``HERMES_ACCEPT_HOOKS=1`` accepts them here);
        warn once about each one that is not."""
        accept_all = self.environ.get(ACCEPT_ENV, "").lower() in ("1", "true", "yes", "on")
        for spec in self.specs:
            if accept_all:
                self.consent.accept(spec)
            if not self.consent.has(spec):
                self.warn(f"shell hook {spec.describe()} is not accepted yet and does not run;"
                          f" accept it once with `hermes hooks accept` (or --accept-hooks)")
                continue
            events.register(Callback(spec.event, ShellCommand(spec, self.home, self.environ),
                                     spec.owner, spec.timeout + 5))


class ShellCommand:
    """A shell hook as a hook callback."""

    def __init__(self, spec: ShellHookSpec, home: Home, environ: Mapping[str, str]):
        self.spec = spec
        self.home = home
        self.environ = environ
        self.matcher = re.compile(spec.matcher) if spec.matcher else None

    def __call__(self, **event: Any) -> Any:
        if self.matcher and self.spec.event in TOOL_EVENTS and \
                not self.matcher.fullmatch(str(event.get("tool_name") or "")):
            return None
        try:
            done = subprocess.run(self.argv(), input=self.payload(event), capture_output=True,
                                  text=True, timeout=self.spec.timeout,
                                  env=self.home.child_env(self.environ))
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"{self.spec.command} ran longer than {self.spec.timeout:g} s")\
                from None
        answer = _json_answer(done.stdout)
        if done.returncode != 0 and answer is None:
            problem = done.stderr.strip().splitlines()[-1:] or [""]
            raise RuntimeError(f"{self.spec.command} exited {done.returncode} {problem[0]}")
        return answer

    def argv(self) -> list[str]:
        words = shlex.split(self.spec.command)
        user_home = self.environ.get("HOME") or str(Path.home())
        return [user_home + w[1:] if w == "~" or w.startswith("~/") else w for w in words]

    def payload(self, event: Mapping[str, Any]) -> str:
        args = event.get("args")
        return json.dumps({
            "hook_event_name": self.spec.event, "tool_name": event.get("tool_name"),
            "tool_input": args if isinstance(args, dict) else None,
            "session_id": event.get("session_id") or "", "cwd": os.getcwd(),
            "extra": {k: v for k, v in event.items() if k not in PAYLOAD_KEYS}},
            ensure_ascii=False, default=str)


def _json_answer(stdout: str) -> Any:
    text = stdout.strip()
    if not text:
        return None
    try:
        answer = json.loads(text)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None
