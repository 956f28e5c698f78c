"""`hermes mcp list | add | remove | test` through the real CLI: servers written to the
profile's config.yaml (comments kept), credentials refused unless they refer to .env,
bad input one line with exit 2 and nothing written, `test` connecting for real."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from conftest import ok, refused
from mcp_support import SAMPLE


def profile_config(root: Path) -> dict:
    return yaml.safe_load((root / "config.yaml").read_text()) or {}


def test_add_list_test_and_remove_a_stdio_server(hermes, root: Path) -> None:
    root.mkdir(parents=True)
    (root / "config.yaml").write_text("# my settings\nagent:\n  max_iterations: 20\n")
    assert ok(hermes("mcp", "list")).startswith("(no MCP servers) add one with")
    added = ok(hermes("mcp", "add", "sample", "--exclude", "nap", "--env", "SAMPLE_TOKEN",
                      "--", sys.executable, str(SAMPLE)))
    assert added.startswith(f"added MCP server sample to {root / 'config.yaml'}")
    text = (root / "config.yaml").read_text()
    assert text.startswith("# my settings\n")
    assert profile_config(root)["mcp_servers"] == {"sample": {
        "command": sys.executable, "args": [str(SAMPLE)],
        "env": {"SAMPLE_TOKEN": "${secret:SAMPLE_TOKEN}"}, "tools": {"exclude": ["nap"]}}}
    ok(hermes("mcp", "add", "docs", "--url", "https://docs.example/mcp", "--disabled",
              "--header", "Authorization: Bearer ${secret:DOCS_TOKEN}"))
    assert "sample  enabled, SAMPLE_TOKEN unset  stdio" in ok(hermes("mcp", "list"))
    ok(hermes("config", "set", "SAMPLE_TOKEN", "token-value-123"))  # into .env
    listed = ok(hermes("mcp", "list")).splitlines()
    assert listed[0].split() == ["NAME", "STATUS", "TRANSPORT", "TOOLS", "TARGET"]
    assert listed[1].split() == ["sample", "enabled", "stdio", "not", "nap", sys.executable,
                                 str(SAMPLE)]
    assert listed[2].split() == ["docs", "disabled,", "DOCS_TOKEN", "unset", "http", "all",
                                 "https://docs.example/mcp"]
    assert listed[-1].startswith("2 servers, 1 enabled")

    tested = ok(hermes("mcp", "test", "sample")).splitlines()
    assert tested[0].startswith(f"sample: stdio {sys.executable} {SAMPLE}: started in ")
    assert tested[0].endswith(" s, 12 tools")
    assert "  mcp_sample_add  Add two integers." in tested
    assert "  mcp_sample_nap  (filtered out)  Sleep, then answer." in tested

    line = refused(hermes("mcp", "test", "docs"), "mcp_servers.docs", "DOCS_TOKEN",
                   "hermes config set DOCS_TOKEN")
    assert "Bearer" not in line
    assert ok(hermes("mcp", "remove", "docs")) == \
        f"removed MCP server docs from {root / 'config.yaml'}\n"
    assert list(profile_config(root)["mcp_servers"]) == ["sample"]


def test_bad_input_is_one_line_and_writes_nothing(hermes, root: Path) -> None:
    root.mkdir(parents=True)
    (root / "config.yaml").write_text("mcp_servers:\n  docs:\n    url: https://docs.example\n")
    before = (root / "config.yaml").read_text()
    refused(hermes("mcp", "add", "gh", "--url", "https://gh.example/mcp", "--header",
                   "Authorization: Bearer ghp_literal"),
            "--header Authorization", "${secret:MY_TOKEN}")
    refused(hermes("mcp", "add", "gh", "--env", "GITHUB_TOKEN=ghp_literal", "--", "gh-mcp"),
            "--env GITHUB_TOKEN", "hermes config set GITHUB_TOKEN VALUE")
    refused(hermes("mcp", "add", "gh"), "give the server's command after --")
    refused(hermes("mcp", "add", "gh", "--url", "https://x.example", "--", "cmd"),
            "give the server's command after --")
    refused(hermes("mcp", "add", "bad name", "--", "cmd"), "'bad name' is not a server name")
    refused(hermes("mcp", "add", "gh", "--url", "ftp://gh.example"),
            "mcp_servers.gh.url: not an http:// or https:// URL")
    refused(hermes("mcp", "add", "docs", "--url", "https://other.example"),
            "MCP server docs already exists", "--force")
    refused(hermes("mcp", "remove", "dosc"), "no MCP server 'dosc'", 'did you mean "docs"')
    refused(hermes("mcp", "test", "nope"), "no MCP server 'nope'", "hermes mcp add nope")
    assert (root / "config.yaml").read_text() == before
    ok(hermes("mcp", "add", "docs", "--force", "--url", "https://other.example/mcp"))
    assert profile_config(root)["mcp_servers"]["docs"] == {"url": "https://other.example/mcp"}


def test_a_server_that_cannot_start_fails_the_test_in_one_line(hermes, root: Path) -> None:
    ok(hermes("mcp", "add", "broken", "--connect-timeout", "5", "--", "/nonexistent/server"))
    result = hermes("mcp", "test", "broken")
    assert result.exit_code == 1
    assert result.stderr == "error: MCP server broken (/nonexistent/server) failed: " \
                            "FileNotFoundError: [Errno 2] No such file or directory: " \
                            "'/nonexistent/server'\n"


def test_schema_errors_name_the_key(hermes, root: Path) -> None:
    root.mkdir(parents=True)
    (root / "config.yaml").write_text(
        "mcp_servers:\n  both:\n    command: x\n    url: https://x.example\n")
    refused(hermes("mcp", "list"), "mcp_servers.both", "not both or neither")
    (root / "config.yaml").write_text("mcp_servers:\n  x:\n    command: y\n    timeot: 3\n")
    refused(hermes("mcp", "list"), "mcp_servers.x.timeot")


PROBE = """
import sys
from hermes.cli.main import run
for argv in {commands!r}:
    try:
        run(argv)
    except SystemExit as exc:
        assert not exc.code, (argv, exc.code)
    loaded = sorted(m for m in ("mcp", "mcp_types", "httpx2") if m in sys.modules)
    assert not loaded, (argv, loaded)
print("lazy")
"""


def test_commands_that_do_not_use_mcp_never_import_it(environ, root: Path) -> None:
    """Even with a server configured: management commands (and `mcp list`, `mcp add`)
    leave the SDK unloaded; only a runtime with servers, `mcp test` and `mcp serve` load
    it."""
    import subprocess

    root.mkdir(parents=True)
    (root / "config.yaml").write_text(f"mcp_servers:\n  sample:\n    command: {sys.executable}"
                                      f"\n    args: [{SAMPLE}]\n")
    commands = [["profile", "list"], ["sessions", "list"], ["config", "show"],
                ["mcp", "list"], ["mcp", "add", "other", "--", "other-server"],
                ["mcp", "remove", "other"]]
    proc = subprocess.run([sys.executable, "-c", PROBE.format(commands=commands)],
                          env=environ, capture_output=True, text=True, timeout=300)
    assert proc.stdout.strip().endswith("lazy"), proc.stderr[-3000:]
