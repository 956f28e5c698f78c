"""The README's first-run setup and its Providers section run as written, in a real shell,
against the fake LLM: ``hermes setup`` at a terminal, then with flags (DeepSeek's key
from the environment on standard input; vLLM on a base URL), ``hermes model`` listing
the endpoint's models and setting one. Nothing leaves the machine: the profile carries
its own ``conf/provider/deepseek.yaml`` (a profile-local option, as the Config section
describes) pointing DeepSeek at the fake, and the vLLM line's host is the fake's."""

from __future__ import annotations

import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from fakellm import FakeLLM
from readme_support import bash, code_blocks, commands, section

KEY = "sk-fake-deepseek-key-1234"
MODELS = ["deepseek-chat", "deepseek-reasoner"]


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(models=MODELS) as fake:
        yield fake


def local_deepseek(home: Path, base: str) -> None:
    """The profile's own DeepSeek option: the packaged one, on the fake's URL."""
    from hermes.config.layers import packaged_conf_dir

    option = yaml.safe_load((packaged_conf_dir() / "provider" / "deepseek.yaml").read_text())
    option["api_base"] = base
    (home / "conf" / "provider").mkdir(parents=True, exist_ok=True)
    (home / "conf" / "provider" / "deepseek.yaml").write_text(yaml.safe_dump(option))


def test_the_readme_setup_block_runs_as_written(environ: dict[str, str], root: Path,
                                                llm: FakeLLM, tmp_path: Path) -> None:
    import pexpect

    [block] = [b for b in code_blocks(section("## Set up on a fresh machine"))
               if "hermes setup" in b]
    at_terminal, piped, vllm = commands(block)
    assert at_terminal == "hermes setup"
    local_deepseek(root, llm.openai_base_url)
    child = pexpect.spawn(sys.executable, ["-m", "hermes", "setup"],
                          env=environ | {"TERM": "dumb"}, encoding="utf-8", timeout=60)
    child.expect(r"Provider \(number or name\) \[openai\]: ")
    child.sendline("deepseek")
    child.expect("DEEPSEEK_API_KEY: ")
    child.sendline(KEY)
    child.expect(r"Model \[deepseek-chat\]: ")
    child.sendline("")
    child.expect("ready: provider deepseek, model deepseek-chat")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and KEY not in (child.before or "")

    (root / ".env").unlink()  # the piped line stores it again, from the environment
    out = bash(environ | {"DEEPSEEK_API_KEY": KEY}, piped, tmp_path)
    assert f"GET {llm.openai_base_url}/models: 2 models" in out
    env = root / ".env"
    assert stat.S_IMODE(env.stat().st_mode) == 0o600 and f"DEEPSEEK_API_KEY={KEY}" in \
        env.read_text()
    assert KEY not in out
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in llm.requests)

    bash(environ, "hermes profile create work", tmp_path)
    before = len(llm.requests)
    out = bash(environ, vllm.replace("http://gpu-box:8000/v1", llm.openai_base_url), tmp_path)
    assert "provider vllm, model Qwen/Qwen3-8B" in out
    assert llm.requests[before].path == "/v1/models"
    work = yaml.safe_load((root / "profiles" / "work" / "config.yaml").read_text())
    assert work["defaults"] == [{"override provider": "vllm"}]
    assert work["provider"]["api_base"] == llm.openai_base_url


def test_the_readme_model_block_runs_as_written(environ: dict[str, str], root: Path,
                                                llm: FakeLLM, tmp_path: Path) -> None:
    local_deepseek(root, llm.openai_base_url)
    bash(environ | {"DEEPSEEK_API_KEY": KEY},
         'echo "$DEEPSEEK_API_KEY" | hermes setup --provider deepseek --key-stdin --yes',
         tmp_path)
    [block] = code_blocks(section("## Providers"))
    listing, choose = commands(block)
    listed = bash(environ, listing, tmp_path)
    assert [line.split() for line in listed.splitlines() if "deepseek-" in line] == \
        [["*", "deepseek-chat"], ["deepseek-reasoner"]]
    bash(environ, choose, tmp_path)
    assert bash(environ, "hermes config get provider.model", tmp_path).strip() == \
        "deepseek-reasoner"
    assert "* deepseek-reasoner" in bash(environ, listing, tmp_path)
