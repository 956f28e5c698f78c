"""Permission and ownership changes: world-writable modes, changes under system
directories, and what lets a file run with more rights than its caller (setuid/
setgid bits, root ownership, file capabilities). Rules as in ``danger_rules``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from hermes.tools.commands import SimpleCommand, split_options
from hermes.tools.danger_paths import Whereabouts, resolve

Finding = tuple[str, str]

SYSTEM_DIRS = ("/", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot",
               "/var", "/sys", "/proc", "/dev", "/root", "/opt", "/srv", "/private/etc",
               "/System", "/Library")


def permission_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    if cmd.name not in ("chmod", "chown", "chgrp"):
        return
    options, operands = split_options(cmd.args)
    recursive = any(o in ("-R", "--recursive") for o in options)
    spec, paths = (operands[0], operands[1:]) if operands else ("", [])
    if cmd.name == "chmod" and _world_writable(spec):
        yield "chmod_777", (f"makes files world-writable (chmod {'-R ' if recursive else ''}"
                            f"{spec} {' '.join(paths)})")
    for path in paths:
        resolved = str(resolve(path, where))
        if any(resolved == d or (d != "/" and resolved.startswith(d + "/")) for d in SYSTEM_DIRS):
            yield "system_permissions", f"{cmd.name} on the system path {path}"


def _world_writable(spec: str) -> bool:
    if re.fullmatch(r"[0-7]{3,4}", spec):
        return int(spec[-1]) & 2 == 2
    for clause in spec.split(","):
        match = re.fullmatch(r"([ugoa]*)([-+=])([rwxXst]*)", clause)
        if match and match.group(2) in "+=" and "w" in match.group(3) \
                and ({"o", "a"} & set(match.group(1))):
            return True
    return False


def privilege_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    """What lets a file run with more rights than its caller's: setuid/setgid bits,
    root ownership, file capabilities."""
    name, args = cmd.name, cmd.args
    operands = split_options(args)[1]
    spec = operands[0] if operands else ""
    if name == "chmod" and _sets_id_bits(spec):
        yield "setuid", f"sets the setuid/setgid bit (chmod {spec})"
    elif name in ("chown", "chgrp") and _names_root(spec if name == "chown" else f":{spec}"):
        yield "setuid", f"gives files to root ({name} {spec})"
    elif name == "install":
        mode = _install_option(args, "-m", "--mode")
        owner = ":".join(_install_option(args, o, f"--{w}") for o, w in (("-o", "owner"),
                                                                          ("-g", "group")))
        if _sets_id_bits(mode) or _names_root(owner):
            yield "setuid", f"installs a file setuid or owned by root (install {' '.join(args)})"
    elif name == "setcap" and not {"-r", "-v"} & set(args) and operands:
        yield "setuid", f"grants file capabilities (setcap {spec})"


def _sets_id_bits(spec: str) -> bool:
    """``4755``, ``u+s``, ``g=rwxs``, ``+s``: the mode sets setuid or setgid."""
    if re.fullmatch(r"[0-7]{1,5}", spec):
        return len(spec) >= 4 and int(spec, 8) & 0o6000 != 0
    for clause in spec.split(","):
        who = re.match(r"[ugoa]*", clause)
        people = set(who.group(0)) if who else set()
        for operator, perms in re.findall(r"([-+=])([rwxXstugo]*)", clause):
            if operator in "+=" and "s" in perms and (not people or people & {"u", "g", "a"}):
                return True
    return False


def _names_root(owner: str) -> bool:
    """``root``, ``0:0``, ``:root``, ``alice:root``: an owner or group that is root."""
    return any(part in ("root", "0") for part in re.split(r"[:.]", owner))


def _install_option(args: list[str], short: str, long: str) -> str:
    for index, arg in enumerate(args):
        if arg in (short, long) and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(long + "="):
            return arg.partition("=")[2]
        if arg.startswith(short) and len(arg) > 2 and not arg.startswith("--"):
            return arg[2:]
    return ""
