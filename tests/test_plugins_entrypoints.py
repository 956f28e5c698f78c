"""Entry-point plugins: a tiny package declaring ``hermes_agent.plugins``, installed with
``uv pip`` (offline) into a temporary virtualenv that runs Hermes, is discovered, enabled
and called by the agent against the fake LLM; ``hermes plugins install pip:...`` and
``remove`` put it in and take it out again."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall

CODE = '''
import json


def register(ctx):
    ctx.register_tool(
        name="tiny_ping", toolset="tiny",
        schema={"name": "tiny_ping", "description": "Answer pong.",
                "parameters": {"type": "object", "properties": {}}},
        handler=lambda args, **kwargs: json.dumps({"pong": ctx.profile_name}))
'''
MANIFEST = "name: tiny\nversion: 0.4.2\ndescription: A plugin from a package\n"


def build_wheel(directory: Path) -> Path:
    """``hermes_plugin_tiny-0.4.2-py3-none-any.whl``, written by hand (no build backend,
    so nothing is fetched)."""
    return write_wheel(directory, "hermes-plugin-tiny", "0.4.2", {
        "hermes_plugin_tiny/__init__.py": CODE, "hermes_plugin_tiny/plugin.yaml": MANIFEST},
        "[hermes_agent.plugins]\ntiny = hermes_plugin_tiny\n")


def write_wheel(directory: Path, name: str, version: str, files: dict[str, str],
                entry_points: str = "") -> Path:
    """A pure-Python wheel of ``files`` (path -> text), written by hand."""
    stem = f"{name.replace('-', '_')}-{version}"
    dist = f"{stem}.dist-info"
    files = {**files,
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                 "Summary: tests\n",
             f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
                              "Tag: py3-none-any\n"}
    if entry_points:
        files[f"{dist}/entry_points.txt"] = entry_points
    record = [f"{name},sha256={_digest(text)},{len(text.encode())}" for name, text in
              files.items()]
    files[f"{dist}/RECORD"] = "\n".join([*record, f"{dist}/RECORD,,"]) + "\n"
    wheel = directory / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


def _digest(text: str) -> str:
    raw = hashlib.sha256(text.encode()).digest()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    """A virtualenv whose Python runs Hermes from this checkout (its site-packages are
    added by a .pth file); packages installed into it stay there."""
    if shutil.which("uv") is None:
        pytest.skip("uv is not installed")
    target = tmp_path / "venv"
    subprocess.run(["uv", "venv", "--offline", "--quiet", "--python", sys.executable,
                    str(target)], check=True, capture_output=True)
    inner = next(target.glob("lib/python3*/site-packages"))
    (inner / "hermes_checkout.pth").write_text(
        f"import site; site.addsitedir({site.getsitepackages()[0]!r})\n")
    return target / "bin" / "python"


def run(python: Path, environ: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "hermes", *args], capture_output=True, text=True,
                          env=environ | {"UV_OFFLINE": "1"}, timeout=300)


def test_a_package_s_entry_point_is_a_plugin(venv: Path, tmp_path: Path, root: Path,
                                             environ) -> None:
    wheel = build_wheel(tmp_path)
    subprocess.run(["uv", "pip", "install", "--offline", "--quiet", "--python", str(venv),
                    str(wheel)], check=True, capture_output=True)
    listed = run(venv, environ, "plugins", "list")
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.startswith("tiny "))
    assert row.split()[:4] == ["tiny", "not", "enabled", "0.4.2"] and "entrypoint" in row
    assert "A plugin from a package" in row  # its plugin.yaml, read without importing it
    assert run(venv, environ, "plugins", "enable", "tiny").returncode == 0
    with FakeLLM([Reply(tool_calls=[ToolCall("tiny_ping", {})]), Reply(text="pong!")]) as llm:
        write_fake_provider(root, llm.openai_base_url)
        (root / "config.yaml").write_text((root / "config.yaml").read_text() +
                                          "plugins:\n  enabled: [tiny]\n")
        answer = run(venv, environ, "-z", "ping it")
        assert answer.returncode == 0, answer.stderr
        assert answer.stdout == "pong!\n"
        assert "tiny_ping" in llm.requests[0].tool_names
        assert json.loads(llm.requests[1].tool_results[0].content) == {"pong": "default"}
    # the checkout's own Python never sees the package
    plain = subprocess.run([sys.executable, "-m", "hermes", "plugins", "list"], env=environ,
                           capture_output=True, text=True, timeout=120)
    assert "tiny" not in plain.stdout


def test_install_and_remove_a_package(venv: Path, tmp_path: Path, root: Path,
                                      environ) -> None:
    wheel = build_wheel(tmp_path)
    installed = run(venv, environ, "plugins", "install", f"pip:{wheel}")
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.startswith(f"installed tiny 0.4.2 from pip:{wheel}")
    lock = json.loads((root / "plugins" / ".lock.json").read_text())["plugins"]["tiny"]
    assert lock["kind"] == "pip" and lock["distribution"] == "hermes-plugin-tiny"
    assert "entrypoint" in run(venv, environ, "plugins", "list").stdout
    removed = run(venv, environ, "plugins", "remove", "tiny", "--yes")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout == "removed tiny: the package hermes-plugin-tiny\n"
    assert "tiny" not in run(venv, environ, "plugins", "list").stdout


RELAY = Path(__file__).resolve().parent / "plugins_data" / "hermes_agent" / "relay"


def index(wheels: Path) -> dict[str, str]:
    """A local package index for pip and uv: the wheels in ``wheels``."""
    return {"UV_FIND_LINKS": str(wheels), "PIP_FIND_LINKS": str(wheels), "PIP_NO_INDEX": "1"}


def test_install_puts_the_plugin_s_pip_dependencies_in_first(venv: Path, tmp_path: Path,
                                                             root: Path, environ) -> None:
    sdk = write_wheel(tmp_path, "relay-sdk", "2.0.0", {"relay_sdk/__init__.py": "VERSION = 2\n"})
    plugin = tmp_path / "relay"
    shutil.copytree(RELAY, plugin)
    manifest = (plugin / "plugin.yaml").read_text()
    (plugin / "plugin.yaml").write_text(manifest.replace("  - PyYAML>=5",
                                                         "  - relay-sdk==2.0.0"))
    installed = run(venv, environ | index(sdk.parent), "plugins", "install", str(plugin))
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.startswith("installed relay 1.0.0")
    found = subprocess.run([str(venv), "-c", "import relay_sdk; print(relay_sdk.VERSION)"],
                           capture_output=True, text=True, timeout=60)
    assert found.stdout == "2\n"  # in the environment Hermes runs in
    assert (root / "plugins" / "relay" / "plugin.yaml").is_file()


def test_dependencies_pip_cannot_install_leave_nothing_installed(venv: Path, tmp_path: Path,
                                                                 root: Path, environ) -> None:
    plugin = tmp_path / "relay"
    shutil.copytree(RELAY, plugin)
    manifest = (plugin / "plugin.yaml").read_text()
    sdk = write_wheel(tmp_path, "relay-sdk", "2.0.0", {})
    (plugin / "plugin.yaml").write_text(manifest.replace(
        "  - PyYAML>=5", "  - relay-sdk==2.0.0\n  - relay-transport-not-published==9.9"))
    result = run(venv, environ | index(sdk.parent), "plugins", "install", str(plugin))
    assert result.returncode == 2 and result.stdout == ""
    line = result.stderr.strip()
    assert line.startswith("error: plugin relay needs ") and "\n" not in line, line
    assert "relay-transport-not-published==9.9 (pip_dependencies), which could not be " \
           "installed into" in line and "network was disabled" in line and \
           "nothing installed" in line
    assert not (root / "plugins" / "relay").exists()
    pip_list = subprocess.run(["uv", "pip", "list", "--python", str(venv)],
                              capture_output=True, text=True, timeout=60).stdout
    assert "relay-sdk" not in pip_list  # resolved as a whole: not half installed


@pytest.mark.parametrize("entry", ["--index-url=http://127.0.0.1:9/simple", "-r /etc/passwd",
                                   "relay-sdk @ https://127.0.0.1:9/relay_sdk-2.0.0.whl",
                                   "./vendor/relay_sdk"])
def test_a_pip_dependency_that_is_no_package_name_is_refused(entry: str, venv: Path,
                                                             tmp_path: Path, root: Path,
                                                             environ) -> None:
    plugin = tmp_path / "relay"
    shutil.copytree(RELAY, plugin)
    manifest = (plugin / "plugin.yaml").read_text()
    (plugin / "plugin.yaml").write_text(manifest.replace("  - PyYAML>=5", f"  - {entry!r}"))
    result = run(venv, environ, "plugins", "install", str(plugin))
    assert result.returncode == 2 and result.stdout == ""
    line = result.stderr.strip()
    assert "\n" not in line and "pip_dependencies" in line and \
        "is not a package requirement" in line, line
    assert not (root / "plugins" / "relay").exists()
