"""Composition in a forked child: a long-lived caller (the gateway) never loads Hydra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from hermes.config import compose_config
from hermes.errors import ConfigError
from hermes.home import home_from_path
home = home_from_path(__import__("pathlib").Path(sys.argv[1]))
environ = {"HOME": sys.argv[2]}
child = compose_config(home, environ, ["agent.max_iterations=7"], hydra_in_child=True)
print("hydra" in sys.modules, child.config.agent.max_iterations)
try:
    compose_config(home, environ, ["agent.max_iterations=many"], hydra_in_child=True)
except ConfigError as exc:
    print("error:", exc)
here = compose_config(home, environ, ["agent.max_iterations=8"])
print("hydra" in sys.modules, child.config.model_dump() == here.config.model_dump()
      | {"agent": here.config.model_dump()["agent"] | {"max_iterations": 7}})
"""


def test_the_child_composes_and_the_caller_never_loads_hydra(user_home: Path,
                                                             environ: dict[str, str]) -> None:
    home = user_home / ".hermes"
    home.mkdir()
    (home / "config.yaml").write_text("agent:\n  max_iterations: 12\n")
    proc = subprocess.run([sys.executable, "-c", PROBE, str(home), str(user_home)],
                          env=environ, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "False 7"
    # the child's error is the in-process one: one line naming the key
    assert lines[1].startswith("error: ") and "agent.max_iterations" in lines[1]
    assert lines[2] == "True True"
