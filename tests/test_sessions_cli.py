"""Every `hermes sessions` command, including its refusals, through the real CLI."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ok, refused
from hermes.sessions import SessionStore, Usage

HEAVY = ("litellm", "docker", "dependency_injector")




@pytest.fixture
def seeded(root: Path) -> dict[str, str]:
    """The default profile's state.db with three sessions (one continuing another)."""
    with SessionStore(root / "state.db") as store:
        trip = store.create_session("telegram", "gpt-4o", session_id="a1b2c3d4e5f6a7b8",
                                    title="Beijing trip")
        store.add_message(trip, "user", "我明天去北京出差")
        store.add_message(trip, "assistant", "Have a good [bold]trip[/bold]!",
                          usage=Usage(120, 30, cost_usd=0.002))
        deploy = store.create_session("cli", "claude", session_id="a1ffff0000000001")
        store.add_message(deploy, "user", "deploy the service")
        store.add_message(deploy, "assistant", "running make deploy",
                          tool_calls=[{"name": "terminal", "arguments": "make deploy"}],
                          usage=Usage(200, 10, cost_usd=None))
        cont = store.create_session("cli", "claude", parent_id=deploy,
                                    session_id="c0ffee0000000002")
        store.add_message(cont, "user", "deploy again after the fix")
    return {"trip": trip, "deploy": deploy, "cont": cont}


def age(root: Path, session_id: str, days: float) -> None:
    with SessionStore(root / "state.db") as store:
        past = time.time() - days * 86400
        store.conn.execute("UPDATE sessions SET started_at = ?, updated_at = ? WHERE id = ?",
                           [past, past, session_id])


def test_list_newest_first_with_filters(hermes, seeded) -> None:
    rows = ok(hermes("sessions", "list")).splitlines()
    assert rows[0].split()[:4] == ["ID", "STARTED", "SOURCE", "MODEL"]
    assert [row.split()[0] for row in rows[1:]] == ["c0ffee000000", "a1ffff000000",
                                                    "a1b2c3d4e5f6"]
    trip = rows[3]
    assert "telegram" in trip and "$0.0020" in trip and "Beijing trip" in trip
    assert "unknown" in rows[2]  # unpriced model: the cost is unknown, not $0
    only = ok(hermes("sessions", "list", "--source", "telegram", "-n", "5")).splitlines()
    assert len(only) == 2 and "Beijing trip" in only[1]
    assert len(ok(hermes("sessions", "list", "--limit", "1")).splitlines()) == 2


def test_a_profile_without_a_database_has_no_sessions_and_gets_none(hermes, root) -> None:
    assert ok(hermes("sessions", "list")).strip() == "no sessions yet"
    assert "no matches" in ok(hermes("sessions", "search", "anything"))
    refused(hermes("sessions", "show", "abc"), "no sessions yet")
    assert "no sessions" in ok(hermes("sessions", "prune", "--older-than", "30d", "-y"))
    assert not (root / "state.db").exists()


def test_show_by_prefix_prints_messages_literally(hermes, seeded) -> None:
    shown = ok(hermes("sessions", "show", "a1b"))
    assert "a1b2c3d4e5f6a7b8" in shown and "Beijing trip" in shown
    assert "我明天去北京出差" in shown
    assert "[bold]trip[/bold]" in shown  # user text is never console markup
    assert "tokens    120 in, 30 out" in shown
    tools = ok(hermes("sessions", "show", "a1f"))
    assert '"arguments": "make deploy"' in tools


def test_unknown_and_ambiguous_ids_are_refused(hermes, seeded) -> None:
    for command in ("show", "export", "delete"):
        refused(hermes("sessions", command, "zzz"), 'no session matches "zzz"')
    refused(hermes("sessions", "rename", "zzz", "title"), "no session matches")
    refused(hermes("sessions", "show", "a1"), "ambiguous", "a1b2c3d4e5f6a7b8",
            "a1ffff0000000001")


def test_search_marks_matches_and_finds_cjk(hermes, seeded) -> None:
    found = ok(hermes("sessions", "search", "deploy"))
    rows = found.splitlines()[1:]
    assert len(rows) == 1 and rows[0].startswith("a1ffff000000")  # one hit per lineage
    assert "deploy the service" in rows[0]  # the better (shorter) match of the two
    cjk = ok(hermes("sessions", "search", "北京"))
    assert "a1b2c3d4e5f6" in cjk and "我明天去北京出差" in cjk
    assert "no matches" in ok(hermes("sessions", "search", '"unbalanced AND ( OR'))
    assert len(ok(hermes("sessions", "search", "deploy OR 北京", "-n", "5")).splitlines()) >= 2
    assert "a1b2" in ok(hermes("sessions", "search", "北京", "--source", "telegram"))
    assert "no matches" in ok(hermes("sessions", "search", "北京", "--source", "cli"))


