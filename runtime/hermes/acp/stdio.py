"""Standard input and output as the ACP connection, and nothing else on them.

ACP owns stdout: one stray line (a library's notice, a plugin's print) would break
the editor's JSON-RPC stream. So the protocol writes to a duplicate of the original
stdout and file descriptor 1 is pointed at stderr, where anything else printed by
this process (or inherited by what it starts) lands, as the editor's log.
"""

from __future__ import annotations

import asyncio
import os
import sys

READ_LIMIT = 50 * 1024 * 1024
"""Longest JSON-RPC line accepted (a prompt with embedded files can be large)."""


def reserve_stdout() -> int:
    """A descriptor of the original stdout for the protocol; fd 1 becomes stderr."""
    sys.stdout.flush()
    protocol = os.dup(1)
    os.dup2(2, 1)
    return protocol


async def open_streams(output_fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """stdin as a reader and ``output_fd`` as a writer, on the running loop."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(output_fd, "wb", buffering=0))
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)
