"""Starting a command under a Landlock ruleset without forking the runtime.

``preexec_fn`` would make ``subprocess`` fork the whole runtime (hundreds of MB with
litellm loaded: tens of milliseconds per command, measured in ``bench/sandbox.py``)
instead of ``vfork``. So the command is started through a few lines of Perl (in
every Debian base system: ``perl-base`` is essential), which restrict themselves with
the ruleset inherited as a file descriptor, install the seccomp filter and ``exec``
the command: the same process, the runtime's own child. Without Perl (or on a CPU
missing from ``SYSCALLS``), ``preexec_fn`` does the same, slower.

Perl reads ``PERL5OPT`` and friends at start-up, so those variables are passed to it
as arguments and put back for the command.
"""

from __future__ import annotations

import os
import platform
import shutil
from collections.abc import Mapping, Sequence

SCRIPT = r"""
my ($nnp, $restrict, $seccomp, $close, $capset, $fd, $filter, $kept) = splice(@ARGV, 0, 8);
syscall(0 + $nnp, 38, 1, 0, 0, 0) == 0 or die "hermes sandbox: no_new_privs: $!\n";
if ($fd ne "-") {
  syscall(0 + $restrict, 0 + $fd, 0) == 0 or die "hermes sandbox: landlock: $!\n";
  syscall(0 + $close, 0 + $fd);
}
if ($filter ne "-") {
  my $code = pack("H*", $filter);
  my $prog = pack("S x6 P", length($code) / 8, $code);
  syscall(0 + $seccomp, 1, 0, $prog) == 0 or die "hermes sandbox: seccomp: $!\n";
}
syscall(0 + $nnp, 47, 4, 0, 0, 0);
my ($header, $none) = (pack("LL", 0x20080522, 0), pack("L6", 0, 0, 0, 0, 0, 0));
syscall(0 + $capset, $header, $none) == 0 or die "hermes sandbox: capset: $!\n";
for (splice(@ARGV, 0, $kept)) { my ($k, $v) = split(/=/, $_, 2); $ENV{$k} = $v; }
exec { $ARGV[0] } @ARGV or die "hermes sandbox: cannot run $ARGV[0]: $!\n";
"""
SYSCALLS = {"x86_64": (157, 446, 317, 3, 126), "aarch64": (167, 446, 277, 57, 91)}
"""prctl, landlock_restrict_self, seccomp, close, capset. After no-new-privileges, the
ruleset and the filter, the launcher clears the ambient capabilities
(``PR_CAP_AMBIENT_CLEAR_ALL``) and every capability set: a command started by root
holds none (with no-new-privileges, ``exec`` cannot give them back)."""


def find_perl(environ: Mapping[str, str]) -> str | None:
    """Perl, when this CPU's system call numbers are known."""
    if platform.machine() not in SYSCALLS:
        return None
    return shutil.which("perl", path=environ.get("PATH") or os.defpath)


def perl_command(perl: str, ruleset: int | None, program: bytes | None, argv: Sequence[str],
                 env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that start ``argv`` with ``env``, confined by the
    Landlock ``ruleset`` (a descriptor the child inherits; None: none) and the seccomp
    ``program`` (None: none), with no capabilities."""
    kept = {name: value for name, value in env.items() if name.startswith("PERL")}
    numbers = [str(number) for number in SYSCALLS[platform.machine()]]
    head = [perl, "-e", SCRIPT, *numbers, "-" if ruleset is None else str(ruleset),
            program.hex() if program else "-", str(len(kept))]
    clean = {name: value for name, value in env.items() if name not in kept}
    return [*head, *(f"{name}={value}" for name, value in kept.items()), *argv], clean
