"""The checks behind ``detect_dangers``: one function per kind of program.

Each rule takes one unwrapped ``SimpleCommand`` (and where it runs) and yields
``(class key, reason)`` pairs; ``script_rules`` looks across the commands of
one command line. Classes are described in ``danger.DANGER_CLASSES``; the rules
on permissions and ownership live in ``danger_modes``, on disks in ``danger_disks``,
on programs that run commands though they are no shell in ``danger_escapes``.
"""

from __future__ import annotations

import ipaddress
import itertools
import posixpath
import re
import socket
from collections.abc import Callable, Iterator
from dataclasses import replace
from urllib.parse import urlsplit

from hermes.tools.commands import (
    SHELLS,
    SimpleCommand,
    is_option,
    shell_inline_script,
    shell_operands,
    split_options,
)
from hermes.tools.danger_disks import DISK, disk_rule
from hermes.tools.danger_escapes import escape_rule
from hermes.tools.danger_modes import Finding, permission_rule, privilege_rule
from hermes.tools.danger_paths import (
    Whereabouts,
    classify,
    replacement_targets,
    resolve,
    write_targets,
)
from hermes.tools.danger_places import protected_delete
from hermes.tools.launchers import git_alias_definition, git_alias_expansion, git_subcommand

Rule = Callable[[SimpleCommand, Whereabouts], Iterator[Finding]]

FETCHERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-request",
                      "GET", "nc", "ncat", "socat"})
INTERPRETER_FLAGS = {  # interpreter: options whose value is code to run
    "python": ("-c",), "pypy": ("-c",), "perl": ("-e", "-E"), "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"), "nodejs": ("-e", "--eval", "-p", "--print"),
    "bun": ("-e", "--eval", "-p", "--print"), "deno": ("eval",), "php": ("-r",),
    "lua": ("-e",), "luajit": ("-e",), "rscript": ("-e",), "osascript": ("-e",),
    "tclsh": (), "jshell": (), "irb": (), "ipython": ("-c",),
}
METADATA_HOSTS = frozenset({"169.254.169.254", "fd00:ec2::254", "100.100.100.200",
                            "169.254.170.2", "metadata.google.internal", "metadata.goog",
                            "metadata"})
METADATA_TEXT = re.compile(r"(?<![\w.])(169\.254\.169\.254|100\.100\.100\.200|169\.254\.170\.2)"
                           r"(?![\d])|\[?fd00:ec2::254\]?|\bmetadata\.google\.internal\b(?!\.\w)")
HARD_DELETES = frozenset({"delete_root", "delete_home", "delete_system"})
"""The ``rm -r`` findings refused always (``danger.HARD_CLASSES``)."""


def interpreter_family(name: str) -> str | None:
    """``python3.11`` -> ``python``; None if ``name`` is no code interpreter."""
    base = re.sub(r"[\d.]+$", "", name.lower().removesuffix(".exe"))
    return base if base in INTERPRETER_FLAGS else None


# ------------------------------------------------------------ computed names


def computed_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    """A program whose name is computed could be any program: a class of its own, and
    refused outright for arguments that would be refused for ``rm`` or a disk tool."""
    if not cmd.computed:
        return
    what = f"a program whose name is computed ({cmd.program})"
    yield "computed_command", f"runs {what}"
    for key, reason in rm_rule(replace(cmd, name="rm", via=()), where):
        if key in HARD_DELETES:
            yield key, f"{reason} by {what}"
    for arg in cmd.args:
        device = arg.partition("=")[2] if "=" in arg else arg
        if DISK.match(device):
            yield "write_disk", f"{what} given the disk device {device}"


# ------------------------------------------------------------------ deletes


def rm_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    if cmd.name != "rm":
        return
    options, operands = split_options(cmd.args)
    if any(v.startswith("find -") for v in cmd.via):
        yield "find_exec_rm", "find -exec rm deletes every file find matches"
    if "xargs" in cmd.via or "parallel" in cmd.via:
        yield "xargs_rm", "xargs rm deletes every file named on its input"
    recursive = any(o == "--recursive" or (not o.startswith("--") and set(o[1:]) & {"r", "R"})
                    for o in options)
    if not recursive:
        return
    for target in operands:
        yield from _hard_deletes(target, where)
    shown = " ".join(operands) or "(no target)"
    yield "recursive_delete", f"recursive delete of {shown} (rm -r)"


