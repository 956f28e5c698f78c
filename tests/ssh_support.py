"""A real sshd for tests: started on a free loopback port with a throwaway host key,
a throwaway user key, and ``AuthorizedKeysFile`` pointing at a file of its own."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

SSHD = "/usr/sbin/sshd"


@dataclass
class Sshd:
    port: int
    user_key: Path
    known_hosts: Path
    """A known-hosts file that holds the server's key."""
    host_public_key: str
    process: subprocess.Popen[bytes]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "hermes-test",
                    "-f", str(path)], check=True)
    return path.with_suffix(".pub").read_text().strip()


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
            return conn.recv(4).startswith(b"SSH-")
    except OSError:
        return False


def _unavailable(reason: str) -> None:
    """Skip locally; on CI (``CI`` set) the ssh tests must run, so fail."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must run the ssh tests: .ci/run installs sshd)")
    pytest.skip(reason)


def start_sshd(directory: Path) -> Sshd:
    if not Path(SSHD).exists() or shutil.which("ssh-keygen") is None:
        _unavailable("openssh-server is not installed (apt-get install openssh-server)")
    if os.geteuid() != 0:
        _unavailable("sshd logs in the test user only when started as root")
    host_key = keygen(directory / "host_key")
    user_key = directory / "user_key"
    (directory / "authorized_keys").write_text(keygen(user_key) + "\n")
    port = free_port()
    config = directory / "sshd_config"
    config.write_text("\n".join([
        f"Port {port}", "ListenAddress 127.0.0.1", f"HostKey {directory / 'host_key'}",
        f"AuthorizedKeysFile {directory / 'authorized_keys'}", "StrictModes no",
        "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
        "PermitRootLogin prohibit-password", f"PidFile {directory / 'sshd.pid'}",
        "Subsystem sftp internal-sftp", "LogLevel ERROR", ""]))
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation directory
    log = (directory / "sshd.log").open("ab")
    process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=log,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not _answers(port):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"sshd did not start: {(directory / 'sshd.log').read_text()}")
        time.sleep(0.05)
    known = directory / "known_hosts"
    known.write_text(f"[127.0.0.1]:{port} {host_key}\n")
    return Sshd(port, user_key, known, host_key, process)
