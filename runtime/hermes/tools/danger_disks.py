"""Disks and filesystems: raw copies, overwriting or erasing a disk device, and
creating filesystems. Rules as in ``danger_rules``; ``DISK`` names the devices whose
overwrite is refused always (``write_disk``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from hermes.tools.commands import SimpleCommand
from hermes.tools.danger_modes import Finding
from hermes.tools.danger_paths import Whereabouts

DISK = re.compile(r"^/dev/(sd[a-z]+|hd[a-z]+|vd[a-z]+|xvd[a-z]+|nvme\d+n\d+|mmcblk\d+|disk\d+)"
                  r"(p?\d+)?$")
SYSTEM_DISK = re.compile(r"^/dev/(sda|hda|vda|xvda|nvme0n1|mmcblk0|disk0)(p?\d+)?$")
HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr",
                              "/dev/tty", "/dev/random", "/dev/urandom", "/dev/full"})


def disk_rule(cmd: SimpleCommand, where: Whereabouts) -> Iterator[Finding]:
    if cmd.name == "dd":
        sources = [a[3:] for a in cmd.args if a.startswith("if=")]
        outputs = [a[3:] for a in cmd.args if a.startswith("of=")]
        if any(o.startswith("/dev/") and o not in HARMLESS_DEVICES and not DISK.match(o)
               for o in outputs) or sources:
            yield "dd_device", f"dd copies raw data ({' '.join(cmd.args)})"
    if (eraser := _erases_device(cmd)) is not None:
        devices = [a for a in cmd.args if a.startswith("/dev/")]
        if any(DISK.match(device) for device in devices):
            yield "write_disk", f"erases the disk device {' '.join(devices)} ({eraser})"
        else:
            yield "format_filesystem", f"erases a device ({eraser})"
    if cmd.name.startswith("mkfs") or cmd.name in ("mke2fs", "mkswap", "wipefs"):
        devices = [a for a in cmd.args if a.startswith("/dev/")]
        if any(SYSTEM_DISK.match(device) for device in devices):
            yield "format_system_disk", f"formats the system disk ({' '.join(devices)})"
        else:
            yield "format_filesystem", f"creates or wipes a filesystem ({cmd.name})"


def _erases_device(cmd: SimpleCommand) -> str | None:
    """How ``cmd`` erases a whole block device (discard, zap, secure erase), if it does."""
    name, args = cmd.name, cmd.args
    if name == "blkdiscard":
        return name
    if name == "nvme" and args[:1] and args[0] in ("format", "sanitize"):
        return f"nvme {args[0]}"
    if name in ("sgdisk", "gdisk") and {"-Z", "--zap-all", "-z", "--zap", "-o",
                                         "--clear"} & set(args):
        return f"{name} --zap-all"
    if name == "hdparm" and any(a.startswith("--security-erase") or
                                a == "--trim-sector-ranges" for a in args):
        return "hdparm --security-erase"
    if name == "cryptsetup" and {"luksFormat", "erase", "luksErase"} & set(args):
        return "cryptsetup luksFormat"
    return None
