"""hermes-agent's plugins here: the modules they import are offered to them alone
(``hermes.plugins.compat``), and hermes-agent 0.19.0's own published plugins are counted.

The wheel is fetched by pip (``pip download --no-deps``) once per module; offline, that test
is skipped saying so. Each general, platform and memory plugin of the wheel is installed
into a fresh home and enabled through the CLI: it either loads and registers, or is refused
in one line naming exactly what is missing (never a traceback); their ``pip_dependencies``
are never installed here (Hermes' environment is this test's), so a plugin needing them is
refused naming them. The model, web, browser, image and video provider plugins are left to
the issues bringing those kinds.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall
from hermes.plugins.compat.names import HERMES_AGENT_TOP_LEVEL

WHEEL = "hermes-agent==0.19.0"
OTHER_KINDS = {"model-providers", "web", "browser", "image_gen", "video_gen"}
LOADED_AT_LEAST = 8
"""Measured: 8 of 40 loaded (2026-11-27, with issue 27's manifest keys and hooks in the tree);
the others are refused naming the hermes-agent module or library they need."""
NO_PIP = {"UV_OFFLINE": "1", "UV_NO_CACHE": "1", "PIP_NO_INDEX": "1"}
"""``pip_dependencies`` are installed into Hermes' environment: never from this test (the
plugin is then refused naming them)."""
PRECISE = re.compile(r"hermes-agent's [\w.]+ is not supported by hermes-runtime"
                     r"|No module named '[\w.]+'"
                     r"|missing [A-Z][A-Z0-9_]+"
                     r"|needs [\w.<>=!~-]+.* \(pip_dependencies\)")
"""A refusal names the missing hermes-agent module or name, library or variable."""

SHAPED = {
    "plugin.yaml": "name: shaped\nversion: 1.0.0\ndescription: hermes-agent-shaped\n",
    "__init__.py": '''
import json
import sys
from hermes_constants import get_hermes_home
from tools.registry import tool_error
from agent.memory_provider import MemoryProvider
from plugins.shaped.helpers import GREETING
from .helpers import schema

class Recall(MemoryProvider):
    name = "shaped"
    def is_available(self): return True
    def initialize(self, session_id, **kwargs): self.home = kwargs["hermes_home"]
    def get_tool_schemas(self): return []

def where(args, **kwargs):
    from tools.registry import tool_result   # at call time, not at import
    import plugins.shaped.helpers
    import tools.registry as registry
    chains = [plugins.shaped.helpers.GREETING == GREETING, registry.tool_result is tool_result]
    try:
        import gateway.config
    except ImportError as exc:
        refused = str(exc)
    provider = Recall()
    provider.initialize()
    return tool_result(home=str(get_hermes_home()), greeting=GREETING, refused=refused,
                       provider_home=provider.home, error=json.loads(tool_error("x")),
                       shadowed=[n for n in ("tools", "agent", "plugins") if n in sys.modules],
                       chains=chains)

def register(ctx):
    ctx.register_tool(name="where", toolset="shaped", schema=schema("where"), handler=where)
''',
    "helpers.py": '''
GREETING = "hello from a submodule"

def schema(name):
    return {"name": name, "description": "Where the plugin runs.",
            "parameters": {"type": "object", "properties": {}}}
''',
}


def write_shaped(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(parents=True)
    for name, text in files.items():
        (directory / name).write_text(text)
    return directory


def test_a_hermes_agent_plugin_imports_its_modules_at_load_and_call(
        hermes_subprocess: Callable[..., subprocess.CompletedProcess[str]], root: Path,
        tmp_path: Path) -> None:
    plugin = write_shaped(tmp_path / "src" / "shaped", SHAPED)
    with FakeLLM() as llm:
        write_fake_provider(root, llm.openai_base_url)
        done = hermes_subprocess("plugins", "install", str(plugin), "--enable", "--yes")
        assert done.returncode == 0 and "registers" in done.stdout, done.stderr
        llm.push(Reply(tool_calls=[ToolCall("where", {})]), Reply(text="done"))
        done = hermes_subprocess("-z", "where do you run?")
        assert done.returncode == 0, done.stderr
        result = json.loads(llm.requests[-1].tool_results[0].content)
    assert result == {"home": str(root), "greeting": "hello from a submodule",
                      "refused": "hermes-agent's gateway.config is not supported by "
                                 "hermes-runtime",
                      "provider_home": str(root), "error": {"error": "x"}, "shadowed": [],
                      "chains": [True, True]}


def test_a_missing_piece_refuses_the_plugin_in_one_line_naming_it(
        hermes, root: Path, tmp_path: Path) -> None:
    files = {"plugin.yaml": "name: platformish\nversion: 1.0.0\n",
             "__init__.py": "from tools.registry import tool_error\nimport hermes_constants\n"
                            "from gateway.platforms.base import BasePlatformAdapter\n"
                            "def register(ctx):\n    pass\n"}
    plugin = write_shaped(tmp_path / "src" / "platformish", files)
    assert hermes("plugins", "install", str(plugin)).exit_code == 0
    done = hermes("plugins", "enable", "platformish")
    assert "registers" not in done.stdout
    assert "hermes-agent's gateway.platforms.base.BasePlatformAdapter is not supported by " \
           "hermes-runtime" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not {"tools", "agent", "gateway", "hermes_constants"} & set(sys.modules)


# -- hermes-agent 0.19.0's own plugins ---------------------------------------------------

@pytest.fixture(scope="module")
def wheel_plugins(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The general, platform and memory plugins of hermes-agent's published wheel."""
    where = tmp_path_factory.mktemp("hermes-agent-wheel")
    try:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                               "--disable-pip-version-check", "--retries", "1", "--timeout",
                               "15", "--quiet", "-d", str(where), WHEEL],
                              capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.skip(f"pip could not fetch {WHEEL} within 120 s (offline?)")
    wheels = list(where.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        pytest.skip(f"pip cannot fetch {WHEEL} (offline?): "
                    f"{(done.stderr.strip().splitlines() or ['no wheel'])[-1]}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extractall(where, [n for n in wheel.namelist() if n.startswith("plugins/")])
    base = where / "plugins"
    return sorted(manifest.parent for manifest in base.rglob("plugin.yaml")
                  if manifest.relative_to(base).parts[0] not in OTHER_KINDS)


def install_and_enable(hermes: Callable[..., Any], plugin: Path, home: Path
                       ) -> tuple[bool, str]:
    """Whether ``plugin`` loads in a fresh home; else its refusal (the error line)."""
    manifest = yaml.safe_load((plugin / "plugin.yaml").read_text())
    env = {"HOME": str(home)} | NO_PIP | {  # values for what it requires: none is used at load
        (var["name"] if isinstance(var, dict) else var): "placeholder"
        for var in manifest.get("requires_env") or []}
    done = hermes("plugins", "install", str(plugin), "--enable", "--yes", "--force", env=env)
    assert "Traceback" not in done.stderr, done.stderr
    if done.exit_code == 0 and "registers" in done.stdout:
        return True, ""
    lines = done.stderr.strip().splitlines()
    return False, next((line for line in lines if line.startswith("error: ")), lines[-1])


def test_hermes_agent_s_plugins_load_or_are_refused_naming_what_is_missing(
        hermes: Callable[..., Any], wheel_plugins: list[Path], tmp_path: Path) -> None:
    """In this process (the CLI in-process), so that nothing hermes-agent's plugins were
    offered is left in ``sys.modules`` afterwards."""
    outcomes = [install_and_enable(hermes, plugin, tmp_path / plugin.name)
                for plugin in wheel_plugins]
    refusals = {plugin.name: why for plugin, (loaded, why) in zip(wheel_plugins, outcomes,
                                                                   strict=True) if not loaded}
    vague = {name: why for name, why in refusals.items() if not PRECISE.search(why)}
    assert not vague, vague
    loaded = len(wheel_plugins) - len(refusals)
    print(f"\n{loaded} of {len(wheel_plugins)} loaded; refused:\n" +
          "\n".join(f"  {name}: {why}" for name, why in sorted(refusals.items())))
    assert loaded >= LOADED_AT_LEAST, refusals
    assert not HERMES_AGENT_TOP_LEVEL & set(sys.modules)


def test_hermes_agent_s_holographic_memory_remembers_across_sessions(
        hermes_subprocess: Callable[..., subprocess.CompletedProcess[str]],
        wheel_plugins: list[Path], root: Path) -> None:
    """Its ``MemoryProvider`` runs as one of ``memory.providers``: the model stores a fact
    with its ``fact_store`` tool in one session, and the next session recalls it."""
    holographic = next(plugin for plugin in wheel_plugins if plugin.name == "holographic")
    with FakeLLM() as llm:
        write_fake_provider(root, llm.openai_base_url)
        config = yaml.safe_load((root / "config.yaml").read_text())
        config["memory"] = {"providers": ["plugin:holographic"]}
        (root / "config.yaml").write_text(yaml.safe_dump(config))
        done = hermes_subprocess("plugins", "install", str(holographic), "--enable", "--yes",
                                 "--force")
        assert done.returncode == 0 and "registers" in done.stdout, done.stderr
        llm.push(Reply(tool_calls=[ToolCall("fact_store", {
            "action": "add", "content": "The user's cat is called Miso"})]), Reply(text="ok"))
        done = hermes_subprocess("-z", "Remember that my cat is called Miso")
        assert done.returncode == 0, done.stderr
        stored = json.loads(llm.requests[-1].tool_results[0].content)
        llm.push(Reply(text="Miso"))
        done = hermes_subprocess("-z", "What is my cat called?")
        assert done.returncode == 0, done.stderr
    assert stored.get("status") == "added", stored
    assert "The user's cat is called Miso" in (llm.requests[-1].last_user_text or "")
    assert (root / "memory_store.db").is_file()
