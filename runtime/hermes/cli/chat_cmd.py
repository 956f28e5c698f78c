"""``hermes chat``: talk to the agent, interactively or one-shot (``-q`` / ``hermes -z``)."""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import typer

from hermes.agent.prechecks import require_key as check_key
from hermes.cli.app import state
from hermes.errors import UserError

OVERRIDES_HELP = ("Hydra overrides for this run: key=value, group=option "
                  "(e.g. provider=anthropic provider.model=claude-sonnet-4-5).")


def chat(
    ctx: typer.Context,
    overrides: list[str] | None = typer.Argument(None, help=OVERRIDES_HELP),
    query: str | None = typer.Option(None, "--query", "-q",
                                     help="Ask once: print only the final answer on stdout "
                                     "(- reads the question from standard input)."),
    oneshot: str | None = typer.Option(None, "-z", hidden=True,
                                       help="-q as given by `hermes -z TEXT`."),
    continue_: bool = typer.Option(False, "--continue", "-c",
                                   help="Continue the most recent session."),
    resume: str | None = typer.Option(None, "--resume", "-r", help="Resume session ID."),
    toolsets: str | None = typer.Option(None, "--toolsets", "-t",
                                        help="Toolsets for this run: a toolsets option "
                                        "(coding, default, minimal, research) or toolset "
                                        "names (file,terminal)."),
    max_iterations: int | None = typer.Option(None, "--max-iterations", min=1,
                                              help="Model calls per turn before the grace call."),
    yolo: bool = typer.Option(False, "--yolo", help="Run dangerous commands without asking "
                              "(the hard blocklist still applies)."),
    no_stream: bool = typer.Option(False, "--no-stream", help="Wait for whole replies."),
    accept_hooks: bool = typer.Option(False, "--accept-hooks",
                                      help="Accept the config's shell hooks without asking "
                                      "(recorded in the profile)."),
    image: list[str] | None = typer.Option(None, "--image", metavar="PATH",
                                           help="Attach an image (PNG, JPEG, GIF, WebP) to "
                                           "the question; repeatable."),
) -> None:
    """Chat with the agent. With -q, answer one question and exit."""
    from hermes.cli.chat_query import read_question

    if oneshot is not None and query is not None:
        raise UserError("-z and -q both ask a question; give one")
    flag = "-z" if oneshot is not None else "-q"
    query = read_question(query if oneshot is None else oneshot, flag, list(overrides or []),
                          sys.stdin)
    extra = list(overrides or [])
    if toolsets is not None:  # an option (coding) or toolset names; composition checks them
        names = ",".join(t.strip() for t in toolsets.split(",") if t.strip())
        extra.append(f"toolsets={names}")
    if max_iterations:
        extra.append(f"agent.max_iterations={max_iterations}")
    if continue_ and resume:
        raise UserError("--continue and --resume are exclusive; pick one")
    if image and query is None:
        raise UserError("--image goes with -q or -z; in chat, attach with /image PATH")
    with open_runtime(ctx, extra, accept_hooks, ask=query is None and sys.stdin.isatty()) \
            as runtime:
        from hermes.cli import chat_repl

        if query is not None:
            code = chat_repl.oneshot(runtime, query, resume=resume, continue_=continue_,
                                     yolo=yolo, stream=not no_stream, images=image or ())
            raise typer.Exit(code)
        if not sys.stdin.isatty():
            raise UserError("interactive chat needs a terminal; use `hermes chat -q TEXT`")
        chat_repl.repl(runtime, resume=resume, continue_=continue_, yolo=yolo,
                       stream=not no_stream, while_typing=functools.partial(
                           start_litellm_import, runtime.container.model()))


@contextmanager
def open_runtime(ctx: typer.Context, overrides: list[str], accept_hooks: bool = False,
                 ask: bool = False) -> Iterator[Any]:
    """Compose, check credentials, then start the runtime.

    litellm is not imported here: a one-shot imports it at its first model call (an
    import in a thread beside composing was measured 5 % slower: both hold the GIL), and
    interactive chat starts it in a thread once its prompt shows, while the user types."""
    from hermes.config import compose_config
    from hermes.container import open_runtime as start_runtime

    st = state(ctx)
    home = st.home()
    composed = compose_config(home, st.environ, overrides)
    if composed.config.hooks:  # asked before anything starts, as the key is checked
        check_key(composed.config, composed.raw, home.name, home.env_file)
        home.ensure()
        _settle_hooks(home, composed.config.hooks, accept_hooks, ask)
    runtime = start_runtime(home, composed.config, st.environ, raw=composed.raw)
    runtime.container.outbound().sender = direct_sender(runtime)
    left_running = False
    try:
        yield runtime
    finally:
        from hermes.cli.chat_learning import finish_reviews

        try:  # a learning review still running: waited for, or left to the server
            left_running = finish_reviews(runtime, st.background)
        finally:
            if not left_running:
                _close(runtime, st.background)


def _close(runtime: Any, background: list[Callable[[], None]] | None) -> None:
    """Close ``runtime`` now, or — in the warm server's child — once the client has its
    exit status: closing the session store checkpoints its journal (an fsync, ~20 ms
    the user would wait for)."""
    if background is None:
        runtime.close()
    else:
        background.append(runtime.close)


def direct_sender(runtime: Any) -> Any:
    """``send_message`` from a chat: the platform connected for the moment, as ``hermes
    cron run`` delivers (``hermes.gateway.cron_send``)."""

    def send(target: Any, text: str) -> None:
        import logging

        from hermes.gateway.cron_send import direct_deliver

        direct_deliver(runtime, logging.getLogger("hermes.messaging"))(target, text)

    return send


def _settle_hooks(home: Any, hooks: Any, accept: bool, ask: bool) -> None:
    """Shell hooks not accepted yet: accepted with --accept-hooks, else asked about at a
    terminal (one-shots skip them with a warning when the runtime loads)."""
    from hermes.cli.app import confirm
    from hermes.plugins.shell_hooks import settle_consent

    def question(spec: Any) -> bool:
        return confirm(f"the config runs `{spec.command}` on {spec.describe().split(':')[0]}, "
                       "with your user's rights; allow it?", refusal="the hook stays off")

    settle_consent(home, hooks, accept=accept, ask=question if ask else None)


def start_litellm_import(model: Any) -> None:
    """litellm, imported on a thread while the person types, when ``model``'s calls go
    through it (``models.warm.preload_litellm``)."""
    from hermes.models.warm import preload_litellm

    threading.Thread(target=preload_litellm, args=([model],), name="litellm-import",
                     daemon=True).start()
