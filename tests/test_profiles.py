"""Every `hermes profile` command, including its refusals, through the real CLI."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import tarfile
from pathlib import Path

import pytest

from conftest import ok, refused


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def tree(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")} if path.exists() else set()




def test_create_from_example_and_list(hermes, root: Path) -> None:
    out = ok(hermes("profile", "create", "work", "--from", "coder", "-d", "day job"))
    home = root / "profiles" / "work"
    assert str(home) in out
    assert "override toolsets: coding" in (home / "config.yaml").read_text()
    assert (home / "SOUL.md").read_text().startswith("You are a pragmatic")
    assert mode(home / ".env") == 0o600
    assert mode(home) == 0o700
    assert {"memories", "skills", "logs"} <= tree(home)
    listing = ok(hermes("profile", "list"))
    rows = {line.split()[1] if line.startswith("*") else line.split()[0]: line
            for line in listing.splitlines()[1:]}
    assert rows["default"].startswith("*")
    assert "openai" in rows["work"] and "gpt-4o" in rows["work"] and "day job" in rows["work"]
    # the staging directory is gone
    assert [p.name for p in (root / "profiles").iterdir() if p.name.startswith(".staging")] == []


def test_create_from_profile_extends_it(hermes, root: Path) -> None:
    ok(hermes("profile", "create", "base", "--from", "researcher"))
    ok(hermes("-p", "base", "config", "set", "provider.model", "base-model"))
    ok(hermes("profile", "create", "child", "--from", "base"))
    assert "extends: base" in (root / "profiles" / "child" / "config.yaml").read_text()
    assert ok(hermes("-p", "child", "config", "get", "provider.model")).strip() == "base-model"
    assert ok(hermes("-p", "child", "config", "get", "toolsets.name")).strip() == "research"


def test_clone_copies_config_secrets_soul_skills_memories_not_history(hermes, root: Path) -> None:
    ok(hermes("profile", "create", "src", "--from", "coder"))
    src = root / "profiles" / "src"
    ok(hermes("-p", "src", "config", "set", "OPENAI_API_KEY", "sk-test-clone-123456"))
    (src / "skills" / "deploy").mkdir()
    (src / "skills" / "deploy" / "SKILL.md").write_text("# Deploy\n")
    (src / "memories" / "MEMORY.md").write_text("user likes tea\n")
    for item in ("state.db", "cron/jobs.json", "logs/agent.log", "notes.txt"):
        (src / item).parent.mkdir(exist_ok=True)
        (src / item).write_text("x")

    ok(hermes("profile", "create", "copy", "--from", "src", "--clone"))
    copy = root / "profiles" / "copy"
    assert (copy / ".env").read_text() == (src / ".env").read_text()
    assert mode(copy / ".env") == 0o600
    assert (copy / "skills" / "deploy" / "SKILL.md").exists()
    assert (copy / "memories" / "MEMORY.md").read_text() == "user likes tea\n"
    assert not (copy / "notes.txt").exists() and not (copy / "state.db").exists()

    ok(hermes("profile", "create", "full", "--from", "src", "--clone-all"))
    full = root / "profiles" / "full"
    assert (full / "notes.txt").exists() and (full / "skills" / "deploy").is_dir()
    for history in ("state.db", "cron", "logs/agent.log"):
        assert not (full / history).exists(), history
    assert '"name": "full"' in (full / "profile.json").read_text()


def test_clone_without_from_uses_the_active_profile(hermes, root: Path) -> None:
    ok(hermes("profile", "create", "a"))
    ok(hermes("-p", "a", "config", "set", "agent.max_iterations", "7"))
    ok(hermes("profile", "switch", "a"))
    ok(hermes("profile", "create", "b", "--clone"))
    assert ok(hermes("-p", "b", "config", "get", "agent.max_iterations")).strip() == "7"


@pytest.mark.parametrize(("args", "fragment"), [
    (["../evil"], "invalid profile name"),
    (["a/b"], "invalid profile name"),
    (["Work"], "invalid profile name"),
    (["default"], "reserved"),
    (["hermes"], "reserved"),
    (["x", "--from", "codr"], 'did you mean "coder"'),
    (["x", "--from", "coder", "--clone"], "is an example"),
    (["x", "--clone", "--clone-all"], "exclusive"),
])
def test_create_refusals_touch_nothing(hermes, root: Path, args, fragment) -> None:
    before = tree(root)
    refused(hermes("profile", "create", *args), fragment)
    assert tree(root) - before <= {"profiles", "profiles/.lock"}
    assert not (root.parent / "evil").exists()


def test_create_refuses_existing(hermes, root: Path) -> None:
    ok(hermes("profile", "create", "work"))
    (root / "profiles" / "work" / "keep.txt").write_text("mine")
    refused(hermes("profile", "create", "work", "--from", "coder"), "already exists")
    assert (root / "profiles" / "work" / "keep.txt").read_text() == "mine"


def test_switch_is_sticky_and_default_clears_it(hermes, hermes_subprocess, root: Path) -> None:
    ok(hermes("profile", "create", "work"))
    ok(hermes("profile", "use", "work"))
    assert (root / "active_profile").read_text().strip() == "work"
    # a new process (a new shell) sees it
    proc = hermes_subprocess("profile", "path")
    assert proc.returncode == 0 and proc.stdout.strip() == str(root / "profiles" / "work")
    assert "*  work" in ok(hermes("profile", "list")).replace("   ", "  ")
    ok(hermes("profile", "switch", "default"))
    assert not (root / "active_profile").exists()
    assert ok(hermes("profile", "path")).strip() == str(root)
    refused(hermes("profile", "switch", "wrok"), 'no profile named "wrok"')


def test_show(hermes, root: Path) -> None:
    ok(hermes("profile", "create", "work", "--from", "ops", "-d", "ops box"))
    ok(hermes("-p", "work", "config", "set", "ANTHROPIC_API_KEY", "sk-ant-secret-value-1"))
    shown = ok(hermes("profile", "show", "work"))
    assert "ops box" in shown and str(root / "profiles" / "work") in shown
    assert "ANTHROPIC_API_KEY" in shown and "sk-ant-secret-value-1" not in shown
    assert ok(hermes("-p", "work", "profile", "show")).startswith("profile      work")


def test_delete_asks_for_the_name_and_leaves_a_tombstone(hermes, root: Path) -> None:
    ok(hermes("profile", "create", "work"))
    ok(hermes("profile", "switch", "work"))
    home = root / "profiles" / "work"
    refused(hermes("profile", "delete", "work", input="nope\n"), "did not match")
    assert home.is_dir()
    out = ok(hermes("profile", "delete", "work", input="work\n"))
    assert "active profile reset to default" in out
    assert not home.exists() and (root / "profiles" / ".tombstones" / "work").exists()
    assert not (root / "active_profile").exists()
    # nothing silently recreates it
    refused(hermes("-p", "work", "config", "set", "agent.max_iterations", "3"), "was deleted")
    refused(hermes("-p", "work", "doctor"), "was deleted")
    assert not home.exists()
    # an explicit create does, and clears the tombstone
    ok(hermes("profile", "create", "work"))
    assert not (root / "profiles" / ".tombstones" / "work").exists()


def test_delete_refusals(hermes, root: Path) -> None:
    refused(hermes("profile", "delete", "default", "-y"), "cannot be deleted")
    refused(hermes("profile", "delete", "ghost", "-y"), 'no profile named "ghost"')
    assert root.exists() is False or tree(root) <= {"profiles", "profiles/.lock"}


def test_delete_stops_only_the_gateway_it_owns(hermes, root: Path, environ) -> None:
    ok(hermes("profile", "create", "work"))
    home = root / "profiles" / "work"
    foreign = subprocess.Popen(["sleep", "60"], env=environ | {"HERMES_HOME": "/elsewhere"})
    other = root / "profiles" / "other"
    # a process that only claims this profile's pid file, and one that really is its gateway
    owned = subprocess.Popen(["sleep", "60"], env=environ | {"HERMES_HOME": str(other)})
    try:
        (home / "gateway.pid").write_text(str(foreign.pid))
        ok(hermes("profile", "create", "other"))
        (other / "gateway.pid").write_text(str(owned.pid))
        out = ok(hermes("profile", "delete", "work", "-y"))
        assert "stopped" not in out and foreign.poll() is None
        out = ok(hermes("profile", "delete", "other", "-y"))
        assert f"stopped gateway (pid {owned.pid})" in out
        assert owned.wait(timeout=10) != 0
    finally:
        foreign.kill()
        owned.kill()
        foreign.wait()
        owned.wait()


def test_rename(hermes, root: Path) -> None:
    ok(hermes("profile", "create", "old", "--from", "coder"))
    ok(hermes("profile", "create", "taken"))
    ok(hermes("profile", "switch", "old"))
    refused(hermes("profile", "rename", "old", "taken"), "already exists")
    refused(hermes("profile", "rename", "default", "x"), "cannot be renamed")
    refused(hermes("profile", "rename", "old", "../x"), "invalid profile name")
    ok(hermes("profile", "rename", "old", "new"))
    assert not (root / "profiles" / "old").exists()
    assert (root / "active_profile").read_text().strip() == "new"
    assert ok(hermes("config", "get", "toolsets.name")).strip() == "coding"


def test_export_excludes_env_and_redacts_secrets(hermes, root: Path, tmp_path: Path) -> None:
    ok(hermes("profile", "create", "work", "--from", "coder"))
    home = root / "profiles" / "work"
    ok(hermes("-p", "work", "config", "set", "OPENAI_API_KEY", "sk-live-abcdef123456"))
    with (home / "config.yaml").open("a") as f:
        f.write("provider:\n  api_key: sk-literal-in-config-999  # oops\n")
    archive = tmp_path / "work.tar.gz"
    ok(hermes("profile", "export", "work", "-o", str(archive)))
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        config = tar.extractfile("work/config.yaml").read().decode()
        blob = b"".join(tar.extractfile(m).read() for m in tar.getmembers() if m.isfile())
    assert "work/.env" not in names and "work/config.yaml" in names
    assert b"sk-live-abcdef123456" not in blob and b"sk-literal-in-config-999" not in blob
    assert "api_key: <redacted>" in config and "# oops" in config
    refused(hermes("profile", "export", "work", "-o", str(archive)), "already exists")


def test_import_round_trip_and_refusals(hermes, root: Path, tmp_path: Path) -> None:
    ok(hermes("profile", "create", "work", "--from", "researcher", "-d", "research"))
    archive = tmp_path / "work.tar.gz"
    ok(hermes("profile", "export", "work", "-o", str(archive)))
    refused(hermes("profile", "import", str(archive)), "already exists")
    ok(hermes("profile", "import", str(archive), "--name", "copy"))
    copy = root / "profiles" / "copy"
    assert mode(copy / ".env") == 0o600 and (copy / ".env").read_text() == ""
    assert ok(hermes("-p", "copy", "config", "get", "toolsets.name")).strip() == "research"
    refused(hermes("profile", "import", str(tmp_path / "missing.tar.gz")), "no such file")


def test_import_refuses_path_traversal(hermes, root: Path, tmp_path: Path) -> None:
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        data = b"pwned"
        for name in ("evil/config.yaml", "evil/../../escaped.txt"):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    result = hermes("profile", "import", str(evil))
    assert result.exit_code == 2
    assert not (root / "profiles" / "evil").exists()
    assert not list(tmp_path.rglob("escaped.txt")) and not list(root.rglob("escaped.txt"))


def test_alias_writes_a_wrapper(hermes, root: Path, tmp_path: Path, environ) -> None:
    ok(hermes("profile", "create", "work"))
    bin_dir = tmp_path / "bin"
    ok(hermes("profile", "alias", "work", "--bin-dir", str(bin_dir)))
    script = bin_dir / "work"
    command = script.read_text().splitlines()[-1]
    assert command.startswith("exec /") and command.endswith(' -p work "$@"')
    assert os.access(script, os.X_OK)
    # the wrapper runs this installation's hermes by its path: no hermes on PATH needed
    bare = environ | {"PATH": "/usr/bin:/bin"}
    assert subprocess.run(["sh", "-c", "command -v hermes"], env=bare).returncode != 0
    run = subprocess.run([str(script), "profile", "path"], capture_output=True, text=True,
                         env=bare, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(root / "profiles" / "work")
    (bin_dir / "mine").write_text("#!/bin/sh\necho mine\n")
    refused(hermes("profile", "alias", "work", "--bin-dir", str(bin_dir), "--as", "mine"),
            "not a hermes alias")
    assert (bin_dir / "mine").read_text() == "#!/bin/sh\necho mine\n"
    out = ok(hermes("profile", "delete", "work", "-y"))
    assert f"removed alias {script}" in out and not script.exists()


def test_path(hermes, root: Path) -> None:
    assert ok(hermes("profile", "path")).strip() == str(root)
    ok(hermes("profile", "create", "work"))
    assert ok(hermes("profile", "path", "work")).strip() == str(root / "profiles" / "work")
    assert ok(hermes("-p", "work", "profile", "path")).strip() == str(root / "profiles" / "work")


def test_rename_repoints_profiles_that_extend_it_and_its_aliases(hermes, root: Path,
                                                                  tmp_path: Path) -> None:
    ok(hermes("profile", "create", "work", "--from", "coder"))
    ok(hermes("profile", "create", "scratch", "--from", "work"))
    scratch = root / "profiles" / "scratch" / "config.yaml"
    scratch.write_text(scratch.read_text() + "agent:  # mine\n  max_iterations: 7  # seven\n")
    before = scratch.read_text()
    bin_dir = tmp_path / "bin"
    ok(hermes("profile", "alias", "work", "--bin-dir", str(bin_dir)))
    out = ok(hermes("profile", "rename", "work", "job"))
    assert f"scratch now extends job ({scratch})" in out
    assert f"alias {bin_dir / 'work'} now runs hermes -p job" in out
    assert scratch.read_text() == before.replace("extends: work", "extends: job")
    assert ok(hermes("-p", "scratch", "config", "get", "toolsets.name")).strip() == "coding"
    assert " -p job " in (bin_dir / "work").read_text()
    # a new "work" does not silently take over scratch
    ok(hermes("profile", "create", "work"))
    assert "extends: job" in scratch.read_text()
    assert ok(hermes("-p", "scratch", "config", "get", "toolsets.name")).strip() == "coding"


def test_rename_is_all_or_nothing(hermes, root: Path, tmp_path: Path) -> None:
    ok(hermes("profile", "create", "work", "--from", "coder"))
    ok(hermes("profile", "create", "scratch", "--from", "work"))
    ok(hermes("profile", "alias", "work", "--bin-dir", str(tmp_path / "bin")))
    # a profile whose directory lives inside "work": it cannot be written once work moves
    inner = root / "profiles" / "work" / "inner"
    inner.mkdir()
    (inner / "config.yaml").write_text("extends: work  # inside\n")
    (root / "profiles" / "nested").symlink_to(inner)
    files = {p: p.read_bytes() for p in [*root.rglob("*"), tmp_path / "bin" / "work"]
             if p.is_file()}
    refused(hermes("profile", "rename", "work", "job"), "profile work: cannot rename to job",
            str(root / "profiles" / "nested"), "nothing was changed")
    assert not (root / "profiles" / "job").exists()
    assert {p: p.read_bytes() for p in files if p.is_file()} == files
    assert ok(hermes("-p", "scratch", "config", "get", "toolsets.name")).strip() == "coding"


def test_delete_refuses_while_other_profiles_extend_it(hermes, root: Path) -> None:
    ok(hermes("profile", "create", "work", "--from", "coder"))
    ok(hermes("profile", "create", "scratch", "--from", "work"))
    ok(hermes("profile", "create", "lab", "--from", "work"))
    refused(hermes("profile", "delete", "work", "-y"), "profile work: extended by lab, scratch",
            "--force")
    refused(hermes("profile", "delete", "work"), "extended by lab, scratch")  # before asking
    assert (root / "profiles" / "work").is_dir()
    result = hermes("profile", "delete", "work", "-y", "--force")
    assert result.exit_code == 0, result.stderr
    assert 'warning: scratch extends "work"' in result.stderr
    assert 'warning: lab extends "work"' in result.stderr
    assert not (root / "profiles" / "work").exists()
    result = hermes("profile", "create", "work")
    assert result.exit_code == 0
    assert "note: scratch extends work: it now builds on this new profile" in result.stderr


def test_import_drops_redacted_placeholders_and_names_the_secrets(hermes, root: Path,
                                                                   tmp_path: Path) -> None:
    ok(hermes("profile", "create", "work", "--from", "coder"))
    ok(hermes("-p", "work", "config", "set", "OPENAI_API_KEY", "sk-live-abcdef123456"))
    with (root / "profiles" / "work" / "config.yaml").open("a") as f:
        f.write("provider:\n  # the key, by hand\n  api_key: sk-literal-999  # oops\n"
                "  timeout: 30  # keep me\n")
    archive = tmp_path / "work.tar.gz"
    ok(hermes("profile", "export", "work", "-o", str(archive)))
    out = ok(hermes("profile", "import", str(archive), "--name", "copy"))
    assert "removed provider.api_key: <redacted> from config.yaml" in out
    assert "set its secret: `hermes -p copy config set OPENAI_API_KEY …`" in out
    config = (root / "profiles" / "copy" / "config.yaml").read_text()
    assert "<redacted>" not in config and "api_key" not in config
    assert "  # the key, by hand\n  timeout: 30  # keep me\n" in config
    assert "override toolsets: coding" in config
    ok(hermes("-p", "copy", "config", "validate"))
    ok(hermes("-p", "copy", "config", "set", "OPENAI_API_KEY", "sk-new-abcdef123456"))
    out = ok(hermes("profile", "import", str(archive), "--name", "again",
                    env={"OPENAI_API_KEY": "sk-from-env-123456"}))
    assert "set its secret" not in out


def test_a_redacted_placeholder_is_an_error_everywhere(hermes, root: Path) -> None:
    ok(hermes("profile", "create", "work"))
    home = root / "profiles" / "work"
    with (home / "config.yaml").open("a") as f:
        f.write("provider:\n  api_key: <redacted>\n")
    refused(hermes("-p", "work", "config", "validate"), str(home / "config.yaml"),
            "provider.api_key: <redacted> is a placeholder",
            "`hermes -p work config unset provider.api_key`")
    result = hermes("-p", "work", "doctor")
    assert result.exit_code == 1 and "key present" not in result.stdout
    assert "provider.api_key: <redacted> is a placeholder" in result.stdout
    (home / "config.yaml").write_text("# clean\n")
    (home / ".env").write_text("OPENAI_API_KEY='<redacted>'\n")
    refused(hermes("-p", "work", "config", "validate"), "OPENAI_API_KEY: is <redacted>",
            "`hermes -p work config set OPENAI_API_KEY")


def test_an_alias_made_by_the_console_script_runs_without_hermes_on_path(
        root: Path, tmp_path: Path, environ) -> None:
    import sys

    entry = Path(sys.executable).parent / "hermes"  # the installed console script
    bare = environ | {"PATH": "/usr/bin:/bin"}
    for args in (["profile", "create", "work"], ["profile", "alias", "work", "--bin-dir",
                                                 str(tmp_path / "bin")]):
        subprocess.run([str(entry), *args], env=bare, check=True, capture_output=True,
                       timeout=120)
    script = tmp_path / "bin" / "work"
    assert f"exec {entry.resolve()} -p work" in script.read_text()
    run = subprocess.run([str(script), "profile", "path"], env=bare, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == str(root / "profiles" / "work")
