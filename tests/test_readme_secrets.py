"""Every secret-setting command the README shows (``hermes ... config set NAME VALUE``
with a secret-shaped NAME) runs as written, in a real shell, and the value lands in
the profile's ``.env`` (0600) and nowhere else. So does the command the gateway's own
refusal recommends."""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from hermes.credentials import is_secret_name, read_env_file

README = REPO / "README.md"
HERMES_BIN = Path(sys.executable).parent  # the console script `hermes` beside python
SET_SECRET = re.compile(r"^hermes (?:-p (?P<profile>\S+) )?config set (?P<name>\S+) (?P<value>.+)$")


def readme_code() -> list[str]:
    """Command lines of the README: fenced shell blocks and inline code spans."""
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S)
    lines = [line for block in blocks for line in block.splitlines()]
    outside = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return lines + re.findall(r"`([^`\n]+)`", outside)


def without_comment(line: str) -> str:
    return re.split(r"\s+#\s", line, maxsplit=1)[0].strip()


def secret_commands() -> list[str]:
    found = []
    for line in map(without_comment, readme_code()):
        match = SET_SECRET.match(line)
        if match and is_secret_name(match["name"]):
            found.append(line)
    return list(dict.fromkeys(found))


EXPORT = re.compile(r"^export (?P<name>[A-Za-z_]\w*)=.+$")


def exports_for(command: str) -> str:
    """The README's ``export NAME=...`` lines for the variables ``command`` uses (they
    come before it in the README, as a user runs them)."""
    lines = [line for line in map(without_comment, readme_code()) if EXPORT.match(line)]
    names = {line: EXPORT.match(line)["name"] for line in lines}  # type: ignore[index]
    return "".join(f"{line}\n" for line, name in names.items()
                   if re.search(rf"\$\{{?{name}\b", command))


def test_the_readme_shows_secret_commands() -> None:
    names = {SET_SECRET.match(c)["name"] for c in secret_commands()}  # type: ignore[index]
    assert {"OPENAI_API_KEY", "API_SERVER_KEY", "CUSTOM_API_KEY"} <= names, names


def shell(environ: dict[str, str], command: str, cwd: Path) -> tuple[
        subprocess.CompletedProcess[str], list[str]]:
    """Run ``command`` with bash as a user would; the arguments `hermes` got are kept."""
    args_file = cwd / "hermes-args"
    wrapper = (f'hermes() {{ printf "%s\\0" "$@" > {shlex.quote(str(args_file))}; '
               'command hermes "$@"; }\n')
    env = environ | {"PATH": f"{HERMES_BIN}{os.pathsep}{environ['PATH']}"}
    proc = subprocess.run(["bash", "-c", wrapper + command], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    return proc, args_file.read_text().split("\0")[:-1]


def assert_only_in_env_file(home: Path, root: Path, name: str, value: str,
                            proc: subprocess.CompletedProcess[str]) -> None:
    env_file = home / ".env"
    assert read_env_file(env_file)[name] == value
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert value not in proc.stdout + proc.stderr
    others = [p for p in root.rglob("*")
              if p.is_file() and p != env_file and value.encode() in p.read_bytes()]
    assert others == []


@pytest.mark.parametrize("command", secret_commands())
def test_readme_secret_command_runs_as_written(command: str, environ: dict[str, str],
                                               root: Path, tmp_path: Path) -> None:
    match = SET_SECRET.match(command)
    assert match is not None
    if match["profile"]:
        created = subprocess.run([sys.executable, "-m", "hermes", "profile", "create",
                                  match["profile"]], env=environ, capture_output=True,
                                 text=True, timeout=120)
        assert created.returncode == 0, created.stderr
    proc, args = shell(environ, exports_for(command) + command, tmp_path)
    assert proc.returncode == 0, (command, proc.stdout, proc.stderr)
    home = root / "profiles" / match["profile"] if match["profile"] else root
    assert_only_in_env_file(home, root, match["name"], args[-1], proc)
    assert not (home / "config.yaml").exists() or match["name"] not in (
        home / "config.yaml").read_text()


def test_the_command_the_gateway_recommends_works(environ: dict[str, str], root: Path,
                                                  tmp_path: Path) -> None:
    exposed = ["platforms=api_server", "platforms.enabled.api_server.settings.host=0.0.0.0"]
    root.mkdir(parents=True, exist_ok=True)
    (root / ".env").write_text("API_SERVER_KEY=short\n"  # a missing key would be created
                               "OPENAI_API_KEY=sk-test-0123456789abcdef\n")  # else refused first
    refused = subprocess.run([sys.executable, "-m", "hermes", "gateway", "run", *exposed],
                             env=environ, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2, refused.stderr
    recommended = re.findall(r"`(hermes [^`]*config set API_SERVER_KEY[^`]*)`", refused.stderr)
    assert len(recommended) == 1, refused.stderr
    proc, args = shell(environ, recommended[0], tmp_path)
    assert proc.returncode == 0, (recommended[0], proc.stderr)
    key = args[-1]
    assert len(key) >= 16  # what the gateway asks for
    assert_only_in_env_file(root, root, "API_SERVER_KEY", key, proc)
    shown = subprocess.run([sys.executable, "-m", "hermes", "config", "get",
                            "platforms.enabled.api_server.token", *exposed],
                           env=environ, capture_output=True, text=True, timeout=120)
    assert shown.stdout.strip() == "<redacted>", (shown.stdout, shown.stderr)