def _hard_deletes(target: str, where: Whereabouts,
                  how: str = "recursive delete of") -> Iterator[Finding]:
    """The refused-always finding for deleting all of ``target``, if there is one."""
    if rm_scope(target) == "root":
        yield "delete_root", f"{how} the root filesystem ({target})"
    elif (found := protected_delete(target, where)) is not None:
        key, reason = found
        yield key, reason.replace("recursive delete of", how, 1)


def rsync_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    """``rsync --delete SRC DEST`` deletes what DEST holds that SRC lacks: from an
    empty SRC, all of DEST."""
    if cmd.name != "rsync" or not any(a == "--del" or a.startswith("--delete")
                                      for a in cmd.args):
        return
    operands = split_options(cmd.args)[1]
    if len(operands) < 2:
        return
    destination = operands[-1]
    if not re.match(r"^[^/]*:", destination):  # host:path and rsync:// are not here
        yield from _hard_deletes(destination, where, "rsync --delete into")
    yield "recursive_delete", f"rsync --delete deletes what {destination} holds beyond the source"


def rm_scope(target: str) -> str | None:
    """``"root"`` for ``/`` and its spellings (``//``, ``/tmp/..``, ``/*``), ``"broad"``
    for homes, top-level directories, ``.``/``*`` and ``$VAR/``, else None."""
    base = target.rstrip("*")
    if base.startswith("/"):
        path = "/" + posixpath.normpath(base).lstrip("/")
        if path == "/":
            return "root"
        parts = path.strip("/").split("/")
        broad = len(parts) == 1 or (parts[0] in ("home", "Users") and len(parts) == 2)
        return "broad" if broad else None
    if re.fullmatch(r"(~[\w.-]*|\$\{?HOME\}?)/?(\./?)?", base):
        return "broad"
    if base in ("", ".", "./", "..", "../") or re.fullmatch(r"\$\{?\w+\}?/", base):
        return "broad"
    return None


FIND_GLOBAL = frozenset({"-depth", "-xdev", "-mount", "-noleaf", "-ignore_readdir_race",
                         "-d", "-daystart", "-follow", "-delete", "-H", "-L", "-P"})
FIND_VALUED = frozenset({"-mindepth", "-maxdepth", "-D", "-O"})


def find_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    if cmd.name != "find" or "-delete" not in cmd.args:
        return
    starts, tests = _find_parts(cmd.args)
    if not tests:  # nothing filters what it deletes: all of each starting point
        for start in starts or ["."]:
            yield from _hard_deletes(start, where, "find -delete of")
    yield "find_delete", "find -delete deletes every file it matches"


def _find_parts(args: list[str]) -> tuple[list[str], list[str]]:
    """``(starting points, the tests and actions other than global options)``."""
    options = [a for a in args[:3] if a in ("-H", "-L", "-P")]
    rest = args[len(options):]
    starts = list(itertools.takewhile(lambda a: not a.startswith(("-", "(", "!")), rest))
    tests: list[str] = []
    skip = False
    for arg in rest[len(starts):]:
        if skip:
            skip = False
        elif arg in FIND_VALUED:
            skip = True
        elif arg not in FIND_GLOBAL:
            tests.append(arg)
    return starts, tests


# ------------------------------------------------------------ code to run


def code_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    """Shells and interpreters given code inline, on stdin, or from a download."""
    how = _code_handed(cmd)
    if how is None:
        return
    sources = set(cmd.piped_from) | set(cmd.inner)
    if sources & FETCHERS:
        yield "pipe_to_shell", f"runs downloaded content as code ({how})"
    else:
        yield "shell_code", f"runs code given to {cmd.name} ({how})"


