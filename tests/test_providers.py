"""Any provider: every provider option composes and names its key; one of each API mode
answers a one-shot from the fake LLM (litellm's own routing and wire code run); ``hermes
model`` lists and sets models; ``/model`` switches a session; ``hermes setup`` stores a
checked key."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from conftest import ok, refused, write_fake_provider
from fakellm import FakeLLM, Reply
from hermes.agent.conversations import Conversations
from hermes.agent.factory import Interaction
from hermes.cli.chat_commands import run_command
from hermes.config import compose_config
from hermes.config.layers import packaged_conf_dir
from hermes.container import build_runtime
from hermes.home import home_from_path

OPTIONS = sorted(p.stem for p in (packaged_conf_dir() / "provider").glob("*.yaml"))
NEW = ["azure", "bedrock", "cerebras", "deepseek", "fireworks", "gemini", "groq",
       "huggingface", "llamacpp", "lmstudio", "minimax", "mistral", "moonshot", "nous", "qwen",
       "together", "vertex", "vllm", "xai", "zhipu"]
NEEDS_BASE = {"azure": "https://example-resource.openai.azure.com", "custom": "http://x/v1"}
KEYS = {"gemini": "GEMINI_API_KEY", "azure": "AZURE_API_KEY", "xai": "XAI_API_KEY",
        "deepseek": "DEEPSEEK_API_KEY", "mistral": "MISTRAL_API_KEY", "groq": "GROQ_API_KEY",
        "together": "TOGETHER_API_KEY", "fireworks": "FIREWORKS_API_KEY",
        "cerebras": "CEREBRAS_API_KEY", "moonshot": "MOONSHOT_API_KEY",
        "qwen": "DASHSCOPE_API_KEY", "zhipu": "ZAI_API_KEY", "minimax": "MINIMAX_API_KEY",
        "nous": "NOUS_API_KEY", "huggingface": "HF_TOKEN"}
KEY = "sk-fake-provider-key-1234"


def write_profile(root: Path, option: str, **provider: object) -> None:
    root.mkdir(parents=True, exist_ok=True)
    config = {"defaults": [{"override provider": option}],
              "provider": {"max_retries": 0, "timeout": 10} | provider}
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def write_key(root: Path, name: str, value: str = KEY) -> None:
    (root / ".env").write_text(f"{name}={value}\n")
    (root / ".env").chmod(0o600)


def test_every_asked_for_provider_is_an_option() -> None:
    assert set(NEW) <= set(OPTIONS)


@pytest.mark.parametrize("option", OPTIONS)
def test_each_option_composes_validates_and_names_its_key(option: str, root: Path,
                                                          environ: dict[str, str]) -> None:
    from hermes.agent.prechecks import missing_api_key

    extra = [f"provider.api_base={NEEDS_BASE[option]}"] if option in NEEDS_BASE else []
    if option == "custom":
        extra.append("provider.model=m")
    composed = compose_config(home_from_path(root), environ, [f"provider={option}", *extra])
    provider = composed.config.provider
    assert provider.name == option and provider.model and provider.provider
    assert provider.api_mode != "auto" or option in ("openai", "anthropic")
    if option in KEYS:
        assert missing_api_key(composed.config, composed.raw) == KEYS[option]


@pytest.mark.parametrize("option", ["deepseek", "gemini", "minimax", "huggingface"])
def test_a_missing_key_is_refused_in_one_line_naming_it(option: str, hermes, root: Path
                                                        ) -> None:
    write_profile(root, option)
    refused(hermes("-z", "hi"), f"no API key for provider {option}", KEYS[option])
    assert not (root / "state.db").exists()


def test_config_show_and_doctor_take_a_new_option(hermes, root: Path) -> None:
    write_profile(root, "groq")
    shown = yaml.safe_load(ok(hermes("config", "show")))
    assert shown["provider"]["provider"] == "groq"
    assert shown["provider"]["api_base"] == "https://api.groq.com/openai/v1"


# -- one provider option of each API mode, pointed at the fake LLM ---------------------

MODES = {  # option: (the fake's base URL attribute, the wire the request must arrive in)
    "deepseek": ("openai_base_url", "openai_chat"),
    "minimax": ("anthropic_base_url", "anthropic"),
    "xai": ("openai_base_url", "responses"),
    "bedrock": ("bedrock_base_url", "bedrock"),
}


@pytest.fixture
def aws(tmp_path: Path) -> Iterator[None]:
    from fakellm.bedrock import aws_sandbox, deferred_gc

    with aws_sandbox(tmp_path) as refused_hosts, deferred_gc():
        yield
    assert refused_hosts == []


@pytest.mark.usefixtures("aws")
@pytest.mark.parametrize("option", sorted(MODES))
def test_an_option_of_each_api_mode_answers_a_one_shot(option: str, hermes, root: Path) -> None:
    base, wire = MODES[option]
    key = "AWS_BEARER_TOKEN_BEDROCK" if option == "bedrock" else KEYS[option]
    with FakeLLM([Reply(text=f"hello from {option}")]) as llm:
        write_profile(root, option, api_base=getattr(llm, base))
        write_key(root, key)
        assert ok(hermes("-z", "hi")).strip() == f"hello from {option}"
    request = llm.requests[-1]
    assert request.wire == wire
    auth = request.headers.get("authorization") or request.headers.get("x-api-key") or ""
    assert KEY in auth


# -- hermes model ------------------------------------------------------------------------

def test_hermes_model_lists_the_endpoints_models_and_sets_one(hermes, root: Path) -> None:
    with FakeLLM(models=["deepseek-chat", "deepseek-reasoner"]) as llm:
        write_profile(root, "deepseek", api_base=llm.openai_base_url)
        write_key(root, "DEEPSEEK_API_KEY")
        listed = hermes("model")
        assert ok(listed).splitlines() == ["* deepseek-chat", "  deepseek-reasoner"]
        assert llm.openai_base_url + "/models" in listed.stderr
    assert llm.requests[0].path == "/v1/models"
    assert llm.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert "deepseek-reasoner" in ok(hermes("model", "set", "deepseek-reasoner"))
    assert ok(hermes("config", "get", "provider.model")).strip() == "deepseek-reasoner"
    ok(hermes("model", "deepseek-chat"))
    assert yaml.safe_load((root / "config.yaml").read_text())["provider"]["model"] \
        == "deepseek-chat"


def test_hermes_model_lists_litellms_offline_map_for_a_native_api(hermes, root: Path) -> None:
    write_profile(root, "gemini")
    write_key(root, "GEMINI_API_KEY")
    listed = ok(hermes("model"))  # no endpoint: a request would fail (no network here)
    assert "* gemini-2.5-flash" in listed.splitlines() and "  gemini-2.5-pro" in listed


@pytest.mark.parametrize("option", ["azure", "bedrock", "gemini", "vertex"])
def test_a_native_apis_default_model_is_in_litellms_map(option: str) -> None:
    """Listed from the map (no /models in a wire Hermes speaks): its default is there."""
    from hermes.config.schema import ProviderConfig
    from hermes.models.catalog import models_url, offline_models

    settings = yaml.safe_load((packaged_conf_dir() / "provider" / f"{option}.yaml")
                              .read_text())
    assert settings["model"] in offline_models(settings["provider"])
    assert models_url(ProviderConfig(**settings | {"api_base": None})) is None


def test_hermes_model_bad_input_is_one_line(hermes, root: Path) -> None:
    write_profile(root, "deepseek")
    before = (root / "config.yaml").read_text()
    refused(hermes("model", "a", "b"), "one model name")
    refused(hermes("model", "set"), "which model?")
    assert (root / "config.yaml").read_text() == before


# -- /model: the rest of the session, not the next one -----------------------------------

@pytest.fixture
def runtime(root: Path, environ: dict[str, str]) -> Iterator[tuple[object, FakeLLM]]:
    with FakeLLM(fallback=lambda request: Reply(text=f"from {request.model}")) as llm:
        write_fake_provider(root, llm.openai_base_url)
        home = home_from_path(root)
        with build_runtime(home, compose_config(home, environ, []).config, environ) as rt:
            yield rt, llm


def test_slash_model_switches_the_chat_session_only(runtime, capsys) -> None:
    rt, llm = runtime
    conversations: Conversations = rt.container.conversations()  # type: ignore[attr-defined]
    how = Interaction()
    conversation = conversations.open(how)
    conversation, _ = run_command("/model other-model", conversation, conversations, how)
    assert "model for this session: other-model" in capsys.readouterr().out
    assert conversation.run("hi").text == "from other-model"
    run_command("/model", conversation, conversations, how)
    assert capsys.readouterr().out.strip() == "model: other-model"
    session = conversation.session_id
    conversation.end()
    assert conversations.open(how, resume=session).run("again").text == "from other-model"
    assert conversations.open(how).run("new one").text == "from gpt-4o"
    assert [r.model for r in llm.requests] == ["other-model", "other-model", "gpt-4o"]


def test_a_session_id_keeps_its_model_on_the_gateway(runtime, root: Path) -> None:
    """The API server's and the router's way: sessions opened by id, turn after turn."""
    import logging

    from hermes.gateway.service import ProfileService

    rt, llm = runtime
    service = ProfileService(home_from_path(root), rt, logging.getLogger("test-providers"))
    assert service.model_command("s1", "other-model") \
        == "model for this conversation: other-model (new ones use gpt-4o)"
    assert service.model_command("s1", "") == "model: other-model"
    how = Interaction(source="api_server", stream=False)
    for text in ("first", "second"):  # new with that id, then resumed
        with service.open(how, "s1") as conversation:
            assert conversation.run(text).text == "from other-model"
    with service.open(how, "s2") as conversation:
        assert conversation.run("elsewhere").text == "from gpt-4o"
    assert service.model_command("s2", "") == "model: gpt-4o"


# -- hermes setup ------------------------------------------------------------------------

def test_setup_with_flags_checks_the_key_then_writes_env_0600(hermes, root: Path) -> None:
    with FakeLLM(models=["deepseek-chat"]) as llm:
        base = llm.openai_base_url
        result = hermes("setup", "--provider", "deepseek", "--base-url", base,
                        "--key-stdin", "--yes", input=KEY + "\n")
        out = ok(result)
    assert f"GET {base}/models: 1 model" in out
    assert "hermes chat" in out and "provider deepseek, model deepseek-chat" in out
    assert llm.requests[0].headers["authorization"] == f"Bearer {KEY}"
    env = root / ".env"
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    assert f"DEEPSEEK_API_KEY={KEY}" in env.read_text()
    config = yaml.safe_load((root / "config.yaml").read_text())
    assert config["defaults"] == [{"override provider": "deepseek"}]
    assert config["provider"]["api_base"] == base
    assert KEY not in (root / "config.yaml").read_text() + out + result.stderr
    # another provider: the old endpoint's URL does not follow it; the old key stays
    ok(hermes("setup", "--provider", "gemini", "--key", "g-key", "--no-check", "--yes"))
    assert ok(hermes("config", "get", "provider.api_base")).strip() == "null"
    assert ok(hermes("config", "get", "provider.model")).strip() == "gemini-2.5-flash"
    assert "GEMINI_API_KEY=g-key" in env.read_text() and f"DEEPSEEK_API_KEY={KEY}" in \
        env.read_text()


@pytest.mark.parametrize(("args", "fragment"), [
    (["--provider", "opneai", "--key", KEY], 'unknown option "opneai"'),
    (["--key", KEY], "--provider is required"),
    (["--provider", "deepseek"], "needs DEEPSEEK_API_KEY"),
    (["--provider", "deepseek", "--key", " sk-x "], "leading or trailing spaces"),
    (["--provider", "ollama", "--key", KEY], "takes no API key"),
    (["--provider", "deepseek", "--key", KEY, "--key-stdin"], "give the key once"),
    (["--provider", "azure", "--key", KEY], "needs provider.api_base: pass --base-url URL"),
    (["--provider", "custom", "--key", KEY, "--base-url", "http://127.0.0.1:9/v1"],
     "needs provider.model: pass --model NAME"),
])
def test_setup_bad_input_is_one_line_exit_2_nothing_written(args: list[str], fragment: str,
                                                            hermes, root: Path) -> None:
    refused(hermes("setup", "--yes", *args), fragment)
    assert not (root / ".env").exists() and not (root / "config.yaml").exists()


def test_setup_writes_nothing_when_the_check_fails(hermes, root: Path) -> None:
    from fakellm import Fault

    # no /models (404): a one-token completion, whose key is refused
    with FakeLLM([Fault.authentication()], strict=False) as llm:
        refused(hermes("setup", "--provider", "deepseek", "--base-url", llm.openai_base_url,
                       "--key", KEY, "--yes"), "the check failed, nothing was written")
    assert [r.path for r in llm.requests] == ["/v1/models", "/v1/chat/completions"]
    assert llm.requests[1].body["max_tokens"] == 1
    assert not (root / ".env").exists() and not (root / "config.yaml").exists()


def test_setup_at_a_terminal_asks_what_the_flags_leave_open(environ: dict[str, str],
                                                            root: Path) -> None:
    import sys

    import pexpect

    with FakeLLM(models=["deepseek-chat", "deepseek-reasoner"]) as llm:
        child = pexpect.spawn(sys.executable, ["-m", "hermes", "setup", "--base-url",
                                               llm.openai_base_url],
                              env=environ | {"TERM": "dumb"}, encoding="utf-8", timeout=60)
        child.expect(r"Provider \(number or name\) \[openai\]: ")
        assert " deepseek" in (child.before or "") and " zhipu" in (child.before or "")
        child.sendline("deepseek")
        child.expect("DEEPSEEK_API_KEY: ")
        child.sendline(KEY)
        child.expect(r"Model \[deepseek-chat\]: ")
        child.sendline("deepseek-reasoner")
        child.expect("ready: provider deepseek, model deepseek-reasoner")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0
    assert KEY not in (child.before or "")  # the key was not echoed
    assert f"DEEPSEEK_API_KEY={KEY}" in (root / ".env").read_text()
    assert yaml.safe_load((root / "config.yaml").read_text())["provider"]["model"] \
        == "deepseek-reasoner"


def test_setup_checks_a_native_api_with_a_one_token_completion(hermes, root: Path) -> None:
    with FakeLLM([Reply(text="OK")], strict=False) as llm:  # minimax: no model list (404)
        out = ok(hermes("setup", "--provider", "minimax", "--base-url",
                        llm.anthropic_base_url, "--key", KEY, "--yes"))
    assert "a one-token completion from anthropic/MiniMax-M2" in out
    assert [r.path for r in llm.requests] == ["/v1/models", "/v1/messages"]
    assert llm.requests[1].headers["x-api-key"] == KEY
    assert f"MINIMAX_API_KEY={KEY}" in (root / ".env").read_text()


def test_slash_model_through_the_api_server(root: Path, environ: dict[str, str]) -> None:
    import openai

    from gateway_support import KEY as API_KEY
    from gateway_support import configure, gateway

    with FakeLLM(fallback=lambda request: Reply(text=f"from {request.model}"),
                 strict=False) as llm:
        configure(root, llm.openai_base_url)
        with gateway(environ, root) as gw:
            api = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=API_KEY, max_retries=0,
                                timeout=30)
            session = {"X-Hermes-Session-Id": "chat-1"}

            def say(text: str, headers: dict[str, str] = session) -> str | None:
                return api.chat.completions.create(
                    model="default", messages=[{"role": "user", "content": text}],
                    extra_headers=headers).choices[0].message.content

            assert say("/model other-model") \
                == "model for this conversation: other-model (new ones use gpt-4o)"
            assert say("hi") == "from other-model" and say("again") == "from other-model"
            assert say("/model") == "model: other-model"
            assert say("elsewhere", {"X-Hermes-Session-Id": "chat-2"}) == "from gpt-4o"
    assert [r.model for r in llm.requests] == ["other-model", "other-model", "gpt-4o"]


MODEL_PROBE = """
import runpy, socket, sys
def refuse(*args, **kwargs):
    raise SystemExit(f"network access: {args}")
