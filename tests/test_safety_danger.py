"""Dangerous-command detection: every class on a table of commands, the tricky safe ones,
and wrappings (prefixes, pipelines, subshells, continuations) that must never hide one."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from danger_table import DANGEROUS, SAFE
from hermes.tools.commands import simple_commands
from hermes.tools.danger import DANGER_CLASSES, Whereabouts, detect_danger, detect_dangers
from hermes.tools.shell import ShellSyntaxError, parse


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The table's paths assume ``$HOME``/``~/.hermes``: pin both to a scratch home."""
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


def test_the_table_is_big_and_covers_every_class() -> None:
    assert len(DANGEROUS) + len(SAFE) >= 150
    assert {key for _, key, _ in DANGEROUS} == set(DANGER_CLASSES)


@pytest.mark.parametrize(("command", "key", "hard"), DANGEROUS)
def test_dangerous_commands_are_flagged(command: str, key: str, hard: bool) -> None:
    dangers = detect_dangers(command)
    assert key in [d.key for d in dangers], (command, dangers)
    assert dangers[0].hard == hard
    assert all(d.reason and d.key in DANGER_CLASSES for d in dangers)


@pytest.mark.parametrize("command", SAFE)
def test_ordinary_commands_pass(command: str) -> None:
    assert detect_dangers(command) == []


def test_hard_blocks_come_first() -> None:
    danger = detect_danger("git push -f && rm -rf /")
    assert danger is not None and (danger.key, danger.hard) == ("delete_root", True)


def test_every_class_of_a_command_is_reported_once() -> None:
    keys = [d.key for d in detect_dangers("sh -c 'rm -rf build' && rm -r dist && git push -f")]
    assert sorted(keys) == ["git_force_push", "recursive_delete", "shell_code"]


def test_reasons_name_the_target() -> None:
    reasons = {cmd: str(detect_danger(cmd)) for cmd in (
        "rm -rf /tmp/victim", "chmod -R 777 .", "dd if=a of=/dev/sda",
        "echo k >> ~/.ssh/authorized_keys")}
    assert "/tmp/victim" in reasons["rm -rf /tmp/victim"]
    assert "chmod -R 777" in reasons["chmod -R 777 ."]
    assert "/dev/sda" in reasons["dd if=a of=/dev/sda"]
    assert "~/.ssh" in reasons["echo k >> ~/.ssh/authorized_keys"]


def test_writes_are_judged_where_they_land(tmp_path: Path, _home: Path) -> None:
    """A symlink to a credential file, ``..`` and the working directory are resolved."""
    (_home / ".ssh").mkdir()
    (tmp_path / "notes").symlink_to(_home / ".ssh" / "authorized_keys")
    where = Whereabouts(tmp_path, _home, _home / ".hermes", _home / ".hermes")
    assert detect_danger("echo k >> notes", where).key == "write_credentials"  # type: ignore[union-attr]
    profile = Whereabouts(_home / ".hermes" / "profiles" / "work", _home, _home / ".hermes",
                          _home / ".hermes" / "profiles" / "work")
    assert detect_danger("echo x > ../other/.env", profile).key == "write_hermes_config"  # type: ignore[union-attr]
    assert detect_danger("echo x > notes.txt", profile) is None


def test_hermes_home_outside_the_root_is_protected(tmp_path: Path, _home: Path) -> None:
    elsewhere = tmp_path / "srv" / "hermes"
    where = Whereabouts(tmp_path, _home, _home / ".hermes", elsewhere)
    danger = detect_danger("echo OPENAI_API_KEY=x >> $HERMES_HOME/.env", where)
    assert danger is not None and danger.key == "write_hermes_config"


def test_parser_sees_every_simple_command() -> None:
    script = ("FOO=1 sudo -u root /usr/bin/env 'r'm -rf x > /etc/y; echo \"a; b\" | "
              "(cd d && tee f) ; for i in $(seq 3); do echo `id`; done")
    names = [c.name for c in simple_commands(script)]
    assert names == ["rm", "echo", "cd", "tee", "seq", "echo", "id"]
    rm = simple_commands(script)[0]
    assert (rm.args, rm.output_files, rm.via) == (["-rf", "x"], ["/etc/y"], ("sudo", "env"))


def test_parser_keeps_pipelines_and_here_documents() -> None:
    commands = parse("curl -s x |\n tee log | bash -s\ncat <<EOF\n$(whoami)\nEOF")
    assert [c.argv[0] for c in commands] == ["curl", "tee", "bash", "cat", "whoami"]
    assert [c.argv[0] for c in commands[2].piped_from] == ["curl", "tee"]
    assert commands[3].redirects[0].target == "$(whoami)" and commands[4].nested


@pytest.mark.parametrize("text", ["echo 'open", 'echo "open', "echo $(ls", "echo `ls",
                                  "(cd x", "echo )", "cat <", "echo ${x"])
def test_unparseable_text_is_refused_by_the_parser(text: str) -> None:
    with pytest.raises(ShellSyntaxError):
        parse(text)
    assert detect_danger(text) is not None


PREFIXES = ["sudo ", "sudo -u root ", "env A=1 ", "nice -n 5 ", "timeout 10 ", "nohup ",
            "command ", "exec ", "time ", "X=1 Y=2 ", "stdbuf -oL ", "ionice -c 3 "]
WRAPPINGS = [
    "{cmd}", "( {cmd} )", "{{ {cmd}; }}", "true && {cmd}", "false || {cmd}", "echo hi; {cmd}",
    "echo hi | {cmd}", "{cmd} | cat", "{cmd} &", "if true; then {cmd}; fi",
    "while false; do :; done; {cmd}", "echo $({cmd})", "echo `{cmd}`", "cat <({cmd})",
    "for i in 1; do {cmd}; done", "sh -c {quoted}", "bash -lc {quoted}", "eval {quoted}",
    "echo a \\\n && {cmd}", "[[ -n x ]] && {cmd}", "x=$({cmd})", "! {cmd}",
]
WRAPPABLE = [(c, k) for c, k, _ in DANGEROUS
             if "\n" not in c and "<<" not in c and k != "unparseable"]


def _quote(command: str) -> str:
    return "'" + command.replace("'", "'\\''") + "'"


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(WRAPPABLE), prefix=st.sampled_from(PREFIXES),
       wrapping=st.sampled_from(WRAPPINGS), continuation=st.booleans())
def test_wrapping_never_hides_a_danger(case: tuple[str, str], prefix: str, wrapping: str,
                                       continuation: bool) -> None:
    command, key = case
    compound = command.split()[0] in ("{", "(", "if", "for", "while", "case", "[[", ":(){") \
        or command.startswith(("(", "x=", "bomb()"))
    inner = command if compound else prefix + command  # `sudo { ...; }` is no command
    if continuation:  # break the line inside the command, as a person or model might
        inner = inner.replace(" ", " \\\n  ", 1)
    if "`" in wrapping and "`" in command:
        wrapping = "echo $({cmd})"  # backticks do not nest unescaped: a different command
    wrapped = wrapping.format(cmd=inner, quoted=_quote(inner))
    keys = {d.key for d in detect_dangers(wrapped)}
    assert key in keys or keys & {"delete_root", "unparseable"}, (wrapped, keys)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab rm-f/|;&()$`'\"\\\n<>{}*~#=")), max_size=40))
def test_detection_never_crashes(text: str) -> None:
    for danger in detect_dangers(text):
        assert danger.key in DANGER_CLASSES