def _code_handed(cmd: SimpleCommand) -> str | None:
    name, args = cmd.name, cmd.args
    if name == "eval":
        return "eval"
    if name in ("source", ".") and any(a.startswith("/dev/fd/") for a in args):
        return f"{name} <(...)"
    if name in SHELLS or name == "busybox":
        if shell_inline_script(args) is not None:
            return f"{name} -c"
        operands = shell_operands(args)
        if operands and operands[0].startswith("/dev/fd/"):
            return f"{name} <(...)"
        options = args[:len(args) - len(operands)]
        if not operands or operands[0] == "-" or any(  # `bash -s -- args`: script on stdin
                o.startswith("-") and not o.startswith("--") and "s" in o for o in options):
            return _stdin_how(cmd)
        return None
    family = interpreter_family(name)
    if family is not None:
        return _interpreter_how(cmd, family)
    if name.lower() in ("powershell", "pwsh", "powershell.exe", "pwsh.exe"):
        return f"{name} {cmd.args[0]}" if cmd.args else None
    if name.lower() in ("cmd", "cmd.exe") and {"/c", "/k", "/C", "/K"} & set(args):
        return f"{name} /c"
    return None


def _stdin_how(cmd: SimpleCommand) -> str | None:
    if cmd.stdin_script is not None:
        return f"{cmd.name} << here-document"
    if cmd.piped_from:
        return f"{cmd.piped_from[-1]} | {cmd.name}"
    return None


def _interpreter_how(cmd: SimpleCommand, family: str) -> str | None:
    flags = INTERPRETER_FLAGS[family]
    for arg in cmd.args:
        if arg in flags or arg.split("=", 1)[0] in flags:
            return f"{cmd.name} {arg}"
        if arg.startswith("-") and not arg.startswith("--") and any(
                f.startswith("-") and len(f) == 2 and f[1] in arg[1:] for f in flags):
            return f"{cmd.name} {arg}"
        if not is_option(arg):
            return f"{cmd.name} -" if arg == "-" else None
    if family in ("python", "pypy") and "-m" in cmd.args:
        return None
    return _stdin_how(cmd)


# -------------------------------------------------------- package managers

REMOVE_VERBS = {
    "npm": {"uninstall", "un", "unlink", "remove", "rm", "r"},
    "pnpm": {"remove", "rm", "uninstall", "un"}, "yarn": {"remove"},
    "bun": {"remove", "rm", "uninstall"}, "pip": {"uninstall"}, "uv": {"remove", "uninstall"},
    "pipx": {"uninstall", "uninstall-all"}, "poetry": {"remove"}, "pdm": {"remove"},
    "conda": {"remove", "uninstall"}, "mamba": {"remove", "uninstall"},
    "micromamba": {"remove", "uninstall"}, "brew": {"uninstall", "remove", "rm", "rmtree"},
    "apt": {"remove", "purge", "autoremove"}, "apt-get": {"remove", "purge", "autoremove"},
    "aptitude": {"remove", "purge"}, "dnf": {"remove", "erase", "autoremove"},
    "yum": {"remove", "erase", "autoremove"}, "microdnf": {"remove"},
    "zypper": {"remove", "rm"}, "apk": {"del"}, "snap": {"remove"},
    "flatpak": {"uninstall", "remove"}, "gem": {"uninstall"}, "cargo": {"uninstall"},
    "composer": {"remove"}, "port": {"uninstall"}, "choco": {"uninstall"},
    "winget": {"uninstall"}, "scoop": {"uninstall"}, "nix-env": {"--uninstall", "-e"},
}
GROUP_WORDS = frozenset({"global", "pip", "tool", "package"})
OTHER_VERBS = frozenset({
    "install", "i", "add", "update", "upgrade", "up", "run", "run-script", "exec", "x", "dlx",
    "list", "ls", "show", "info", "view", "search", "init", "create", "build", "test", "publish",
    "audit", "outdated", "sync", "lock", "freeze", "download", "wheel", "check", "config",
    "cache", "why", "link", "ci", "start", "doctor", "version", "help", "env", "shell", "venv",
    "compile", "tree", "pack", "login", "whoami", "set", "get", "fund", "prune", "dedupe",
})
FLAG_REMOVERS = {"pacman": ("-R", "--remove"), "yay": ("-R", "--remove"),
                 "paru": ("-R", "--remove"), "dpkg": ("-r", "-P", "--remove", "--purge"),
                 "rpm": ("-e", "--erase")}