socket.socket.connect = refuse
socket.getaddrinfo = refuse
sys.argv = ["hermes", "--no-daemon", "model"]
try:
    runpy.run_module("hermes", run_name="__main__")
except SystemExit as exc:
    assert not exc.code, exc.code
assert "litellm" not in sys.modules, "litellm imported"
"""


def test_listing_from_litellms_map_imports_no_litellm_and_fetches_nothing(
        environ: dict[str, str], root: Path) -> None:
    import subprocess
    import sys

    write_profile(root, "vertex")
    proc = subprocess.run([sys.executable, "-c", MODEL_PROBE], env=environ,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "* gemini-2.5-pro" in proc.stdout.splitlines()


def test_setup_refuses_a_choice_a_system_layer_makes(hermes, root: Path, tmp_path: Path) -> None:
    layer = tmp_path / "system"
    layer.mkdir()
    (layer / "config.yaml").write_text("defaults:\n  - override provider: anthropic\n")
    refused(hermes("setup", "--provider", "deepseek", "--key", KEY, "--no-check", "--yes",
                   env={"HERMES_CONFIG_LAYERS": str(layer)}),
            "provider", "read-only system layer")
    assert not (root / ".env").exists() and not (root / "config.yaml").exists()


def test_setup_at_a_terminal_asks_for_what_an_option_leaves_unset(environ: dict[str, str],
                                                                   root: Path) -> None:
    import sys

    import pexpect

    with FakeLLM(models=["my-model"]) as llm:
        base = llm.openai_base_url
        child = pexpect.spawn(sys.executable, ["-m", "hermes", "setup", "--provider", "custom"],
                              env=environ | {"TERM": "dumb"}, encoding="utf-8", timeout=60)
        child.expect("Model: ")
        child.sendline("my-model")
        child.expect("Base URL of the endpoint: ")
        child.sendline(base)
        child.expect("CUSTOM_API_KEY: ")
        child.sendline(KEY)
        child.expect("ready: provider custom, model my-model")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0
    provider = yaml.safe_load((root / "config.yaml").read_text())["provider"]
    assert provider == {"model": "my-model", "api_base": base}
