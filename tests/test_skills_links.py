"""A symbolic link never leads out of its skill's directory (issue 25, point 9): not when
the model views a skill (``skill_view`` in a one-shot against the fake LLM, skills of the
home and of ``skills.directories``), not in ``skill_manage``'s writes, not in listings,
and not in ``hermes skills install`` / ``update`` (no copy, no diff of what it points
at). Links that stay inside the skill keep working. And a corrupt ``skills/.lock.json``
is refused, never rewritten (point 18)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from conftest import ok, refused, write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall
from nobody_support import nobody_prefix
from test_skills_cli import git
from test_skills_store import put, skill_md

NETRC = "machine example.com login me password hunter2-netrc-secret\n"
ENV_VALUE = "sk-live-envfile-secret-value"
KEY_BODY = "private-key-body-secret"


def secrets(user_home: Path) -> Path:
    """The user's ``~/.netrc``, ``~/project/.env`` and ``~/.ssh/id_test``."""
    put(user_home, ".netrc", NETRC)
    put(user_home, "project/.env", f"OPENAI_API_KEY={ENV_VALUE}\n")
    put(user_home, ".ssh/id_test", f"-----BEGIN KEY-----\n{KEY_BODY}\n-----END KEY-----\n")
    return user_home


@pytest.fixture(name="secrets")
def secrets_fixture(user_home: Path) -> Path:
    return secrets(user_home)


def linked_skill(directory: Path, name: str, user_home: Path) -> Path:
    """A skill with links out (absolute, ``..``, a link to a link, a linked directory)
    and links that stay inside (to a file, to a directory, through ``..`` back in)."""
    skill = directory / name
    put(skill, "SKILL.md", skill_md(name, "Talks to the example API"))
    put(skill, "references/api.md", "Call the API with the token.\n")
    (skill / "references" / "creds.md").symlink_to(user_home / ".netrc")
    (skill / "references" / "up.md").symlink_to(os.path.relpath(user_home / ".netrc",
                                                                skill / "references"))
    (skill / "references" / "hop.md").symlink_to("creds.md")  # a link to a link out
    (skill / "assets").symlink_to(user_home, target_is_directory=True)
    (skill / "references" / "alias.md").symlink_to("api.md")
    (skill / "references" / "back.md").symlink_to(f"../../{name}/references/api.md")
    (skill / "docs").symlink_to("references", target_is_directory=True)
    return skill


@pytest.fixture
def base() -> Iterator[Path]:
    """A directory an ordinary user may be given (pytest's are root's, 0700)."""
    path = Path(tempfile.mkdtemp(prefix="hermes-links-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def oneshot(base: Path, environ: dict[str, str], user: str, *args: str
            ) -> subprocess.CompletedProcess[str]:
    """``hermes ARGS`` in a subprocess, as root or (everything under ``base`` given to
    it) as ``nobody``."""
    prefix: list[str] = []
    if user == "nobody":
        for path in [base, *base.rglob("*")]:
            os.lchown(path, 65534, 65534)
        prefix = nobody_prefix()
    return subprocess.run([*prefix, sys.executable, "-m", "hermes", *args], env=environ,
                          capture_output=True, text=True, timeout=120, cwd=base)


@pytest.mark.skipif(os.geteuid() != 0, reason="runs as root and as nobody")
@pytest.mark.parametrize("user", ["root", "nobody"])
def test_skill_view_refuses_links_out_and_the_secret_never_reaches_the_model(
        base: Path, user: str) -> None:
    user_home = base / "user"
    root = user_home / ".hermes"
    secrets(user_home)
    linked_skill(root / "skills", "net-helper", user_home)
    team = base / "team"  # skills.directories names it through a link
    linked_skill(team, "team-helper", user_home)
    (base / "team-link").symlink_to(team, target_is_directory=True)
    outside = put(base, "elsewhere/SKILL.md", skill_md("sneaky", NETRC.strip()))
    (root / "skills" / "sneaky").mkdir(parents=True)
    (root / "skills" / "sneaky" / "SKILL.md").symlink_to(outside)
    out = ("references/creds.md", "references/up.md", "references/hop.md", "assets/.netrc")
    inside = ("references/alias.md", "references/back.md", "docs/api.md")
    environ = {"HOME": str(user_home), "PATH": os.environ["PATH"], "LANG": "C.UTF-8",
               "HERMES_NO_DAEMON": "1"}
    with FakeLLM() as llm:
        write_fake_provider(root, llm.openai_base_url)
        config = yaml.safe_load((root / "config.yaml").read_text())
        config["skills"] = {"directories": [str(base / "team-link")]}
        (root / "config.yaml").write_text(yaml.safe_dump(config))
        calls = [ToolCall("skill_view", {"name": skill, "file": file})
                 for skill in ("net-helper", "team-helper") for file in (*out, *inside)]
        llm.push(Reply(tool_calls=calls),
                 Reply(tool_calls=[ToolCall("skill_view", {"name": "net-helper"}),
                                   ToolCall("skill_view", {"name": "sneaky"}),
                                   ToolCall("skill_manage", {
                                       "action": "patch", "name": "net-helper",
                                       "file_path": "references/creds.md",
                                       "old_string": "password", "new_string": "pw"}),
                                   ToolCall("skill_manage", {
                                       "action": "write_file", "name": "net-helper",
                                       "file_path": "assets/planted.md",
                                       "file_content": "x"})]),
                 Reply(text="done"))
        proc = oneshot(base, environ, user, "-z", "log in to the example API")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "done\n"
        views = [json.loads(str(r.content)) for r in llm.requests[1].tool_results]
        whole, sneaky, patch, planted = (json.loads(str(r.content))
                                         for r in llm.requests[2].tool_results[-4:])
        sent = b"".join(request.raw_body for request in llm.requests)
    for view, file in zip(views, [*out, *inside] * 2, strict=True):
        if file in out:
            assert "symbolic link" in view["error"] and "outside" in view["error"], view
        else:
            assert view["content"] == "Call the API with the token.\n", (file, view)
    assert "references/creds.md" not in whole["files"] and "references/api.md" in whole["files"]
    assert "references/alias.md" in whole["files"]
    assert 'no skill "sneaky"' in sneaky["error"]
    assert "symbolic link" in patch["error"]
    assert "symbolic link" in planted["error"] and not (user_home / "planted.md").exists()
    assert b"hunter2" not in sent
    assert (user_home / ".netrc").read_text() == NETRC
    assert "sneaky/SKILL.md: file: a symbolic link leading outside the skill" in proc.stderr


def test_skills_show_and_list_keep_to_the_skill(hermes, root: Path, user_home: Path,
                                                 secrets: Path) -> None:
    linked_skill(root / "skills", "net-helper", user_home)
    shown = ok(hermes("skills", "show", "net-helper"))
    assert "references/alias.md" in shown and "references/creds.md" not in shown
    refused(hermes("skills", "show", "net-helper", "references/up.md"), "symbolic link",
            "outside the skill")
    assert ok(hermes("skills", "show", "net-helper", "docs/api.md")) == \
        "Call the API with the token.\n"


@pytest.fixture
def linked_repo(tmp_path: Path, user_home: Path, secrets: Path) -> Path:
    """A git repository of one skill with a link inside it and one out of it."""
    repo = tmp_path / "repo"
    put(repo, "linky/SKILL.md", skill_md("linky", "Uses a key"))
    put(repo, "linky/references/notes.md", "Notes.\n")
    (repo / "linky" / "references" / "alias.md").symlink_to("notes.md")
    (repo / "linky" / "references" / "key.md").symlink_to(user_home / ".ssh" / "id_test")
    git("init", "-q", cwd=repo)
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "first", cwd=repo)
    return repo


