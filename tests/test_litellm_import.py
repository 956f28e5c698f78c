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
