"""``hermes pairing approve | list | revoke``: who may talk to the agent besides the
platforms' ``allowed_users`` (``hermes.gateway.messaging.pairing``)."""

from __future__ import annotations

import time

import typer

from hermes.cli.app import new_app, out, state
from hermes.gateway.messaging.pairing import CODE_TTL, PairingStore

app = new_app("Pairing: people not on a messaging platform's allowlist ask the bot in a "
              "direct message and get a code; approving it lets them talk to the agent.")


def _store(ctx: typer.Context) -> PairingStore:
    return PairingStore(state(ctx).home().pairing_dir)


@app.command()
def approve(ctx: typer.Context,
            platform: str = typer.Argument(..., help="The platform's name, as under "
                                                     "platforms.enabled (e.g. telegram)."),
            code: str = typer.Argument(..., help="The 8-character code they were sent.")
            ) -> None:
    """Let in the person who was sent CODE on PLATFORM (5 wrong codes lock pairing for
    an hour)."""
    paired = _store(ctx).approve(platform, code)
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
                "(too many wrong codes)")


@app.command()
def revoke(ctx: typer.Context,
           platform: str = typer.Argument(..., help="The platform's name."),
           user_id: str = typer.Argument(..., help="The user id, as `pairing list` shows it.")
           ) -> None:
    """Take back a pairing: the user is refused from their next message on."""
    revoked = _store(ctx).revoke(platform, user_id)
    out(f"revoked {platform} user {revoked.user_id}; allowed_users in config still apply")
