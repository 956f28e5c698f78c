"""Opening an SSH connection with paramiko (imported lazily): known-hosts checking, key,
timeouts, and paramiko's and the socket's failures translated into one line each."""

from __future__ import annotations

import getpass
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes.config.schema import SSHSettings
from hermes.errors import SandboxUnavailable


def known_hosts_file(settings: SSHSettings, environ: Mapping[str, str]) -> Path:
    if settings.known_hosts:
        return Path(os.path.expanduser(settings.known_hosts))
    return Path(environ.get("HOME") or os.path.expanduser("~")) / ".ssh" / "known_hosts"


def login_name(settings: SSHSettings, environ: Mapping[str, str]) -> str:
    return settings.user or environ.get("USER") or getpass.getuser()


def open_client(settings: SSHSettings, environ: Mapping[str, str]) -> Any:
    """A connected, authenticated ``paramiko.SSHClient``; ``SandboxUnavailable`` otherwise."""
    import paramiko

    known = known_hosts_file(settings, environ)
    client = paramiko.SSHClient()
    if known.exists():
        client.load_host_keys(str(known))
    policy = paramiko.AutoAddPolicy() if settings.accept_unknown_host else _Refuse()
    client.set_missing_host_key_policy(policy)
    user, host, port = login_name(settings, environ), str(settings.host), settings.port
    key = os.path.expanduser(settings.key_file) if settings.key_file else None
    wait = settings.connect_timeout
    try:
        client.connect(host, port, username=user, key_filename=key, timeout=wait,
                       banner_timeout=wait, auth_timeout=wait, channel_timeout=wait,
                       allow_agent=key is None, look_for_keys=key is None)
    except Exception as exc:
        client.close()
        raise _translate(exc, settings, user, known) from exc
    if settings.accept_unknown_host:
        _remember(client, known)
    return client


class _UnknownHost(Exception):
    pass


class _Refuse:
    """paramiko's RejectPolicy, with an exception of our own to name the fix."""

    def missing_host_key(self, client: Any, hostname: str, key: Any) -> None:
        raise _UnknownHost(hostname)


def _remember(client: Any, known: Path) -> None:
    """Keep the key accepted on first use, so a changed key is noticed next time."""
    known.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    client.save_host_keys(str(known))
    known.chmod(0o600)


def _translate(exc: Exception, settings: SSHSettings, user: str,
               known: Path) -> SandboxUnavailable:
    import paramiko

    where = f"{settings.host}:{settings.port}"
    if isinstance(exc, _UnknownHost):
        return SandboxUnavailable(
            f"environment.ssh: host {where} is not in {known} — add its key (ssh-keyscan -p "
            f"{settings.port} {settings.host} >> {known}) or set "
            "environment.ssh.accept_unknown_host=true")
    if isinstance(exc, paramiko.BadHostKeyException):
        return SandboxUnavailable(
            f"environment.ssh: the key of {where} does not match {known} — if the host was "
            f"reinstalled, remove its line (ssh-keygen -R {settings.host} -f {known})")
    if isinstance(exc, paramiko.AuthenticationException):
        return SandboxUnavailable(
            f"environment.ssh: {user}@{where} refused our key ({exc}) — check "
            "environment.ssh.user and environment.ssh.key_file")
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return SandboxUnavailable(f"environment.ssh: {where} did not answer within "
                                  f"{settings.connect_timeout:g} s — check environment.ssh.host "
                                  "and environment.ssh.connect_timeout")
    return SandboxUnavailable(f"environment.ssh: cannot connect to {where} ({exc}) — check "
                              "environment.ssh.host and environment.ssh.port; is sshd running?")
