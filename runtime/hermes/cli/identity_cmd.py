"""``hermes identity link | list | unlink``: one person across platforms
(``hermes.identities``)."""

from __future__ import annotations

import time

import typer

from hermes.cli.app import new_app, out, state
from hermes.errors import did_you_mean, one_of
from hermes.identities import CODE_TTL, IdentityError, IdentityStore, parse_address

app = new_app("One person across platforms: linked addresses (platform:user_id) are one user "
              "for session_search; each conversation stays its own.")


def _store(ctx: typer.Context) -> IdentityStore:
    return IdentityStore(state(ctx).home().path)


def _enabled(ctx: typer.Context, addresses: list[str]) -> list[str]:
    """``addresses`` when each is well formed and names an enabled platform; else
    ``IdentityError`` (exit 2) before anything is written."""
    from hermes.config import compose_config

    parsed = [parse_address(a) for a in addresses]
    st = state(ctx)
    enabled = compose_config(st.home(), st.environ, []).config.platforms.enabled
    for address in parsed:
        platform = address.partition(":")[0]
        if platform not in enabled:
            raise IdentityError(f"{address}: no platform {platform!r} is enabled"
                                f"{did_you_mean(platform, enabled)} (enabled: "
                                f"{one_of(enabled) if enabled else 'none'})")
    return parsed


@app.command()
def link(ctx: typer.Context,
         addresses: list[str] = typer.Argument(..., help="platform:user_id, e.g. "
                                               "telegram:123 discord:456."),
         code: bool = typer.Option(False, "--code", help="For one address: print a code "
                                   "that the person sends as `/link CODE` from their other "
                                   "account.")) -> None:
    """Make ADDRESSES one person (or, with --code, let the person link their other
    account themselves)."""
    parsed = _enabled(ctx, addresses)
    if code:
        if len(parsed) != 1:
            raise IdentityError("--code goes with one address: the account the code links to")
        issued = _store(ctx).issue_code(parsed[0])
        out(f"link code for {parsed[0]}: {issued} — send `/link {issued}` to the agent from "
            f"the other account within {int(CODE_TTL // 60)} minutes")
        return
    person = _store(ctx).link(parsed)
    out(f"linked {', '.join(person.addresses)}: one user for session_search")


@app.command("list")
def list_(ctx: typer.Context) -> None:
    """Linked people, one line each."""
    people = _store(ctx).people()
    if not people:
        out("no linked identities (`hermes identity link telegram:123 discord:456`)")
    for person in people:
        since = time.strftime("%Y-%m-%d %H:%M", time.localtime(person.linked_at))
        out(f"{person.id}  {'  '.join(person.addresses)}  (since {since})")


@app.command()
def unlink(ctx: typer.Context,
           address: str = typer.Argument(..., help="platform:user_id, as `identity list` "
                                                   "shows it.")) -> None:
    """Take ADDRESS out of the person it is linked to."""
    before = _store(ctx).unlink(address)
    rest = [a for a in before.addresses if a != address.strip()]
    out(f"unlinked {address.strip()}" + (f" from {', '.join(rest)}" if len(rest) > 1 else
                                          f"; {rest[0]} is linked to nobody now"))
