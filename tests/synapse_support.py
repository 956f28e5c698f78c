"""A real Synapse homeserver for the matrix platform's tests.

Synapse (``matrix-synapse`` from PyPI, pinned) is installed into a virtualenv of its
own, never into the project's: ``$HERMES_TEST_SYNAPSE_VENV``, else a directory under
the user's cache (``~/.cache/hermes-tests/synapse-<version>``), made once and reused.
Each homeserver runs on a free loopback port with a generated config: SQLite, a
registration shared secret, no federation, rate limits out of the way (a test that
wants one sets it for one user through the admin API). Users are registered through
the admin API's shared-secret registration.

Outside CI a machine that cannot install Synapse skips these tests saying why; on CI
(``CI`` set) that is a failure.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from process_support import launch, terminate, wait_answering
from ssh_support import free_port

SYNAPSE_VERSION = "1.163.2"
SERVER_NAME = "example.org"
NO_LIMIT = {"per_second": 10000, "burst_count": 10000}


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must run the matrix tests)")
    pytest.skip(reason)


def synapse_venv() -> Path:
    """The virtualenv holding Synapse, installed on first use."""
    venv = Path(os.environ.get("HERMES_TEST_SYNAPSE_VENV") or Path(os.environ.get(
        "XDG_CACHE_HOME", Path.home() / ".cache")) / "hermes-tests" / f"synapse-{SYNAPSE_VERSION}")
    python = venv / "bin" / "python"
    if _has_synapse(python):
        return venv
    uv = shutil.which("uv")
    if uv is None:
        _unavailable("installing Synapse for the matrix tests needs uv on PATH")
    assert uv is not None
    try:
        subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True,
                       capture_output=True, timeout=300)
        subprocess.run([uv, "pip", "install", "-q", "--python", str(python),
                        f"matrix-synapse=={SYNAPSE_VERSION}"], check=True,
                       capture_output=True, timeout=1200)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(venv, ignore_errors=True)
        output = getattr(exc, "stderr", b"") or b""
        _unavailable(f"cannot install matrix-synapse=={SYNAPSE_VERSION} into {venv}: "
                     f"{output.decode(errors='replace').strip()[-300:] or exc}")
    if not _has_synapse(python):
        _unavailable(f"matrix-synapse installed into {venv} does not import")
    return venv


def _has_synapse(python: Path) -> bool:
    return python.exists() and subprocess.run(
        [str(python), "-c", "import synapse.app.homeserver"], capture_output=True,
        check=False, timeout=120).returncode == 0


@dataclass
class MatrixUser:
    user_id: str
    password: str
    token: str


@dataclass
class Synapse:
    """One homeserver: its directory, port and admin user."""

    directory: Path
    venv: Path
    port: int
    secret: str = field(default_factory=lambda: uuid.uuid4().hex)
    process: subprocess.Popen[bytes] | None = None
    admin: MatrixUser | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.directory / "homeserver.log"

    def configure(self) -> None:
        data = self.directory / "data"
        data.mkdir(parents=True, exist_ok=True)
        (self.directory / "log.yaml").write_text(yaml.safe_dump(_log_config(self.log)))
        config = {
            "server_name": SERVER_NAME, "pid_file": str(self.directory / "homeserver.pid"),
            "listeners": [{"port": self.port, "bind_addresses": ["127.0.0.1"], "type": "http",
                           "tls": False, "x_forwarded": False,
                           "resources": [{"names": ["client"], "compress": False}]}],
            "database": {"name": "sqlite3", "args": {"database": str(data / "homeserver.db")}},
            "log_config": str(self.directory / "log.yaml"),
            "media_store_path": str(data / "media"),
            "signing_key_path": str(self.directory / "signing.key"),
            "registration_shared_secret": self.secret, "macaroon_secret_key": uuid.uuid4().hex,
            "form_secret": uuid.uuid4().hex, "report_stats": False, "enable_metrics": False,
            "trusted_key_servers": [], "suppress_key_server_warning": True,
            "federation_domain_whitelist": [], "presence": {"enabled": False},
            "url_preview_enabled": False, "enable_registration": False,
            "rc_message": NO_LIMIT, "rc_joins": {"local": NO_LIMIT, "remote": NO_LIMIT},
            "rc_invites": {"per_room": NO_LIMIT, "per_user": NO_LIMIT, "per_issuer": NO_LIMIT},
            "rc_login": {"address": NO_LIMIT, "account": NO_LIMIT,
                         "failed_attempts": NO_LIMIT},
            "rc_registration": NO_LIMIT, "rc_admin_redaction": NO_LIMIT,
            # rooms and uploads are limited too (10 rooms, then one a minute): a module that
            # makes a room per test ran into M_LIMIT_EXCEEDED once it had eleven
            "rc_room_creation": NO_LIMIT, "rc_media_create": NO_LIMIT,
        }
        (self.directory / "homeserver.yaml").write_text(yaml.safe_dump(config))
        subprocess.run([str(self.venv / "bin" / "python"), "-m", "synapse.app.homeserver",
                        "-c", str(self.directory / "homeserver.yaml"), "--generate-keys"],
                       check=True, capture_output=True, timeout=300, cwd=self.directory)

    def start(self, timeout: float = 180) -> None:
        self.process = launch([str(self.venv / "bin" / "python"), "-m",
                               "synapse.app.homeserver", "-c",
                               str(self.directory / "homeserver.yaml")],
                              self.directory / "stdout.log", cwd=self.directory)
        wait_answering(self.process, self._answers, "synapse", self._tail, timeout, 0.2)

    def stop(self) -> None:
        terminate(self.process)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def _answers(self) -> bool:
        try:
            return httpx.get(f"{self.url}/_matrix/client/versions", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def _tail(self) -> str:
        text = "".join(p.read_text(errors="replace") for p in (
            self.directory / "stdout.log", self.log) if p.exists())
        return text[-2000:]

    def register(self, localpart: str, *, admin: bool = False) -> MatrixUser:
        """A new user, registered with the shared secret; logged in (its token)."""
        endpoint = f"{self.url}/_synapse/admin/v1/register"
        nonce = httpx.get(endpoint, timeout=30).json()["nonce"]
        password = uuid.uuid4().hex
        mac = hmac.new(self.secret.encode(), b"\x00".join([
            nonce.encode(), localpart.encode(), password.encode(),
            b"admin" if admin else b"notadmin"]), hashlib.sha1).hexdigest()
        reply = httpx.post(endpoint, json={"nonce": nonce, "username": localpart,
                                           "password": password, "admin": admin, "mac": mac},
                           timeout=30)
        reply.raise_for_status()
        body = reply.json()
        return MatrixUser(body["user_id"], password, body["access_token"])

    def unlimit_messages(self, user_id: str) -> None:
        assert self.admin is not None
        httpx.delete(f"{self.url}/_synapse/admin/v1/users/{user_id}/override_ratelimit",
                     headers=_auth(self.admin.token), timeout=30).raise_for_status()

    def limit_messages(self, user_id: str, per_second: int, burst: int) -> None:
        """Synapse's message rate limit for one user (the admin API's override)."""
        assert self.admin is not None
        reply = httpx.post(f"{self.url}/_synapse/admin/v1/users/{user_id}/override_ratelimit",
                           json={"messages_per_second": per_second, "burst_count": burst},
                           headers=_auth(self.admin.token), timeout=30)
        reply.raise_for_status()


def start_synapse(directory: Path) -> Synapse:
    server = Synapse(directory, synapse_venv(), free_port())
    server.configure()
    server.start()
    server.admin = server.register("admin", admin=True)
    return server


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _log_config(path: Path) -> dict[str, Any]:
    return {"version": 1, "formatters": {"plain": {"format": "%(asctime)s %(name)s "
                                                            "%(levelname)s %(message)s"}},
            "handlers": {"file": {"class": "logging.FileHandler", "filename": str(path),
                                  "formatter": "plain"}},
            "root": {"level": "WARNING", "handlers": ["file"]},
            "disable_existing_loggers": False}


class MatrixClient:
    """A person's Matrix client over the real client-server API (what the tests type)."""

    def __init__(self, server: Synapse, user: MatrixUser):
        self.server = server
        self.user = user
        self.http = httpx.Client(base_url=f"{server.url}/_matrix/client/v3",
                                 headers=_auth(user.token), timeout=60)

    def create_room(self, invite: list[str], *, direct: bool = True) -> str:
        body: dict[str, Any] = {"invite": invite, "is_direct": direct,
                                "preset": "trusted_private_chat" if direct else "private_chat"}
        return str(self._ok(self.http.post("/createRoom", json=body))["room_id"])

    def invite(self, room_id: str, user_id: str) -> None:
        self._ok(self.http.post(f"/rooms/{room_id}/invite", json={"user_id": user_id}))

    def join(self, room_id: str) -> None:
        self._ok(self.http.post(f"/rooms/{room_id}/join", json={}))

    def send(self, room_id: str, content: dict[str, Any], kind: str = "m.room.message") -> str:
        path = f"/rooms/{room_id}/send/{kind}/{uuid.uuid4().hex}"
        return str(self._ok(self.http.put(path, json=content))["event_id"])

    def set_state(self, room_id: str, kind: str, content: dict[str, Any]) -> None:
        self._ok(self.http.put(f"/rooms/{room_id}/state/{kind}/", json=content))

    def membership(self, room_id: str, user_id: str) -> str:
        """``user_id``'s membership of the room (``invite``, ``join``, ``leave``...)."""
        reply = self.http.get(f"/rooms/{room_id}/state/m.room.member/{user_id}")
        return str(reply.json().get("membership", "")) if reply.status_code == 200 else ""

    def say(self, room_id: str, text: str, thread: str | None = None) -> str:
        content: dict[str, Any] = {"msgtype": "m.text", "body": text}
        if thread:
            content["m.relates_to"] = {"rel_type": "m.thread", "event_id": thread,
                                       "is_falling_back": True,
                                       "m.in_reply_to": {"event_id": thread}}
        return self.send(room_id, content)

    def upload(self, data: bytes, content_type: str, filename: str) -> str:
        """``data`` into the media repository (``POST /_matrix/media/v3/upload``); its
        ``mxc://`` URI."""
        reply = httpx.post(f"{self.server.url}/_matrix/media/v3/upload", content=data,
                           params={"filename": filename}, timeout=60,
                           headers=_auth(self.user.token) | {"Content-Type": content_type})
        return str(self._ok(reply)["content_uri"])

    def send_file(self, room_id: str, data: bytes, mime: str, filename: str, caption: str = "",
                  *, msgtype: str = "m.image", size: int | None = None) -> str:
        """Upload ``data`` and send it as a client does: an ``m.image`` (or ``m.file``) whose
        ``body`` is the caption with ``filename`` apart (Matrix 1.10), or the file's name
        alone. ``size``: the ``info.size`` declared (default: the real one)."""
        content: dict[str, Any] = {
            "msgtype": msgtype, "body": caption or filename,
            "url": self.upload(data, mime, filename),
            "info": {"mimetype": mime, "size": len(data) if size is None else size}}
        if caption:
            content["filename"] = filename
        return self.send(room_id, content)

    def edit(self, room_id: str, event_id: str, text: str) -> str:
        return self.send(room_id, {"msgtype": "m.text", "body": f"* {text}",
                                   "m.new_content": {"msgtype": "m.text", "body": text},
                                   "m.relates_to": {"rel_type": "m.replace",
                                                    "event_id": event_id}})

    def members(self, room_id: str) -> dict[str, Any]:
        return dict(self._ok(self.http.get(f"/rooms/{room_id}/joined_members"))["joined"])

    def messages(self, room_id: str) -> list[dict[str, Any]]:
        """The room's message events, oldest first."""
        body = self._ok(self.http.get(f"/rooms/{room_id}/messages",
                                      params={"dir": "b", "limit": 100}))
        return [e for e in reversed(body["chunk"]) if e["type"] == "m.room.message"]

    def from_user(self, room_id: str, user_id: str) -> list[dict[str, Any]]:
        return [e for e in self.messages(room_id) if e["sender"] == user_id]

    def close(self) -> None:
        self.http.close()

    @staticmethod
    def _ok(reply: httpx.Response) -> dict[str, Any]:
        assert reply.status_code == 200, reply.text
        return dict(reply.json())
