"""``hermes pairing approve | list | revoke | unlock``: who may talk to the agent besides the
platforms' ``allowed_users`` (``hermes.gateway.messaging.pairing``)."""

from __future__ import annotations

import time

import typer

from hermes.cli.app import new_app, out, state
from hermes.gateway.messaging.pairing import CODE_TTL, PairingStore, known_platform

app = new_app("Pairing: people not on a messaging platform's allowlist ask the bot in a "
              "direct message and get a code; approving it lets them talk to the agent.")


def _store(ctx: typer.Context) -> PairingStore:
    return PairingStore(state(ctx).home().pairing_dir)


def _platform(ctx: typer.Context, store: PairingStore, platform: str) -> str:
    """``platform`` when the profile enables it or has codes for it; a typo is refused
    (exit 2) before any pairing file is touched."""
    from hermes.config import compose_config

    st = state(ctx)
    enabled = compose_config(st.home(), st.environ, []).config.platforms.enabled
    return known_platform(store, enabled, platform)


@app.command()
def approve(ctx: typer.Context,
            platform: str = typer.Argument(..., help="The platform's name, as under "
                                                     "platforms.enabled (e.g. telegram)."),
            code: str = typer.Argument(..., help="The 8-character code they were sent.")
            ) -> None:
    """Let in the person who was sent CODE on PLATFORM (a wrong code changes nothing)."""
    store = _store(ctx)
    paired = store.approve(_platform(ctx, store, platform), code)
    name = f" ({paired.user_name})" if paired.user_name else ""
    out(f"paired {platform} user {paired.user_id}{name}: they can talk to the agent now")


@app.command("list")
def list_(ctx: typer.Context) -> None:
    """Codes waiting for approval (a fingerprint, never the code) and paired users."""
    store = _store(ctx)
    now = time.time()
    pending, paired = store.pending(), store.paired()
    out(f"waiting ({len([p for p in pending if not p.expired])}):" if pending else
        "waiting: none")
    for entry in pending:
        age = f"{int((now - entry.created_at) // 60)} min ago"
        when = "expired" if entry.expired else \
            f"{age}, valid {max(0, int((entry.created_at + CODE_TTL - now) // 60))} min more"
        out(f"  {entry.platform:<10} {entry.user_id:<16} {entry.user_name or '-':<16} "
            f"code {entry.fingerprint}…  {when}")
    out(f"paired ({len(paired)}):" if paired else "paired: none")
    for user in paired:
        since = time.strftime("%Y-%m-%d %H:%M", time.localtime(user.approved_at))
        out(f"  {user.platform:<10} {user.user_id:<16} {user.user_name or '-':<16} since {since}")
    for platform in store.platforms():
        if store.locked_until(platform) > now:
            out(f"pairing on {platform} is locked until "
                f"{time.strftime('%H:%M', time.localtime(store.locked_until(platform)))} "
                f"(strangers get no codes; `hermes pairing unlock {platform}` lifts it)")


@app.command()
def revoke(ctx: typer.Context,
           platform: str = typer.Argument(..., help="The platform's name."),
           user_id: str = typer.Argument(..., help="The user id, as `pairing list` shows it.")
           ) -> None:
    """Take back a pairing: the user is refused from their next message on."""
    revoked = _store(ctx).revoke(platform, user_id)
    out(f"revoked {platform} user {revoked.user_id}; allowed_users in config still apply")


@app.command()
def unlock(ctx: typer.Context,
           platform: str | None = typer.Argument(None, help="The platform's name (default: "
                                                            "every locked one).")) -> None:
    """Lift a lock on pairing (strangers get codes again)."""
    store = _store(ctx)
    if platform is not None:
        name = _platform(ctx, store, platform)
        out(f"unlocked pairing on {name}" if store.unlock(name) else
            f"pairing on {name} is not locked")
        return
    unlocked = [name for name in store.platforms() if store.unlock(name)]
    for name in unlocked:
        out(f"unlocked pairing on {name}")
    if not unlocked:
        out("pairing is not locked on any platform")
