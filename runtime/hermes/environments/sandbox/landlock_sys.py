"""The Landlock system calls through ctypes (Linux ≥ 5.13): ABI version, rulesets,
path rules, and confining the calling process.

Every structure is built in the parent; the child (between fork and exec) only
makes three system calls with what is already there, so nothing it does needs a
lock another thread could hold at fork time.
"""

from __future__ import annotations

import ctypes
import os
import platform
from functools import cache

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
"""The same numbers on every architecture (they postdate the unified table)."""
RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
CAPSET = {"x86_64": 126, "aarch64": 91}
CAPABILITY_VERSION_3 = 0x20080522

# Filesystem rights (LANDLOCK_ACCESS_FS_*), by the ABI that introduced them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = (1 << 8, 1 << 9, 1 << 10, 1 << 11,
                                                        1 << 12)
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1,
             5: (1 << 16) - 1}
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
"""The only rights a rule on a file (not a directory) may carry."""
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1


class RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return result


def abi_version() -> int:
    """The kernel's Landlock ABI, 0 when it has none (or it is disabled)."""
    try:
        result = _libc().syscall(CREATE_RULESET, None, ctypes.c_size_t(0),
                                 ctypes.c_uint32(RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(0, int(result))


def fs_rights(abi: int) -> int:
    return FS_BY_ABI.get(abi, FS_BY_ABI[5])


def create_scope_ruleset(abi: int) -> int | None:
    """A ruleset that only scopes (ABI ≥ 6): abstract Unix sockets and signals reach no
    process outside the sandbox; None when the kernel cannot."""
    if abi < 6:
        return None
    attr = RulesetAttr(0, 0, SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    return _check(_libc().syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(24),
                                  ctypes.c_uint32(0)), "landlock_create_ruleset")


def create_ruleset(abi: int, *, block_tcp: bool) -> int:
    """A new ruleset handling every right the ABI knows (denied unless a rule grants it);
    its file descriptor (close-on-exec)."""
    attr = RulesetAttr(fs_rights(abi), NET_BIND_TCP | NET_CONNECT_TCP if block_tcp and abi >= 4
                       else 0, SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    return _check(_libc().syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                                  ctypes.c_uint32(0)), "landlock_create_ruleset")


def add_path_rule(ruleset: int, fd: int, rights: int) -> None:
    """Grant ``rights`` beneath the file or directory open as ``fd``."""
    attr = PathBeneathAttr(rights, fd)
    _check(_libc().syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(attr),
                           ctypes.c_uint32(0)), "landlock_add_rule")


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


class Restrictor:
    """Confines the calling process by a finished ruleset; made in the parent, called in
    the child (``preexec_fn``): no new privileges, then the ruleset, then the filter,
    then no capabilities (as the launcher does)."""

    def __init__(self, ruleset: int, seccomp_program: object | None):
        libc = _libc()
        self._prctl = libc.prctl
        self._syscall = libc.syscall
        self._ruleset = ruleset
        self._program = seccomp_program
        self._no_flags = ctypes.c_uint32(0)
        self._capset = CAPSET.get(platform.machine())
        self._header = CapHeader(CAPABILITY_VERSION_3, 0)
        self._none = (CapData * 2)()

    def __call__(self) -> None:
        _check(self._prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")
        _check(self._syscall(RESTRICT_SELF, self._ruleset, self._no_flags),
               "landlock_restrict_self")
        if self._program is not None:
            _check(self._prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, self._program, 0, 0),
                   "seccomp filter")
        self._prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        if self._capset is not None:
            _check(self._syscall(self._capset, ctypes.byref(self._header),
                                 ctypes.byref(self._none)), "capset")
