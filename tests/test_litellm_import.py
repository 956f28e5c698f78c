"""litellm is imported lazily and never touches the network while importing."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import socket, sys
def refuse(*args, **kwargs):
    print("network access during import:", args, file=sys.stderr)
    raise SystemExit(3)
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.getaddrinfo = refuse  # a name lookup is the first step of any fetch
import hermes.container, hermes.cli.chat_cmd  # the runtime's modules: litellm stays unloaded
assert "litellm" not in sys.modules, "litellm imported eagerly"
from hermes.models.litellm_client import import_litellm
litellm = import_litellm()
assert litellm.model_cost, "no local cost map"
print("ok", len(litellm.model_cost))
"""


def test_import_is_lazy_and_offline(environ) -> None:
    env = {k: v for k, v in environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    proc = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("ok ") and int(proc.stdout.split()[1]) > 100


LEAN = """
import sys
from hermes.models.litellm_client import import_litellm
import_litellm()
print(sorted(m for m in ("cryptography", "bcrypt", "httpx._main", "pygments", "rich")
             if m in sys.modules))
import paramiko, cryptography.hazmat  # noqa: anything else still imports them as usual
print("paramiko", paramiko.__version__)
"""


def test_litellm_leaves_out_what_hermes_never_uses(environ) -> None:
    """cryptography (litellm's OCI signing, installed for paramiko) and httpx's command-line
    client stay unloaded by litellm's import; other importers get them as usual."""
    proc = subprocess.run([sys.executable, "-c", LEAN], env=environ, capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["[]", "paramiko 5.1.0"]


TOKENIZER = """
import sys
sys.path.insert(0, {tests!r})
from fakellm import FakeLLM, Reply
from hermes.models.litellm_client import import_litellm
litellm = import_litellm()
with FakeLLM(fallback=lambda request: Reply("ok")) as llm:
    stream = litellm.completion(model="openai/gpt-4o", api_base=llm.openai_base_url,
                                api_key="sk-test", stream=True,
                                messages=[{{"role": "user", "content": "hi"}}])
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
print(text, "litellm.litellm_core_utils.default_encoding" in sys.modules,
      "tiktoken" in sys.modules and "tiktoken_ext.openai_public" in sys.modules)
"""


def test_a_streamed_call_loads_no_tokenizer(environ) -> None:
    """litellm would price each stream at its start by counting the prompt with
    tiktoken's cl100k (+39 MiB, ~0.2 s): Hermes turns its token counter off."""
    from pathlib import Path

    tests = str(Path(__file__).parent)
    proc = subprocess.run([sys.executable, "-c", TOKENIZER.format(tests=tests)], env=environ,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["ok", "False", "False"]
