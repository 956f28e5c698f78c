"""Plugins benchmark: hermes-runtime (ours) vs hermes-agent 0.19.0 (theirs), in one run.

Run from the repository root:

    .venv/bin/python bench/plugins.py --theirs /path/to/hermes-agent/bin/hermes
    .venv/bin/python bench/plugins.py --only startup --rounds 20 --json /tmp/plugins.json

Without ``--theirs``, hermes-agent is installed on first use into
``bench/.venvs/hermes-agent-0.19.0`` (``cli_startup.ensure_theirs``).

Every home gets the same 20 plugins (``plugins/pNN/``: a ``plugin.yaml`` and an
``__init__.py`` registering a tool and a ``post_tool_call`` hook; importing one appends
its name to ``imports.log`` in the home), all 20 enabled in ``config.yaml``.

``list``
    ``hermes plugins list`` in both homes: one untimed run each, then ``--rounds``
    interleaved rounds, the order flipping every round (``cli_startup.measure``); median
    wall time. Target: ours <= 0.3x theirs.
``startup``
    What 20 enabled plugins add to commands that do not use them, ours only: ``hermes
    profile list`` and ``hermes config get agent.max_iterations`` in the home with the
    plugins and in one without, interleaved; the median difference. Target: <= 50 ms for
    ``profile list``; and no plugin imported by either (``imports.log`` stays empty).
``load``
    Loading the 20 plugins as a session's runtime does (discovery, import, ``register``),
    in-process, ours only: the first load (imports) and a second runtime's (modules
    already imported). For information.

Exit status is 0 even when a target is missed: this is a measurement, not a test.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from cli_startup import REPO, Command, make_env, measure
from skills import Context, Figure, run_benchmark

PLUGINS = 20
LIST_TARGET, STARTUP_TARGET_MS = 0.3, 50.0
CODE = '''import json
from pathlib import Path

with open(Path(__file__).parents[2] / "imports.log", "a") as log:
    log.write("{name}\\n")


def register(ctx):
    ctx.register_tool(name="{name}_echo", toolset="{name}",
                      schema={{"name": "{name}_echo", "description": "Echo for {name}.",
                              "parameters": {{"type": "object", "properties": {{}}}}}},
                      handler=lambda args, **kwargs: json.dumps({{"echo": "{name}"}}))
    ctx.register_hook("post_tool_call", lambda **kwargs: None)
'''


def home_with_plugins(home: Path, plugins: bool = True) -> dict[str, str]:
    """The environment of a new user ``home`` (``cli_startup.make_env``) whose Hermes
    home has the 20 plugins; unless ``plugins`` is False, then it has a config that
    enables none (so both homes have a ``config.yaml`` to compose)."""
    home.mkdir(parents=True)
    environ = make_env(home)
    if plugins:
        install_plugins(home / ".hermes")
    else:
        (home / ".hermes" / "config.yaml").write_text("plugins:\n  enabled: []\n")
    return environ


def install_plugins(hermes_home: Path) -> None:
    """The 20 plugins, all enabled (``plugins.enabled`` is read by both sides)."""
    names = [f"p{i:02d}" for i in range(PLUGINS)]
    for name in names:
        directory = hermes_home / "plugins" / name
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "plugin.yaml").write_text(
            f"name: {name}\nversion: 1.0.0\ndescription: Benchmark plugin {name}\n"
            f"provides_tools: [{name}_echo]\nprovides_hooks: [post_tool_call]\n")
        (directory / "__init__.py").write_text(CODE.format(name=name))
    (hermes_home / "config.yaml").write_text(
        "plugins:\n  enabled: [" + ", ".join(names) + "]\n")


def imports(hermes_home: Path) -> int:
    log = hermes_home / "imports.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def measure_list(ctx: Context) -> list[Figure]:
    envs = {side: home_with_plugins(ctx.tmp / f"list-{side}") for side in ("ours", "theirs")}
    ours = Command("ours plugins list", [str(ctx.ours), "plugins", "list"], envs["ours"])
    theirs = Command("theirs plugins list", [str(ctx.theirs), "plugins", "list"],
                     envs["theirs"])
    measure([ours], [theirs], ctx.rounds)
    ctx.raw["list"] = {c.label: c.wall_ms for c in (ours, theirs)}
    return [Figure("ours plugins list", ours.median_ms, "ms"),
            Figure("theirs plugins list", theirs.median_ms, "ms"),
            Figure("ours / theirs", ours.median_ms / theirs.median_ms, "x", LIST_TARGET)]


def measure_startup(ctx: Context) -> list[Figure]:
    with_env = home_with_plugins(ctx.tmp / "with")
    without_env = home_with_plugins(ctx.tmp / "without", plugins=False)
    commands = {argv[0]: (Command(f"{argv[0]}, 20 plugins", [str(ctx.ours), *argv], with_env),
                          Command(f"{argv[0]}, none", [str(ctx.ours), *argv], without_env))
                for argv in (["profile", "list"], ["config", "get", "agent.max_iterations"])}
    measure([pair[0] for pair in commands.values()], [pair[1] for pair in commands.values()],
            ctx.rounds)
    figures = []
    for word, (loaded, plain) in commands.items():
        added = statistics.median(a - b for a, b in zip(loaded.wall_ms, plain.wall_ms,
                                                          strict=True))
        figures += [Figure(loaded.label, loaded.median_ms, "ms"),
                    Figure(plain.label, plain.median_ms, "ms"),
                    Figure(f"{word}: added", added, "ms",
                           STARTUP_TARGET_MS if word == "profile" else None)]
    ctx.raw["startup"] = {c.label: c.wall_ms for pair in commands.values() for c in pair}
    figures.append(Figure("plugins imported", imports(ctx.tmp / "with" / ".hermes"), "", 0))
    return figures


def measure_load(ctx: Context) -> list[Figure]:
    sys.path.insert(0, str(REPO / "runtime"))
    from hermes.home import home_from_path
    from hermes.plugins.host import PluginHost
    from hermes.plugins.settings import layered_plugin_settings

    environ = home_with_plugins(ctx.tmp / "load")
    home = home_from_path(ctx.tmp / "load" / ".hermes")
    settings = layered_plugin_settings(home, environ)
    samples: dict[str, list[float]] = {"first load": [], "next runtime": []}
    for kind in ("first load", *["next runtime"] * ctx.rounds):
        started = time.perf_counter()
        loaded = PluginHost(home, settings, environ=environ).registrations()
        samples[kind].append((time.perf_counter() - started) * 1000)
        assert len(loaded.records) == PLUGINS, [s.detail for s in loaded.states]
    ctx.raw["load"] = samples
    return [Figure(f"20 plugins, {kind}", statistics.median(values), "ms")
            for kind, values in samples.items()]


MEASUREMENTS: dict[str, Callable[[Context], list[Figure]]] = {
    "list": measure_list,
    "startup": measure_startup,
    "load": measure_load,
}


def main() -> int:
    return run_benchmark(__doc__ or "", MEASUREMENTS, "plugins")


if __name__ == "__main__":
    sys.exit(main())
