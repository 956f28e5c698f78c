"""A seccomp filter for the Landlock backend: what Landlock cannot decide.

Landlock has no say over connecting to a Unix socket (the warm server of another
profile, the docker daemon) or over UDP, so the filter refuses to create Unix
sockets, and with ``network: off`` every socket (internet, raw, packet, netlink,
...: EACCES, "Permission denied"). It also refuses io_uring (which could open sockets
past the filter) and system calls of a foreign ABI (32-bit entry points on a 64-bit
kernel), whose numbers the filter does not check.
"""

from __future__ import annotations

import ctypes
import errno
import platform
from dataclasses import dataclass

AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
X32_BIT = 0x40000000
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0 = 0, 4, 16


@dataclass(frozen=True)
class Arch:
    audit: int
    socket: int
    io_uring_setup: int
    x32: bool = False
    """Whether the x32 ABI shares the audit value (its numbers carry ``X32_BIT``)."""


ARCHES = {"x86_64": Arch(0xC000003E, 41, 425, x32=True),
          "aarch64": Arch(0xC00000B7, 198, 425)}


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def native_arch() -> Arch | None:
    """This machine's entry in ``ARCHES``, or None (then there is no filter)."""
    return ARCHES.get(platform.machine())


def families(*, network: bool) -> tuple[int, ...] | None:
    """Socket families a confined command may not create; None: no socket at all."""
    return (AF_UNIX,) if network else None


def instructions(arch: Arch, denied: tuple[int, ...] | None
                 ) -> list[tuple[int, int, int, int]]:
    """The BPF program as (code, jump if true, jump if false, k) tuples; ``denied``
    None refuses every ``socket`` call."""
    deny_all = (_RET_K, 0, 0, RET_ERRNO | errno.EPERM)
    head = [(_LD_W_ABS, 0, 0, OFFSET_ARCH), (_JEQ_K, 1, 0, arch.audit), deny_all,
            (_LD_W_ABS, 0, 0, OFFSET_NR)]
    if arch.x32:
        head += [(_JGE_K, 0, 1, X32_BIT), deny_all]
    checks = [(_JEQ_K, 0, 1, arch.io_uring_setup), (_RET_K, 0, 0, RET_ERRNO | errno.ENOSYS)]
    if denied is None:
        checks += [(_JEQ_K, 1, 0, arch.socket), (_RET_K, 0, 0, RET_ALLOW),
                   (_RET_K, 0, 0, RET_ERRNO | errno.EACCES)]
        return head + checks
    checks += [(_JEQ_K, 0, len(denied) + 1, arch.socket), (_LD_W_ABS, 0, 0, OFFSET_ARG0)]
    # Each family test jumps to the EACCES return just past the allow.
    tests = [(_JEQ_K, len(denied) - index, 0, family) for index, family in enumerate(denied)]
    tail = [(_RET_K, 0, 0, RET_ALLOW), (_RET_K, 0, 0, RET_ERRNO | errno.EACCES)]
    return head + checks + tests + tail


class Program:
    """A built filter; ``pointer`` is what ``PR_SET_SECCOMP`` takes (kept alive here)."""

    def __init__(self, arch: Arch, denied: tuple[int, ...] | None):
        code = instructions(arch, denied)
        self._filters = (SockFilter * len(code))(*(SockFilter(*item) for item in code))
        self._fprog = SockFprog(len(code), self._filters)
        self.code = bytes(self._filters)
        """The instructions as the kernel reads them (for the launcher)."""
        self.pointer = ctypes.byref(self._fprog)
