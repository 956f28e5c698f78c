"""`hermes doctor` checks what the profile uses, and each problem row has a fix."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import write_fake_provider


def table(result) -> dict[str, tuple[str, str, str]]:
    """CHECK -> (status, detail, fix), cells re-joined where the table wrapped them."""
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.split()[:2] == ["STATUS", "CHECK"])
    starts = [header.index(word) for word in ("CHECK", "DETAIL", "FIX")]
    cells: list[list[str]] = []
    for line in lines[lines.index(header) + 1:]:
        parts = [line[:starts[0]], line[starts[0]:starts[1]], line[starts[1]:starts[2]],
                 line[starts[2]:]]
        if parts[0].strip():
            cells.append([p.strip() for p in parts])
        elif cells:
            pairs = zip(cells[-1], parts, strict=True)
            cells[-1] = [f"{old} {new.strip()}".strip() for old, new in pairs]
    return {row[1]: (row[0], row[2], row[3]) for row in cells}


def rows(result) -> dict[str, str]:
    """CHECK -> its status."""
    return {name: cell[0] for name, cell in table(result).items()}


def flat(result) -> str:
    """Every detail and fix, each row's cells whole."""
    return " | ".join(f"{d} {f}" for _, d, f in table(result).values())


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections (bound, not listening)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture
def http_server() -> Iterator[str]:
    """A tiny HTTP server on loopback that answers 404 to everything."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_local_profile_is_not_told_about_docker(hermes, root: Path, http_server: str) -> None:
    write_fake_provider(root, http_server)
    result = hermes("doctor")
    assert "docker" not in result.stdout
    assert rows(result)["environment"] == "ok" and "local:" in result.stdout
    assert result.exit_code == 0, result.stdout
    failed = hermes("doctor", "environment=docker", env={"DOCKER_HOST": "unix:///nonexistent"})
    assert rows(failed)["docker"] == "fail" and "start dockerd" in failed.stdout


def test_ssh_environment_checks_the_host(hermes, root: Path, http_server: str,
                                         closed_port: int) -> None:
    write_fake_provider(root, http_server)
    result = hermes("doctor", "environment=ssh", "environment.ssh.host=127.0.0.1",
                    f"environment.ssh.port={closed_port}")
    assert result.exit_code == 1 and rows(result)["ssh host"] == "fail"
    assert f"127.0.0.1:{closed_port}: connection refused" in flat(result)
    assert "is sshd running?" in flat(result) and "docker" not in result.stdout


def test_provider_endpoint_reachable_or_not(hermes, root: Path, http_server: str,
                                            closed_port: int) -> None:
    write_fake_provider(root, http_server)
    result = hermes("doctor")
    assert rows(result)["provider endpoint"] == "ok" and f"{http_server} answers" in flat(result)
    url = f"http://127.0.0.1:{closed_port}/v1"
    write_fake_provider(root, url)
    result = hermes("doctor")
    assert result.exit_code == 1 and rows(result)["provider endpoint"] == "fail"
    assert f"{url}: connection refused" in flat(result)
    assert "hermes config get provider.api_base" in flat(result)
    offline = hermes("doctor", "--offline")
    assert rows(offline)["provider endpoint"] == "ok"
    assert "not checked (--offline)" in offline.stdout


def test_a_corrupt_state_db_fails(hermes, root: Path, http_server: str) -> None:
    import sqlite3

    write_fake_provider(root, http_server)
    db = root / "state.db"
    connection = sqlite3.connect(db)
    connection.execute("create table t (x)")
    connection.commit()
    connection.close()
    db.chmod(0o600)
    assert rows(hermes("doctor"))["state.db"] == "ok"
    db.write_bytes(b"this is not a database, just text " * 200)
    result = hermes("doctor")
    assert result.exit_code == 1 and rows(result)["state.db"] == "fail"
    assert "file is not a database" in flat(result) and f"mv {db} {db}.corrupt" in flat(result)


def test_a_bad_env_line_is_named_by_file_and_line(hermes, root: Path, http_server: str) -> None:
    write_fake_provider(root, http_server)
    (root / ".env").write_text("CUSTOM_API_KEY=sk-fake-test-key-1234\n# fine\nnot a line\n")
    result = hermes("doctor")
    assert result.exit_code == 1 and rows(result)[".env"] == "fail"
    assert f"{root / '.env'}:3" in flat(result) and "KEY=value" in flat(result)
    assert "sk-fake-test-key" not in result.stdout


def test_invalid_yaml_suggests_editing_the_file(hermes, root: Path) -> None:
    root.mkdir(parents=True)
    (root / "config.yaml").write_text("agent:\n  max_iterations: 3\n  personality: [oops\n")
    result = hermes("doctor")
    assert result.exit_code == 1 and rows(result)["config"] == "fail"
    assert f"of {root / 'config.yaml'}: `hermes config edit`" in flat(result)
    assert "config explain" not in result.stdout
