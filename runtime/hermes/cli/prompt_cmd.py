"""``hermes prompt ...``: inspect the system prompt a new session of this profile gets.

Management-light: builds the runtime's services that feed the prompt (memory, tools,
skills) but starts nothing, creates no session, writes no ``state.db`` and never
calls a model.
"""

from __future__ import annotations

from collections.abc import Sequence

import typer

from hermes.agent.context_files import working_directory
from hermes.agent.prompt import (
    PromptInputs,
    PromptSection,
    build_sections,
    estimate_tokens,
    render,
)
from hermes.cli.app import new_app, out, state
from hermes.skills.index import skills_inputs

app = new_app("Inspect the system prompt that new sessions of this profile get.")

OVERRIDES_HELP = ("Hydra overrides for this run: key=value, group=option "
                  "(e.g. memory=none toolsets=minimal agent.personality='Be terse.').")
PLACEHOLDER_SESSION_ID = "<session-id>"
"""Stands in for the id a real session gets (no session is created)."""


@app.command()
def show(
    ctx: typer.Context,
    overrides: list[str] | None = typer.Argument(None, help=OVERRIDES_HELP),
    platform: str = typer.Option("cli", "--platform",
                                 help="The session's source: cli, cron, telegram, ..."),
    sizes_only: bool = typer.Option(False, "--sizes", help="Only the table of section sizes."),
) -> None:
    """Print the assembled system prompt, each section with its size."""
    sections = _sections(ctx, overrides or [], platform)
    out(f"System prompt of profile {state(ctx).home().name!r}, built for a placeholder "
        f"session id {PLACEHOLDER_SESSION_ID} (no session was created; a real session gets "
        "its own id and is frozen when it starts).")
    out()
    if not sizes_only:
        for section in sections:
            out(f"──── {_size_line(section.name, section.text)} ────")
            out(section.text)
            out()
    _size_table(sections)


def _sections(ctx: typer.Context, overrides: list[str], platform: str) -> list[PromptSection]:
    """The prompt's sections from the profile's composed runtime (nothing started)."""
    from hermes.config import compose_config
    from hermes.container import build_runtime

    st = state(ctx)
    home = st.home()
    settings = compose_config(home, st.environ, overrides).config
    runtime = build_runtime(home, settings, st.environ)
    try:
        container = runtime.container
        inputs = PromptInputs(
            home=home, memory=container.memory(),
            **skills_inputs(container.skills(), container.tools()),
            cwd=working_directory(settings.environment.kind, settings.environment.cwd),
            session_id=PLACEHOLDER_SESSION_ID, has_tools=bool(container.tools().names()),
            personality=settings.agent.personality, platform=platform)
        return build_sections(inputs)
    finally:
        runtime.close()  # stops only what resolving the services above may have started


def _size_line(name: str, text: str) -> str:
    return f"{name}: {len(text):,} chars, ~{estimate_tokens(text):,} tokens"


def _size_table(sections: Sequence[PromptSection]) -> None:
    rows = [(s.name, len(s.text), s.tokens) for s in sections]
    whole = render(sections)
    rows.append(("total", len(whole), estimate_tokens(whole)))
    width = max(len(name) for name, _, _ in rows)
    out(f"{'section':<{width}}  {'chars':>8}  {'tokens':>8}")
    for name, chars, tokens in rows:
        out(f"{name:<{width}}  {chars:>8,}  {'~' + format(tokens, ','):>8}")