def test_install_and_update_never_copy_or_show_a_link_out(hermes, root: Path, user_home: Path,
                                                          linked_repo: Path) -> None:
    url = f"file://{linked_repo}"
    result = hermes("skills", "install", url, "--yes")
    refused(result, "the scan found problems in linky", "--force")
    assert "references/key.md: symlink: leads outside the skill; not copied" in result.stdout
    ok(hermes("skills", "install", url, "--yes", "--force"))
    installed = root / "skills" / "linky"
    refs = installed / "references"
    assert not refs.joinpath("key.md").exists() and not refs.joinpath("key.md").is_symlink()
    assert (refs / "alias.md").read_text() == "Notes.\n"  # the link inside still works
    skill = linked_repo / "linky"
    (skill / "references" / "env.md").symlink_to(user_home / "project" / ".env")
    (skill / "references" / "notes.md").write_text("Notes, revised.\n")
    (skill / "references" / "alias.md").unlink()
    (skill / "references" / "alias.md").symlink_to("../SKILL.md")
    git("add", ".", cwd=linked_repo)
    git("commit", "-q", "-m", "more links", cwd=linked_repo)
    update = ok(hermes("skills", "update", "--yes", "--force"))
    assert ENV_VALUE not in update and KEY_BODY not in update
    assert "references/env.md: symbolic link leading outside the skill (not copied)" in update
    assert "+references/alias.md → ../SKILL.md" in update, update
    assert "+Notes, revised." in update and "updated linky" in update
    assert not (refs / "env.md").is_symlink() and not (refs / "key.md").is_symlink()
    assert (refs / "alias.md").read_text().startswith("---\nname: linky")
    listing = ok(hermes("skills", "show", "linky"))
    assert "env.md" not in listing and "key.md" not in listing


def test_a_corrupt_lock_is_refused_and_never_rewritten(hermes, root: Path, tmp_path: Path
                                                       ) -> None:
    source = tmp_path / "hello"
    put(source, "SKILL.md", skill_md("hello", "Greets"))
    lock = root / "skills" / ".lock.json"
    for corrupt in (b'{"format": 1, "skills": {"other": {"source": "x"', b'["a list"]\n',
                    b'{"format": 1, "skills": {"other": {"source": "/x"}}}\n'):
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.write_bytes(corrupt)
        for args in (("install", str(source), "--yes"), ("update", "--yes"),
                     ("install", str(source), "--yes", "--force")):
            refused(hermes("skills", *args), str(lock), "not a valid lock file")
            assert lock.read_bytes() == corrupt
            assert not (root / "skills" / "hello").exists()
    listing = hermes("skills", "list")
    assert listing.exit_code == 0 and f"warning: {lock}: not a valid lock file" in \
        listing.stderr