def test_export_jsonl_to_stdout_and_markdown_to_a_private_file(hermes, seeded, tmp_path
                                                                ) -> None:
    lines = ok(hermes("sessions", "export", "a1b2")).splitlines()
    assert json.loads(lines[0])["id"] == seeded["trip"]
    assert [json.loads(line)["role"] for line in lines[1:]] == ["user", "assistant"]
    target = tmp_path / "out" / "trip.md"
    assert str(target) in ok(hermes("sessions", "export", "a1b2", "--format", "md",
                                    "-o", str(target)))
    assert target.read_text().startswith("# Beijing trip\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    bad = hermes("sessions", "export", "a1b2", "--format", "pdf")
    assert bad.exit_code == 2 and "pdf" in bad.stderr


def test_rename(hermes, seeded, root) -> None:
    assert "'Deploy to prod'" in ok(hermes("sessions", "rename", "a1ff", "Deploy  to prod"))
    with SessionStore(root / "state.db") as store:
        assert store.get_session(seeded["deploy"]).title == "Deploy to prod"
    refused(hermes("sessions", "rename", "a1ff", "   "), "title is empty")


def test_delete_asks_unless_yes(hermes, seeded, root) -> None:
    refused(hermes("sessions", "delete", "a1b2", input="n\n"), "nothing deleted")
    assert "deleted session a1b2c3d4e5f6a7b8 (2 messages)" in ok(
        hermes("sessions", "delete", "a1b2", input="y\n"))
    ok(hermes("sessions", "delete", "a1ff", "-y"))
    remaining = ok(hermes("sessions", "list")).splitlines()[1:]
    assert [row.split()[0] for row in remaining] == ["c0ffee000000"]
    assert "no matches" in ok(hermes("sessions", "search", "北京"))


def test_prune_by_age(hermes, seeded, root) -> None:
    age(root, seeded["trip"], days=45)
    age(root, seeded["deploy"], days=10)
    refused(hermes("sessions", "prune", "--older-than", "30x"), 'invalid duration "30x"')
    refused(hermes("sessions", "prune", "--older-than", "0d"), "longer than zero")
    refused(hermes("sessions", "prune", "--older-than", "30d", input="n\n"), "nothing deleted")
    assert "pruned 1 sessions" in ok(hermes("sessions", "prune", "--older-than", "30d",
                                            input="y\n"))
    assert "pruned 1 sessions" in ok(hermes("sessions", "prune", "--older-than", "1w", "-y"))
    assert "no sessions" in ok(hermes("sessions", "prune", "--older-than", "1w", "-y"))
    assert len(ok(hermes("sessions", "list")).splitlines()) == 2


def test_each_profile_sees_only_its_own_sessions(hermes, seeded, root) -> None:
    ok(hermes("profile", "create", "work"))
    with SessionStore(root / "profiles" / "work" / "state.db") as store:
        store.create_session("cli", "m", session_id="feed000000000000", title="work only")
    assert "work only" in ok(hermes("-p", "work", "sessions", "list"))
    assert "work only" not in ok(hermes("sessions", "list"))
    refused(hermes("-p", "work", "sessions", "show", "a1b2"), "no session matches")


def test_a_broken_database_is_one_clear_line(hermes, root) -> None:
    root.mkdir()
    (root / "state.db").write_bytes(b"this is not a database" * 200)
    refused(hermes("sessions", "list"), "state.db", "move it aside")


def test_every_command_has_help(hermes) -> None:
    listing = ok(hermes("sessions", "--help"))
    commands = [line.split()[0] for line in listing.split("Commands:")[1].splitlines()
                if line.strip()]
    assert commands == ["list", "show", "search", "export", "rename", "delete", "prune"]
    for command in commands:
        assert "Usage:" in ok(hermes("sessions", command, "--help"))


@pytest.mark.parametrize("argv", [["sessions", "list"], ["sessions", "search", "北京"],
                                  ["sessions", "show", "a1b2"]])
def test_session_commands_never_import_heavy_libraries(argv, environ, seeded) -> None:
    code = ("import sys, json\nfrom hermes.cli.main import run\ntry:\n"
            f"    run({argv!r})\nexcept SystemExit:\n    pass\n"
            f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]), "
            "file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                          text=True, timeout=120)
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == [], proc.stderr
    assert proc.stdout  # it did print something
