"""``hermes plugins list | enable | disable | install | remove | info`` and plugins' own
CLI commands, through the real CLI: sources and shadowing, opt-in, required variables
(asked at a terminal, else refused with the list, nothing written), disabled wins (also
from a system layer), installs from a path and from git (source and commit recorded),
HERMES_PLUGINS_DEBUG, project plugins (only where the config allows them), and start-up
that imports no plugin a command does not use."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pexpect
import yaml

from conftest import ok, refused
from plugin_support import SAMPLES, SINK_ENV, enable_at_terminal, install_sample, write_plugin

IMPORT_MARK = '''
from pathlib import Path

Path(__file__).with_name("imported").write_text("yes")

def register(ctx):
    ctx.register_cli_command("noisy", help="A noisy command", handler_fn=lambda args: 0)
'''


def config(root: Path) -> dict[str, object]:
    path = root / "config.yaml"
    return yaml.safe_load(path.read_text()) or {} if path.exists() else {}


def test_list_shows_every_source_and_what_shadows_what(hermes, root: Path,
                                                      tmp_path: Path) -> None:
    install_sample(root, "sink")
    deep = write_plugin(tmp_path / "elsewhere", "deep", "def register(ctx):\n    pass\n")
    (root / "plugins" / "tools").mkdir(parents=True)
    deep.rename(root / "plugins" / "tools" / "deep")  # one level of category
    extra = tmp_path / "layer-plugins"
    install_sample(extra, "calculator")
    write_plugin(extra, "sink", "def register(ctx):\n    pass\n")  # shadowed by the home's
    (root / "plugins" / "broken").mkdir()
    (root / "plugins" / "broken" / "plugin.yaml").write_text("name: broken\nversion: [1]\n")
    (root / "config.yaml").write_text(yaml.safe_dump(
        {"plugins": {"directories": [str(extra / "plugins")]}}))
    result = hermes("plugins", "list")
    lines = ok(result).splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "VERSION", "SOURCE", "DESCRIPTION"]
    rows = {line.split()[0]: line for line in lines[1:5]}
    assert list(rows) == ["sink", "tools/deep", "calculator", "tool-log"]  # discovery order
    assert "not enabled  0.3.0    home" in rows["sink"]
    assert "directory" in rows["calculator"] and "bundled" in rows["tool-log"]
    assert f"sink from directory ({extra / 'plugins' / 'sink'}) is shadowed by the home one" \
        in result.stdout
    assert "4 plugins, 0 enabled" in result.stdout
    assert result.stderr == (f"warning: plugin skipped: {root / 'plugins' / 'broken'}"
                             "/plugin.yaml: version: expected text\n")


def test_enable_refuses_missing_variables_and_changes_nothing(hermes, root: Path) -> None:
    install_sample(root, "sink")
    before = config(root)
    refused(hermes("plugins", "enable", "sink"), "plugin sink needs SINK_TOKEN, SINK_REGION",
            "nothing was changed", f"{root / '.env'} (NAME=value)")
    assert config(root) == before and not (root / ".env").exists()
    refused(hermes("plugins", "enable", "snk"), 'no plugin "snk" (did you mean "sink"?)')


def test_enable_disable_and_the_plugin_s_own_command(hermes, root: Path) -> None:
    install_sample(root, "sink")
    assert "sink" not in ok(hermes("--help"))
    refused(hermes("sink", "status"), "No such command 'sink'")
    enabled = ok(hermes("plugins", "enable", "sink", env=SINK_ENV))
    assert enabled.startswith("enabled sink 0.3.0 (home)")
    assert "registers 2 tools (sink_echo, sink_hidden)" in enabled
    assert config(root)["plugins"] == {"enabled": ["sink"]}
    assert "sink       The sink's own command" in ok(hermes("--help", env=SINK_ENV))
    assert ok(hermes("sink", "status", "--loud", env=SINK_ENV)) == \
        "SINK OK IN DEFAULT (TOKEN SET)\n"
    usage = hermes("sink", "--help", env=SINK_ENV)
    assert usage.exit_code == 0 and "usage: hermes sink [-h] {status}" in usage.stdout
    assert hermes("sink", "bogus", env=SINK_ENV).exit_code == 2  # argparse's own refusal
    assert hermes("sink", env=SINK_ENV).exit_code == 3  # the handler's own exit code
    assert "enabled" in ok(hermes("plugins", "list", env=SINK_ENV))

    assert ok(hermes("plugins", "disable", "sink")).startswith("disabled sink")
    assert config(root)["plugins"] == {"disabled": ["sink"], "enabled": []}
    assert "sink" not in ok(hermes("--help", env=SINK_ENV)).split()
    refused(hermes("sink", "status", env=SINK_ENV), "No such command 'sink'")
    assert ok(hermes("plugins", "enable", "sink", env=SINK_ENV))
    assert config(root)["plugins"] == {"disabled": [], "enabled": ["sink"]}


def test_a_system_layer_s_disable_wins(hermes, root: Path, tmp_path: Path) -> None:
    install_sample(root, "sink")
    layer = tmp_path / "layer"
    layer.mkdir()
    (layer / "config.yaml").write_text(yaml.safe_dump({"plugins": {"disabled": ["sink"]}}))
    env = SINK_ENV | {"HERMES_CONFIG_LAYERS": str(layer)}
    refused(hermes("plugins", "enable", "sink", env=env),
            f"plugin sink is disabled by system ({layer / 'config.yaml'})",
            "which this profile cannot change")
    (root / "config.yaml").write_text(yaml.safe_dump({"plugins": {"enabled": ["sink"]}}))
    assert "disabled" in ok(hermes("plugins", "list", env=env))
    refused(hermes("sink", "status", env=env), "No such command 'sink'")


def test_info_names_variables_never_values(hermes, root: Path) -> None:
    install_sample(root, "sink")
    ok(hermes("plugins", "enable", "sink", env=SINK_ENV))
    info = ok(hermes("plugins", "info", "sink", env={"SINK_TOKEN": "tok-1234"}))
    assert "requires SINK_TOKEN: set" in info and "requires SINK_REGION: missing — Where " \
        "the sink lives" in info and "optional SINK_COLOUR: missing" in info
    assert "tok-1234" not in info
    assert "status: enabled, missing SINK_REGION" in info
    assert "CLI commands: hermes sink" in info and "last load: loaded: 2 tools" in info


def test_enable_asks_for_missing_variables_at_a_terminal(root: Path, environ) -> None:
    install_sample(root, "sink")
    child = enable_at_terminal(environ, "sink")
    try:
        child.expect(r"SINK_TOKEN: ")
        child.sendline("typed-secret-123")
        child.expect(r"SINK_REGION \(Where the sink lives\) \(https://sink.example/regions\): ")
        child.sendline("eu-west")
        child.expect("enabled sink 0.3.0")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert "typed-secret-123" not in child.before  # not echoed
    env_file = (root / ".env").read_text()
    assert "SINK_TOKEN=typed-secret-123" in env_file and "SINK_REGION=eu-west" in env_file
    assert (root / ".env").stat().st_mode & 0o777 == 0o600


def test_install_from_a_path_and_from_git_records_the_source(hermes, root: Path,
                                                             tmp_path: Path) -> None:
    installed = ok(hermes("plugins", "install", str(SAMPLES / "calculator")))
    assert installed.startswith(f"installed calculator 1.0.0 from {SAMPLES / 'calculator'}")
    assert (root / "plugins" / "calculator" / "tools.py").is_file()
    refused(hermes("plugins", "install", str(SAMPLES / "calculator")),
            "plugin calculator is already installed", "--force")

    repo = tmp_path / "repo"
    (repo / "plugins").mkdir(parents=True)
    subprocess.run(["cp", "-r", str(SAMPLES / "sink"), str(repo / "plugins" / "sink")],
                   check=True)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "sink"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip()
    source = f"file://{repo}#plugins/sink"
    result = ok(hermes("plugins", "install", source, "--enable", env=SINK_ENV))
    assert f"installed sink 0.3.0 from {source} at {commit[:12]}" in result
    assert "enabled sink 0.3.0 (home)" in result
    assert not (root / "plugins" / "sink" / ".git").exists()
    lock_file = root / "plugins" / ".lock.json"
    lock = json.loads(lock_file.read_text())["plugins"]
    assert lock["sink"]["source"] == source and lock["sink"]["commit"] == commit
    assert lock["sink"]["kind"] == "git" and lock["calculator"]["kind"] == "path"
    assert lock_file.stat().st_mode & 0o777 == 0o600
    assert f"installed from: {source} at {commit}" in ok(hermes("plugins", "info", "sink",
                                                                env=SINK_ENV))

    assert ok(hermes("plugins", "remove", "sink", "--yes")).startswith("removed sink")
    assert not (root / "plugins" / "sink").exists()
    assert "sink" not in json.loads(lock_file.read_text())["plugins"]
    assert "sink" not in config(root)["plugins"]["enabled"]
    refused(hermes("plugins", "remove", "sink"), 'no plugin "sink" is installed')


def test_install_refuses_what_is_not_a_plugin(hermes, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "plugin.yaml").write_text("name: bad\nrequires_env: [1BAD]\n")
    (bad / "__init__.py").write_text("def register(ctx): pass\n")
    refused(hermes("plugins", "install", str(bad)),
            f"{bad / 'plugin.yaml'}: requires_env.0.name:")
    (bad / "plugin.yaml").write_text("name: bad\n")
    (bad / "__init__.py").unlink()
    refused(hermes("plugins", "install", str(bad)), "no __init__.py with register(ctx)")


def test_debug_output_shows_discovery(hermes, root: Path) -> None:
    install_sample(root, "sink")
    install_sample(root, "calculator")
    result = hermes("plugins", "enable", "sink", env=SINK_ENV | {"HERMES_PLUGINS_DEBUG": "1"})
    err = result.stderr
    assert f"plugins: scanning home plugins: {root / 'plugins'}" in err
    assert "plugins:   home: 2 manifest(s)" in err
    assert "plugins:   found sink 0.3.0 kind=standalone source=home" in err
    assert "plugins: scanning entry points (hermes_agent.plugins)" in err
    assert "plugins: skipped calculator (home): not enabled in config (run `hermes plugins " \
           "enable calculator`)" in err
    assert "plugins: sink: registered 2 tools (sink_echo, sink_hidden), 10 hooks" in err
    assert "plugins: project plugins: off (plugins.project: false)" in err


def test_commands_import_only_the_plugins_they_use(hermes_subprocess, root: Path) -> None:
    install_sample(root, "sink")
    noisy = write_plugin(root, "noisy", IMPORT_MARK)
    (root / "config.yaml").write_text(yaml.safe_dump({"plugins": {"enabled": ["sink",
                                                                              "noisy"]}}))
    (root / ".env").write_text("".join(f"{k}={v}\n" for k, v in SINK_ENV.items()))
    assert hermes_subprocess("plugins", "list").returncode == 0
    assert hermes_subprocess("profile", "list").returncode == 0
    assert hermes_subprocess("--help").returncode == 0  # no index yet: nothing is listed
    assert not (noisy / "imported").exists()
    first = hermes_subprocess("sink", "status")  # not indexed: every enabled plugin loads once
    assert first.returncode == 0, first.stderr
    assert (noisy / "imported").exists()
    (noisy / "imported").unlink()
    again = hermes_subprocess("sink", "status")
    assert again.stdout == "sink ok in default (token set)\n"
    help_text = hermes_subprocess("--help").stdout
    assert "noisy" in help_text and "sink" in help_text
    assert not (noisy / "imported").exists()  # only the sink plugin was imported


def test_project_plugins_count_only_where_the_config_allows_them(hermes_subprocess, root: Path,
                                                                 tmp_path: Path) -> None:
    project = tmp_path / "checkout"
    write_plugin(project / ".hermes", "local-tool", "def register(ctx):\n    pass\n")
    off = hermes_subprocess("plugins", "list", cwd=project)
    assert off.returncode == 0, off.stderr
    assert "local-tool" not in off.stdout  # a checkout cannot add plugins on its own
    root.mkdir(exist_ok=True)
    (root / "config.yaml").write_text(yaml.safe_dump({"plugins": {"project": True,
                                                                  "enabled": ["local-tool"]}}))
    on = hermes_subprocess("plugins", "list", cwd=project)
    assert on.returncode == 0, on.stderr
    (row,) = [line for line in on.stdout.splitlines() if line.startswith("local-tool ")]
    assert row.split()[1:4] == ["enabled", "0.1.0", "project"]
    elsewhere = hermes_subprocess("plugins", "list", cwd=tmp_path)
    assert "local-tool" not in elsewhere.stdout
