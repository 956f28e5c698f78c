"""``hermes acp``: serve the Agent Client Protocol on stdin/stdout, for an editor."""

from __future__ import annotations

import os
import stat
import sys
from typing import Any

import typer

from hermes.cli.chat_cmd import OVERRIDES_HELP
from hermes.errors import UserError


def acp(
    ctx: typer.Context,
    overrides: list[str] | None = typer.Argument(None, help=OVERRIDES_HELP),
) -> None:
    """Serve the Agent Client Protocol on stdin/stdout for an editor (Zed, JetBrains, ...).

    The editor starts this command; pick the profile with -p as everywhere."""
    if sys.stdin.isatty():
        raise UserError("hermes acp talks to an editor over stdin/stdout; start it from "
                        "the editor's agent settings (README: Editors), not at a terminal")
    _check_pipes()
    from hermes.cli.chat_cmd import open_runtime, start_litellm_import

    with open_runtime(ctx, list(overrides or [])) as runtime:
        # the first prompt then finds the model layer loaded
        start_litellm_import(runtime.container.model())
        _serve(runtime)


def _check_pipes() -> None:
    """The protocol streams over pipes (or sockets), as an editor connects them; a
    regular file cannot be waited on."""
    for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout)):
        if stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            raise UserError(f"hermes acp needs pipes on stdin and stdout, as an editor "
                            f"connects them; {name} is a file here (pipe it: `... | hermes "
                            "acp | ...`)")


def _serve(runtime: Any) -> None:
    import asyncio

    from hermes.acp.server import serve
    from hermes.acp.stdio import open_streams, reserve_stdout

    output = reserve_stdout()

    async def main() -> None:
        reader, writer = await open_streams(output)
        await serve(runtime.container.conversations(), reader, writer,
                    runtime.container.learning())

    asyncio.run(main())
