"""``hermes config edit`` and duplicate keys: a bad edit never replaces the good file,
a repeated key is an error everywhere the profile's config.yaml is read, and an
editor that cannot run is one line with nothing left behind."""

from __future__ import annotations

import sys
from pathlib import Path

import pexpect
import pytest

from conftest import ok, refused

GOOD = "# mine\nagent:\n  max_iterations: 50\ndisplay:\n  spinner: false\n"
DUPLICATE = GOOD + "agent:\n  personality: terse\n"  # a second `agent:` block on line 6


def files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and ".cache" not in p.parts}


@pytest.fixture
def config(root: Path) -> Path:
    root.mkdir(mode=0o700)
    path = root / "config.yaml"
    path.write_text(GOOD)
    return path


@pytest.fixture
def tmpdir_env(tmp_path: Path) -> dict[str, str]:
    """``TMPDIR`` for the command: an empty directory the test can inspect."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return {"TMPDIR": str(tmp)}


@pytest.fixture
def editor(tmp_path: Path) -> dict[str, str]:
    """$EDITOR: a script writing the texts of ``edits/1``, ``edits/2``, ... one per run."""
    edits = tmp_path / "edits"
    edits.mkdir()
    script = tmp_path / "editor.py"
    script.write_text(
        "import pathlib, sys\n"
        f"edits = pathlib.Path({str(edits)!r})\n"
        "runs = edits / 'runs'\n"
        "n = int(runs.read_text()) + 1 if runs.exists() else 1\n"
        "runs.write_text(str(n))\n"
        "pathlib.Path(sys.argv[1]).write_text((edits / str(n)).read_text())\n"
    )
    return {"EDITOR": f"{sys.executable} {script}", "EDITS": str(edits)}


def plan(editor: dict[str, str], *texts: str) -> None:
    for number, text in enumerate(texts, 1):
        (Path(editor["EDITS"]) / str(number)).write_text(text)


def runs(editor: dict[str, str]) -> int:
    return int((Path(editor["EDITS"]) / "runs").read_text())


# --- duplicate keys ------------------------------------------------------------------


@pytest.mark.parametrize("command", [["validate"], ["show"], ["get", "agent.max_iterations"],
                                     ["set", "agent.max_iterations", "3"],
                                     ["unset", "display.spinner"]])
def test_a_duplicate_top_level_key_is_an_error_naming_the_line(hermes, root: Path,
                                                               config: Path, command) -> None:
    config.write_text(DUPLICATE)
    before = files(root)
    refused(hermes("config", *command), f"{config}:6: agent: duplicate key (first on line 2)",
            "merge the two `agent:` blocks into one")
    assert files(root) == before


@pytest.mark.parametrize("command", [["validate"], ["set", "display.spinner", "true"]])
def test_a_duplicate_nested_key_is_an_error_too(hermes, config: Path, command) -> None:
    config.write_text("agent:\n  max_iterations: 5\n  max_iterations: 6\n")
    refused(hermes("config", *command),
            f"{config}:3: agent.max_iterations: duplicate key (first on line 2)",
            "keep one of the two `max_iterations:` lines")


def test_a_duplicate_key_in_a_system_layer_names_that_file(hermes, tmp_path: Path,
                                                           config: Path) -> None:
    layer = tmp_path / "layer"
    layer.mkdir()
    (layer / "config.yaml").write_text("display:\n  spinner: true\ndisplay:\n  show_cost: false\n")
    refused(hermes("config", "validate", env={"HERMES_CONFIG_LAYERS": str(layer)}),
            f"{layer / 'config.yaml'}:3: display: duplicate key")


# --- edit ----------------------------------------------------------------------------


def test_an_edit_leaving_a_duplicate_key_is_refused(hermes, root: Path, config: Path, editor,
                                                    tmpdir_env) -> None:
    plan(editor, DUPLICATE)
    before = files(root)
    line = refused(hermes("config", "edit", env=editor | tmpdir_env),
                   f"{config}:6: agent: duplicate key", "config.yaml is unchanged")
    assert files(root) == before
    (kept,) = Path(tmpdir_env["TMPDIR"]).iterdir()  # the edit is kept for the user
    assert str(kept) in line and kept.read_text() == DUPLICATE


def test_without_a_terminal_a_failed_edit_is_not_reopened(hermes, config: Path, editor,
                                                          tmpdir_env) -> None:
    plan(editor, DUPLICATE, GOOD.replace("50", "70"))
    refused(hermes("config", "edit", env=editor | tmpdir_env, input="y\n"), "duplicate key")
    assert runs(editor) == 1 and config.read_text() == GOOD


def spawn_edit(environ: dict[str, str], env: dict[str, str]) -> pexpect.spawn:
    return pexpect.spawn(sys.executable, ["-m", "hermes", "config", "edit"],
                         env=environ | env | {"TERM": "dumb"}, encoding="utf-8", timeout=60)


def test_at_a_terminal_a_failed_edit_reopens_the_editor(environ, config: Path, editor,
                                                       tmpdir_env) -> None:
    plan(editor, DUPLICATE, GOOD.replace("50", "70"))
    child = spawn_edit(environ, editor | tmpdir_env)
    child.expect(r"agent: duplicate key \(first on line 2\)")
    child.expect(r"re-open the editor to fix it\? \[Y/n\]")
    child.sendline("y")
    child.expect(f"saved {config}")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert runs(editor) == 2 and config.read_text() == GOOD.replace("50", "70")
    assert not list(Path(tmpdir_env["TMPDIR"]).iterdir())


def test_at_a_terminal_declining_to_reopen_keeps_the_good_file(environ, config: Path, editor,
                                                               tmpdir_env) -> None:
    plan(editor, DUPLICATE)
    child = spawn_edit(environ, editor | tmpdir_env)
    child.expect(r"re-open the editor to fix it\? \[Y/n\]")
    child.sendline("n")
    child.expect("config.yaml is unchanged")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert runs(editor) == 1 and config.read_text() == GOOD


@pytest.mark.parametrize(("variable", "command", "fragment"), [
    ("EDITOR", "nonexistent-editor", 'cannot run "nonexistent-editor" (not found)'),
    ("VISUAL", "nonexistent-editor --wait", 'cannot run "nonexistent-editor" (not found)'),
    ("EDITOR", "'unbalanced", "cannot parse"),
    ("EDITOR", "false", '"false" exited with status 1'),
])
def test_an_editor_that_cannot_run_is_one_line_and_leaves_nothing(
    hermes, user_home: Path, config: Path, tmpdir_env, variable: str, command: str,
    fragment: str,
) -> None:
    before = files(user_home)
    line = refused(hermes("config", "edit", env=tmpdir_env | {variable: command}),
                   f"${variable}: ", fragment)
    if "exited" not in fragment:
        assert f"set ${variable} to an installed editor, e.g. `export {variable}=nano`" in line
    assert files(user_home) == before
    assert not list(Path(tmpdir_env["TMPDIR"]).iterdir())


def test_a_valid_edit_saves_and_leaves_no_temporary_file(hermes, config: Path, editor,
                                                         tmpdir_env) -> None:
    plan(editor, GOOD.replace("50", "70"))
    assert ok(hermes("config", "edit", env=editor | tmpdir_env)) == f"saved {config}\n"
    assert config.read_text() == GOOD.replace("50", "70")
    assert not list(Path(tmpdir_env["TMPDIR"]).iterdir())
