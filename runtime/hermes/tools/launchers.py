"""Programs that run commands taken from their arguments: GNU parallel and git.

``parallel_script(args)`` is the script ``parallel`` hands its shell: the
command with each ``:::`` input put in (or each input on its own). For git,
``git_scripts(args)`` lists the shell commands a git command line runs or
stores for later: ``!`` aliases and command-valued settings (``core.pager``,
``core.sshCommand``, ...) given with ``-c`` or ``git config``;
``git_alias_expansion(args)`` is what a plain alias given with ``-c`` stands for
(``git -c alias.p='push --force' p`` is ``git push --force``).
"""

from __future__ import annotations

import re
import shlex

from hermes.tools.shell import split_words

MAX_INPUTS = 32
PARALLEL_VALUE_OPTIONS = frozenset({
    "-j", "--jobs", "-P", "-N", "-n", "--max-args", "-L", "--max-lines", "-S", "--sshlogin",
    "--slf", "--sshloginfile", "-a", "--arg-file", "-I", "-d", "--delimiter", "-E", "-C",
    "--colsep", "--joblog", "--results", "--res", "--timeout", "--workdir", "--wd", "--tmpdir",
    "--env", "--basefile", "--bf", "--return", "--transferfile", "--tf", "--retries", "--load",
    "--memfree", "--delay", "--halt", "--termseq", "--tagstring", "--header", "--rpl",
    "--shebang-wrap", "-s", "--max-chars", "--block", "--seqreplace",
})
INPUT_MARKERS = (":::", ":::+", "::::", "::::+")
REPLACEMENT = re.compile(r"\{[^{}\s]*\}")
GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                               "--exec-path", "--config-env"})
# Settings whose value git runs as a command (``!`` aliases are checked apart).
COMMAND_SETTING = re.compile(
    r"(core\.(pager|editor|sshcommand|fsmonitor|askpass)|sequence\.editor|diff\.external"
    r"|diff\..+\.(textconv|command)|merge\..+\.driver|filter\..+\.(clean|smudge|process)"
    r"|credential(\..+)?\.helper|pager\..+|gpg(\..+)?\.program|uploadpack\.packobjectshook"
    r"|core\.hookspath)", re.IGNORECASE)
CONFIG_READS = frozenset({"get", "get-all", "get-regexp", "get-urlmatch", "get-color",
                          "get-colorbool", "list", "unset", "unset-all", "edit",
                          "rename-section", "remove-section"})
CONFIG_VALUE_OPTIONS = frozenset({"-f", "--file", "--blob", "--type", "--default",
                                  "--comment", "--value"})


def parallel_script(args: list[str]) -> tuple[str, str]:
    """``(how, script)``: what ``parallel ARGS`` runs; ``how`` is ``parallel`` when the
    inputs come from stdin (like ``xargs``), ``parallel :::`` when they are given."""
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] not in INPUT_MARKERS:
        index += 2 if args[index] in PARALLEL_VALUE_OPTIONS else 1
    template, inputs, given = [], [], False
    marker = ""
    for arg in args[index:]:
        if arg in INPUT_MARKERS:
            marker, given = arg, True
        elif not given:
            template.append(arg)
        elif marker.startswith(":::") and not marker.startswith("::::"):
            inputs.append(arg)  # `:::: FILE` names a file of inputs: unknown here
    lines = [_put_in(template, value) for value in inputs[:MAX_INPUTS]] or [" ".join(template)]
    return ("parallel :::" if given else "parallel"), "\n".join(lines)


def _put_in(template: list[str], value: str) -> str:
    """The command line for one input: in place of ``{}``-like strings, else at the end
    (quoted as parallel quotes it); with no command, the input is the command."""
    if not template:
        return value
    command = " ".join(template)
    if REPLACEMENT.search(command):
        return REPLACEMENT.sub(lambda _: shlex.quote(value), command)
    return f"{command} {shlex.quote(value)}"


def git_subcommand(args: list[str]) -> tuple[str, list[str]]:
    """``(subcommand, its arguments)`` of ``git ARGS``, past git's own options."""
    index = _subcommand_index(args)
    return (args[index], args[index + 1:]) if index < len(args) else ("", [])


def _subcommand_index(args: list[str]) -> int:
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in GIT_VALUE_OPTIONS:
            index += 2
        elif arg.startswith("-"):
            index += 1
        else:
            return index
    return len(args)


def git_settings(args: list[str]) -> list[tuple[str, str]]:
    """``(key, value)`` of every ``-c key=value`` and of a ``git config key value``."""
    sub, rest = git_subcommand(args)
    return _dash_c_settings(args) + (_config_definition(rest) if sub == "config" else [])


def _dash_c_settings(args: list[str]) -> list[tuple[str, str]]:
    """The ``-c key=value`` options before the subcommand."""
    options = args[:_subcommand_index(args)]
    return [(key, value) for key, _, value in
            (options[i + 1].partition("=") for i in range(len(options) - 1)
             if options[i] == "-c" and "=" in options[i + 1])]


def _config_definition(args: list[str]) -> list[tuple[str, str]]:
    """``(key, value)`` that ``git config ARGS`` sets, if it sets one."""
    if any(a.startswith(("--get", "--unset", "--rename", "--remove")) or
           a in ("-l", "--list", "-e", "--edit") for a in args):
        return []
    positional = [a for i, a in enumerate(args) if not a.startswith("-") and
                  (i == 0 or args[i - 1] not in CONFIG_VALUE_OPTIONS)]
    if positional[:1] in (["set"], ["add"]):
        positional = positional[1:]
    elif positional[:1] and positional[0] in CONFIG_READS:
        return []
    return [(positional[0], positional[1])] if len(positional) >= 2 else []


def git_scripts(args: list[str]) -> list[str]:
    """Shell commands a git command line runs or stores: ``!`` aliases and settings
    whose value is a command."""
    scripts: list[str] = []
    for key, value in git_settings(args):
        if key.lower().startswith("alias.") and value.startswith("!"):
            scripts.append(value[1:])
        elif COMMAND_SETTING.fullmatch(key):
            scripts.append(value.removeprefix("!"))
    return scripts


def git_alias_expansion(args: list[str]) -> list[str] | None:
    """The git arguments a plain ``-c alias.NAME=...`` stands for when NAME is run."""
    sub, rest = git_subcommand(args)
    for key, value in _dash_c_settings(args):
        if key.lower() == f"alias.{sub.lower()}" and value and not value.startswith("!"):
            return [*split_words(value), *rest]
    return None


def git_alias_definition(args: list[str]) -> tuple[str, list[str]] | None:
    """``(alias, the git arguments it stands for)`` of ``git config alias.NAME VALUE``."""
    sub, rest = git_subcommand(args)
    if sub != "config":
        return None
    for key, value in _config_definition(rest):
        if key.lower().startswith("alias.") and not value.startswith("!"):
            return key[len("alias."):], split_words(value)
    return None