def package_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    name, args = re.sub(r"[\d.]+$", "", cmd.name), cmd.args
    if interpreter_family(cmd.name) == "python" and args[:2] == ["-m", "pip"]:
        name, args = "pip", args[2:]
    if name in FLAG_REMOVERS:
        flags = FLAG_REMOVERS[name]
        if any(a in flags or (a.startswith(flags[0]) and not a.startswith("--"))
               for a in args if is_option(a)):
            yield "package_uninstall", f"removes installed packages ({cmd.name} {flags[0]})"
        return
    verbs = REMOVE_VERBS.get(name)
    if verbs is not None and (verb := _remove_verb(args, verbs)) is not None:
        yield "package_uninstall", f"removes installed packages ({cmd.name} {verb})"


def _remove_verb(args: list[str], verbs: set[str]) -> str | None:
    after_option = True  # a word after an option may be its value (--prefix ./app)
    for arg in args:
        if arg == "--":
            return None
        if arg in verbs:
            return arg
        if is_option(arg):
            after_option = "=" not in arg
            continue
        if arg in OTHER_VERBS or not (after_option or arg in GROUP_WORDS):
            return None
        after_option = arg in GROUP_WORDS
    return None


# ------------------------------------------------------------- file writes


def write_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    for target in replacement_targets(cmd):
        if posixpath.basename(target) == "config.yaml" and \
                classify(resolve(target, where), where) is None:
            yield "write_project_config", f"replaces {target}: a project's config.yaml"
    for target in write_targets(cmd):
        if DISK.match(target):
            yield "write_disk", f"overwrites the disk device {target}"
            continue
        if target.startswith("/dev/"):
            continue
        found = classify(resolve(target, where), where)
        if found is not None:
            key, what = found
            yield key, f"writes {target}: {what}"


# ----------------------------------------------------- git, power, processes


def git_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    """Git commands that lose work or history, also through an alias given with ``-c``
    or defined with ``git config alias.NAME``."""
    if cmd.name != "git":
        return
    yield from _git_findings(git_alias_expansion(cmd.args) or cmd.args)
    definition = git_alias_definition(cmd.args)
    if definition is not None:
        alias, words = definition
        for key, reason in _git_findings(words):
            yield key, f"defines the git alias {alias}: {reason}"


def _git_findings(args: list[str]) -> Iterator[Finding]:
    sub, args = git_subcommand(args)
    short = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    if sub == "push" and ("f" in short or any(a.startswith(("--force", "--mirror")) or
                                              (a.startswith("+") and len(a) > 1) for a in args)):
        yield "git_force_push", "git push --force rewrites the remote's history"
    elif sub == "reset" and any(re.fullmatch(r"--h(a(r(d)?)?)?", a) for a in args):
        yield "git_discard", "git reset --hard discards uncommitted changes"
    elif sub == "clean" and ("f" in short or "--force" in args):
        yield "git_discard", "git clean -f deletes untracked files"
    elif sub == "branch" and ("D" in short or (
            ("d" in short or "--delete" in args) and ("f" in short or "--force" in args))):
        yield "git_branch_delete", "git branch -D deletes a branch even if it is not merged"


def power_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    name, args = cmd.name, cmd.args
    init_halt = name in ("init", "telinit") and args[:1] in (["0"], ["6"])
    systemctl = name == "systemctl" and bool({"poweroff", "reboot", "halt", "kexec"} & set(args))
    if name in ("shutdown", "reboot", "halt", "poweroff") or init_halt or systemctl:
        yield "shutdown", f"shuts down or reboots the machine ({name})"


