"""Messages between the CLI and the server: length-prefixed JSON on a Unix socket.

The client's first message carries its stdin, stdout and stderr as file
descriptors (``SCM_RIGHTS``); everything else is plain frames.

A leaf of the foundation (imports the standard library only): services that meet the
warm server (the MCP broker reads its pid file and checks its peers) read the file
names, paths and peer credentials here, not from the server.
"""

from __future__ import annotations

import json
import os
import socket
import struct
from pathlib import Path
from typing import Any

PROTOCOL = 1
MAX_FRAME = 16 * 1024 * 1024
HEADER = struct.Struct("!I")
LOCK_FILE, PID_FILE, STATUS_FILE = "daemon.lock", "daemon.pid", "daemon.json"


def install_id() -> str:
    """Which installed copy of hermes this is, as last changed: a server only serves its
    own, so an upgrade or an edited checkout replaces it on the next command. (Every
    warm command's client computes it: a scandir walk, ~3 ms; ``Path.rglob`` took 11.)"""
    package = Path(__file__).resolve().parent.parent
    newest, folders = 0, [str(package)]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        folders.append(entry.path)
                elif entry.name.endswith(".py"):
                    newest = max(newest, entry.stat(follow_symlinks=False).st_mtime_ns)
    return f"{package}@{newest}"


def run_dir(home_path: Path) -> Path:
    """The home's directory for the server's socket, lock and pid (0700)."""
    return home_path / "run"


def socket_path(home_path: Path) -> Path:
    return run_dir(home_path) / "daemon.sock"


def pid_file(home_path: Path) -> Path:
    """The running server's pid, one line."""
    return run_dir(home_path) / PID_FILE


def peer_credentials(conn: socket.socket) -> tuple[int, int]:
    """The pid (0 when it is in a pid namespace this server cannot see) and the uid of
    the process at the other end (``SO_PEERCRED``)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _ = struct.unpack("3i", creds)
    return int(pid), int(uid)


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return HEADER.pack(len(body)) + body


def send(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    data = encode(message)
    if fds:
        socket.send_fds(sock, [data], fds)
    else:
        sock.sendall(data)


def receive(sock: socket.socket, max_fds: int = 0) -> tuple[dict[str, Any] | None, list[int]]:
    """The next message (None at end of stream) and any descriptors sent with it."""
    fds: list[int] = []
    head = b""
    while len(head) < HEADER.size:
        if max_fds and not head:
            chunk, got, _, _ = socket.recv_fds(sock, HEADER.size, max_fds)
            fds.extend(got)
        else:
            chunk = sock.recv(HEADER.size - len(head))
        if not chunk:
            return None, fds
        head += chunk
    (length,) = HEADER.unpack(head)
    if length > MAX_FRAME:
        raise ValueError(f"frame of {length} bytes is too large")
    body = bytearray()
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            return None, fds
        body += chunk
    message = json.loads(bytes(body))
    if not isinstance(message, dict):
        raise ValueError("a frame must hold a JSON object")
    return message, fds
