"""Write tools refuse credential files, other profiles' homes and this profile's runtime
config, judged on the resolved path (symlinks and ``..`` followed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.home import home_for
from hermes.tools.context import ToolContext
from hermes.tools.paths import check_writable, resolve_path
from test_tools_support import call, make_context, make_registry, other_home


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return make_context(tmp_path)


def write(ctx: ToolContext, path: str | Path, content: str = "x") -> dict[str, object]:
    return call(make_registry(["file"]), ctx, "write_file", {"path": str(path),
                                                             "content": content})


def patch(ctx: ToolContext, path: str | Path) -> dict[str, object]:
    return call(make_registry(["file"]), ctx, "patch", {"path": str(path), "old_string": "a",
                                                        "new_string": "b"})


@pytest.mark.parametrize("relative", [
    ".ssh/authorized_keys", ".ssh/config", ".aws/credentials", ".gnupg/pubring.kbx", ".netrc",
    ".docker/config.json", ".kube/config", ".config/gcloud/credentials.db", ".git-credentials",
])
def test_credential_paths_are_refused(ctx: ToolContext, relative: str) -> None:
    target = ctx.user_home / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("a")
    for result in (write(ctx, target), write(ctx, f"~/{relative}"), patch(ctx, target)):
        assert "is a credential file" in str(result["error"])
    assert target.read_text() == "a"


def test_symlinks_and_dotdot_cannot_sneak_past(ctx: ToolContext) -> None:
    ssh = ctx.user_home / ".ssh"
    ssh.mkdir()
    (ssh / "authorized_keys").write_text("a")
    (ctx.cwd / "innocent.txt").symlink_to(ssh / "authorized_keys")
    (ctx.cwd / "dir").symlink_to(ssh)
    attempts = ["innocent.txt", "dir/authorized_keys", "dir/new_key",
                f"{ctx.cwd}/../user/.ssh/authorized_keys"]
    for attempt in attempts:
        assert "credential file" in str(write(ctx, attempt)["error"]), attempt
    assert "credential file" in str(patch(ctx, "innocent.txt")["error"])
    assert (ssh / "authorized_keys").read_text() == "a" and not (ssh / "new_key").exists()


def test_other_profiles_are_refused(ctx: ToolContext) -> None:
    other = other_home(ctx, "personal")
    (other.path / "notes.md").write_text("a")
    for target in (other.env_file, other.path / "notes.md", other.path / "memories/new.md",
                   ctx.home.path / "../personal/.env"):
        assert 'belongs to profile "personal"' in str(write(ctx, target)["error"]), target
    assert 'belongs to profile "personal"' in str(patch(ctx, other.path / "notes.md")["error"])
    reading = call(make_registry(["file"]), ctx, "read_file", {"path": str(other.env_file)})
    assert "cannot read another's files" in str(reading["error"])
    (ctx.cwd / "shortcut").symlink_to(other.path)
    assert "belongs to profile" in str(write(ctx, "shortcut/SOUL.md")["error"])


def test_the_root_belongs_to_the_default_profile(ctx: ToolContext) -> None:
    root = ctx.home.root
    for target in (root / ".env", root / "config.yaml", root / "memories/MEMORY.md",
                   root / "profiles/.tombstones/x"):
        assert "belongs to" in str(write(ctx, target)["error"]), target
    assert "active profile" in str(write(ctx, root / "active_profile")["error"])


def test_the_default_profile_cannot_touch_named_profiles(tmp_path: Path) -> None:
    ctx = make_context(tmp_path, profile="default")
    other_home(ctx, "work")
    work_env = ctx.home.root / "profiles/work/.env"
    assert 'belongs to profile "work"' in str(write(ctx, work_env)["error"])
    assert write(ctx, ctx.home.path / "memories/MEMORY.md")["created"]


def test_this_homes_runtime_config_is_refused(ctx: ToolContext) -> None:
    home = ctx.home
    for target in (home.env_file, home.config_file, home.conf_dir / "provider/mine.yaml",
                   home.path / "approvals.json"):
        assert "runtime configuration" in str(write(ctx, target)["error"]), target
    assert write(ctx, home.path / "memories/MEMORY.md")["created"]  # the rest of the home is fine


def test_this_homes_skills_are_left_to_skill_manage(ctx: ToolContext) -> None:
    """A skill written by a file tool would skip skill_manage's scan and provenance."""
    skills = ctx.home.skills_dir
    for target in (skills / "demo/SKILL.md", skills / "demo/scripts/run.sh", skills):
        assert "skill_manage" in str(write(ctx, target)["error"]), target
    assert not (skills / "demo").exists()


def test_ordinary_paths_are_fine(ctx: ToolContext, tmp_path: Path) -> None:
    assert write(ctx, "src/app.py")["created"]
    assert write(ctx, tmp_path / "elsewhere.txt")["created"]
    assert write(ctx, ctx.user_home / ".sshrc")["created"]  # a sibling name, not ~/.ssh
    assert write(ctx, ctx.user_home / ".config/other/settings.json")["created"]


def test_check_writable_directly(tmp_path: Path) -> None:
    home = home_for(tmp_path / "root", "work")
    user = tmp_path / "user"
    check_writable(resolve_path("project/x", tmp_path), home, user)
    with pytest.raises(Exception, match="credential file"):
        check_writable(resolve_path("~/.aws", tmp_path, user), home, user)
    with pytest.raises(Exception, match="path is empty"):
        resolve_path("  ", tmp_path)
