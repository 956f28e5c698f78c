"""The composed config, the provider's credentials, and what the config makes the
runtime use: the provider endpoint and the execution environment (docker, ssh)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping
from typing import Any

from hermes.agent.prechecks import missing_api_key
from hermes.credentials import secret_hint
from hermes.doctor.base import Check, Status
from hermes.doctor.browser import check_browser
from hermes.doctor.network import docker_ping, endpoint_answers, provider_base, ssh_answers
from hermes.doctor.platforms import check_platforms
from hermes.doctor.sandbox import check_sandbox, check_workspace
from hermes.doctor.vision import check_vision
from hermes.doctor.web import check_web_search
from hermes.errors import ConfigError
from hermes.home import Home

_LINE = re.compile(r"^(?P<file>.+):(?P<line>\d+)$")


def check_config(home: Home, environ: Mapping[str, str], overrides: list[str], *,
                 offline: bool = False) -> list[Check]:
    from hermes.config import compose_config

    try:
        composed = compose_config(home, environ, overrides)
    except ConfigError as exc:
        return [Check("config", "fail", str(exc), config_fix(exc, home))]
    config = composed.config
    checks = [Check("config", "ok", f"provider {config.provider.name}, "
                    f"model {config.provider.model}, environment {config.environment.kind}")]
    checks.append(_credentials(composed))
    checks.append(_endpoint(config.provider, offline))
    return [*checks, *_environment(config, home, environ, offline),
            check_browser(config.browser), check_web_search(config.web),
            check_vision(config.provider, config.vision),
            *check_platforms(config.platforms, offline=offline)]


def config_fix(exc: ConfigError, home: Home) -> str:
    """What to do about a config error: the key's commands, or the file and line to edit."""
    if exc.key:
        return (f"`hermes config explain {exc.key}` shows who set it; change it with "
                f"`hermes config set {exc.key} …` or `hermes config edit`")
    where = _LINE.match(exc.source or "")
    if where and where["file"] == str(home.config_file):
        return f"fix line {where['line']} of {where['file']}: `hermes config edit`"
    if where:
        return f"fix line {where['line']} of {where['file']}"
    return "`hermes config validate` names the problem; `hermes config edit` to fix it"


def _credentials(composed: Any) -> Check:
    missing = missing_api_key(composed.config, composed.raw)
    if missing:
        return Check("provider credentials", "fail", f"{missing} is not set",
                     secret_hint(missing, composed.config.secrets.environment_files))
    needed = composed.config.provider.requires_key
    return Check("provider credentials", "ok", "key present" if needed else "no key needed")


def _endpoint(provider: Any, offline: bool) -> Check:
    base = provider_base(provider.provider, provider.api_base)
    if base is None:
        return Check("provider endpoint", "ok", f"not checked: no known base URL for "
                     f"provider {provider.provider} (set provider.api_base to check it)")
    if offline:
        return Check("provider endpoint", "ok", f"not checked (--offline): {base}")
    problem = endpoint_answers(base)
    if problem is None:
        return Check("provider endpoint", "ok", f"{base} answers")
    status: Status = "warn" if problem.startswith("cannot resolve") else "fail"
    return Check("provider endpoint", status, f"{base}: {problem}",
                 "is the server running? check `hermes config get provider.api_base`"
                 if provider.api_base else "check the network (or a proxy: HTTPS_PROXY)")


def _environment(config: Any, home: Home, environ: Mapping[str, str], offline: bool
                 ) -> list[Check]:
    env = config.environment
    if env.kind == "docker":
        problem = docker_ping(environ)
        return [Check("docker", "fail" if problem else "ok", problem or "reachable",
                      "start dockerd, or set DOCKER_HOST" if problem else "")]
    if env.kind == "ssh":
        return _ssh(env.ssh, offline)
    return [Check("environment", "ok", f"local: commands run on this machine in "
                  f"{env.cwd or 'the current directory'}"),
            *check_sandbox(home, environ, config), *check_workspace(env, environ)]


def _ssh(settings: Any, offline: bool) -> list[Check]:
    target = f"{settings.host}:{settings.port}"
    checks = [Check("ssh client", "ok" if shutil.which("ssh") else "fail",
                    shutil.which("ssh") or "ssh is not on PATH",
                    "" if shutil.which("ssh") else "install the OpenSSH client")]
    if offline:
        return [*checks, Check("ssh host", "ok", f"not checked (--offline): {target}")]
    problem = ssh_answers(settings.host, settings.port)
    return [*checks, Check("ssh host", "fail" if problem else "ok",
                           f"{target}: {problem}" if problem else f"{target} answers",
                           "check environment.ssh.host and environment.ssh.port; is sshd "
                           "running?" if problem else "")]