def process_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    name, args = cmd.name, cmd.args
    if name == "kill":
        rest = args[2:] if args[:1] in (["-s"], ["-n"]) else args
        rest = rest[1:] if len(rest) > 1 and rest[0].startswith("-") else rest
        if "-1" in [a for a in rest if a != "--"]:
            yield "kill_all", "kills every process you own (kill -1)"
        if {"pgrep", "pidof"} & set(cmd.inner):
            yield "kill_processes", "kills processes found by pgrep/pidof"
    elif name == "pkill" and ({"-9", "-KILL", "-SIGKILL"} & set(args)
                              or any(re.search(r"hermes|gateway", a) for a in args)):
        yield "kill_processes", f"force-kills processes by name (pkill {' '.join(args)})"
    elif name == "killall" and not {"-l", "-V", "--list", "--version"} & set(args):
        signal = {"-9", "-KILL", "-SIGKILL", "-r", "--regexp"} & set(args)
        if signal or any(args[i] == "-s" and args[i + 1:i + 2] in (["KILL"], ["9"], ["SIGKILL"])
                         for i in range(len(args))):
            yield "kill_processes", f"kills processes by name (killall {' '.join(args)})"


def service_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    name, args = cmd.name, cmd.args
    positional = [a for a in args if not is_option(a)]
    verb = positional[0] if positional else ""
    stops = {"stop", "restart", "kill", "disable", "mask", "try-restart", "reload-or-restart"}
    if name == "systemctl" and verb in stops or name == "service" and positional[1:2] and \
            positional[1] in stops:
        yield "stop_services", f"stops or restarts a system service ({name} {' '.join(args)})"
    elif name == "launchctl" and verb in {"stop", "kickstart", "bootout", "unload", "kill",
                                          "disable", "remove"} and "hermes" in " ".join(args):
        yield "stop_services", "stops or restarts the Hermes launchd service"
    elif name == "hermes" and "gateway" in positional and \
            positional[positional.index("gateway") + 1:][:1] in (["stop"], ["restart"]):
        yield "stop_services", "stops the Hermes gateway (running agents are cut off)"
    elif name in ("docker", "podman", "docker-compose") and _container_stop(name, positional):
        yield "stop_services", f"stops containers ({name} {' '.join(positional[:2])})"


def _container_stop(name: str, positional: list[str]) -> bool:
    if name == "docker-compose" or positional[:1] == ["compose"]:
        verbs = positional[1:] if positional[:1] == ["compose"] else positional
        return bool(verbs) and verbs[0] in ("down", "stop", "kill", "restart", "rm")
    if positional[:1] == ["container"]:
        positional = positional[1:]
    return bool(positional) and positional[0] in ("stop", "kill", "restart")


def sudo_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    if "sudo -S" in cmd.via:
        yield "sudo_stdin", "sudo takes a password no person types (-S / -A)"


def metadata_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    for word in [*cmd.args, *(r.target for r in cmd.redirects)]:
        if _names_metadata_host(word):
            yield "cloud_metadata", f"requests a cloud instance-metadata endpoint ({word[:80]})"
            return


def _names_metadata_host(word: str) -> bool:
    if METADATA_TEXT.search(word):
        return True
    if "://" not in word:
        return False
    host = (urlsplit(word).hostname or "").rstrip(".").lower()
    if host in METADATA_HOSTS:
        return True
    try:
        address = ipaddress.ip_address(socket.inet_ntoa(socket.inet_aton(host)))
    except (OSError, ValueError):
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
    mapped = getattr(address, "ipv4_mapped", None)
    return str(mapped or address) in METADATA_HOSTS


COMMAND_RULES: tuple[Rule, ...] = (
    computed_rule, rm_rule, rsync_rule, find_rule, code_rule, package_rule, write_rule, disk_rule,
    permission_rule, privilege_rule, git_rule, power_rule, process_rule, service_rule,
    sudo_rule, metadata_rule, escape_rule,
)


def script_rules(commands: list[SimpleCommand]) -> Iterator[Finding]:
    """Patterns across one command line: ``chmod +x f && ./f``."""
    made_executable: set[str] = set()
    for cmd in commands:
        if cmd.name == "chmod" and cmd.args and re.search(r"\+x|^[0-7]?[1357][0-7]{2}$",
                                                          cmd.args[0]):
            made_executable.update(posixpath.basename(a) for a in cmd.args[1:])
        elif made_executable and posixpath.basename(cmd.program) in made_executable \
                and "/" in cmd.program:
            yield "run_new_script", f"runs {cmd.program} right after making it executable"
            return
