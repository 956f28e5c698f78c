"""The runtime container: wiring, selectors, lifecycle, overrides, two-runtime isolation."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from dependency_injector import providers

from hermes.config import compose_config
from hermes.container import build_runtime
from hermes.environments.local import LocalEnvironment
from hermes.home import Home, home_from_path
from hermes.memory.base import MemoryProvider
from hermes.memory.builtin import BuiltinMemory
from hermes.profiles.manager import ProfileManager


def runtime_for(home: Home, environ: dict[str, str], *overrides: str):
    composed = compose_config(home, environ, list(overrides))
    return build_runtime(home, composed.config, environ)


def test_services_are_wired_from_the_config(root: Path, environ) -> None:
    home = home_from_path(root).ensure()
    with runtime_for(home, environ, "provider=anthropic", "provider.model=claude-x") as rt:
        c = rt.container
        assert c.model().litellm_model == "anthropic/claude-x"
        assert isinstance(c.environment(), LocalEnvironment)
        assert isinstance(c.memory(), BuiltinMemory)
        assert c.tools().enabled_toolsets >= {"file", "terminal"}
        deps = c.agent_factory().deps
        assert deps.sessions is c.sessions() and deps.environment is c.environment()
        assert deps.settings.max_iterations == 90
    with runtime_for(home, environ, "memory=none", "toolsets=minimal") as rt:
        assert type(rt.container.memory()) is MemoryProvider
        assert rt.container.tools().enabled_toolsets == {"clarify", "memory"}


def test_resources_start_and_stop(root: Path, environ) -> None:
    home = home_from_path(root).ensure()
    runtime = runtime_for(home, environ)
    with runtime:
        store = runtime.container.sessions()
        store.create_session("cli", "m")
        assert store._db is not None
    assert store._db is None  # closed on shutdown
    assert (home.sessions_db.stat().st_mode & 0o777) == 0o600
    # the migration is recorded and safe to repeat
    with runtime_for(home, environ) as again:
        assert again.container.sessions().migrate() == []
    conn = sqlite3.connect(home.sessions_db)
    names = [r[0] for r in conn.execute("select name from _migrations order by name")]
    assert names[0] == "0001_sessions" and len(names) == len(set(names))
    assert conn.execute("pragma integrity_check").fetchone() == ("ok",)


def test_local_environment_gives_children_their_home(root: Path, environ) -> None:
    home = home_from_path(root).ensure()
    with runtime_for(home, environ | {"HERMES_HOME": "/wrong"}) as rt:
        result = rt.container.environment().run('printf %s "$HERMES_HOME"')
    assert result.exit_code == 0 and result.output == str(root)


def test_any_service_can_be_overridden_with_a_fake(root: Path, environ) -> None:
    class FakeMemory(MemoryProvider):
        name = "fake"

        def snapshot(self) -> str:
            return "remember the milk"

    home = home_from_path(root).ensure()
    runtime = runtime_for(home, environ)
    other = runtime_for(home, environ)
    with runtime.container.memory.override(providers.Object(FakeMemory())):
        assert runtime.container.agent_factory().deps.memory.snapshot() == "remember the milk"
        assert isinstance(other.container.memory(), BuiltinMemory)  # no leak between runtimes
    assert isinstance(runtime.container.memory(), BuiltinMemory)


def test_two_profiles_in_one_process_never_touch_each_other(root: Path, environ) -> None:
    manager = ProfileManager(root, environ)
    homes = [manager.create("alpha"), manager.create("beta")]
    (homes[0].memories_dir / "MEMORY.md").write_text("alpha only")
    (homes[1].config_file).write_text("provider:\n  model: beta-model\n")
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def work(home: Home) -> None:
        try:
            barrier.wait(timeout=10)
            for i in range(20):
                with runtime_for(home, environ, f"agent.max_iterations={i + 1}") as rt:
                    store = rt.container.sessions()
                    sid = store.create_session("test", rt.container.model().model)
                    store.add_message(sid, "user", f"{home.name}-{i}")
                    assert rt.settings.agent.max_iterations == i + 1
                    env_home = rt.container.environment().run('printf %s "$HERMES_HOME"')
                    assert env_home.output == str(home.path)
        except BaseException as exc:  # re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(h,)) for h in homes]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    for home in homes:
        conn = sqlite3.connect(home.sessions_db)
        contents = {r[0] for r in conn.execute("select content from messages")}
        models = {r[0] for r in conn.execute("select model from sessions")}
        assert contents == {f"{home.name}-{i}" for i in range(20)}
        assert models == {"beta-model" if home.name == "beta" else "gpt-4o"}
    assert (homes[1].memories_dir / "MEMORY.md").exists() is False
    assert not (root / "state.db").exists()  # the default profile was never touched


@pytest.mark.parametrize("kind", ["docker", "ssh"])
def test_environment_selector_picks_by_option_name(root: Path, environ, kind: str) -> None:
    home = home_from_path(root).ensure()
    overrides = ["environment=" + kind] + (["environment.ssh.host=127.0.0.1"]
                                           if kind == "ssh" else [])
    runtime = runtime_for(home, environ, *overrides)
    env = runtime.container.environment.kwargs["environment"]()
    assert env.kind == kind
