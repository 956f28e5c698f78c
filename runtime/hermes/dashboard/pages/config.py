"""The Config page: a profile's composed config, every key with the layer and file that
set it and what it overrode (``hermes.config.explain``, as ``hermes config explain``),
edited through ``hermes config set``'s own ``set_value`` (the same validation and
refusals, nothing written on a refusal, never ``--force``: a key a read-only system layer
sets is shown read-only), secrets shown only as set or unset, and the sandbox as
``hermes sandbox explain`` describes it.

No secret's value reaches the page: the composed config's ``display`` is redacted, a
secret key's earlier values are redacted by ``explain_key``, a form never echoes a secret
back, and a refusal's line has the submitted value of a secret replaced.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from hermes.config.drift import DeclaredElsewhere
from hermes.config.explain import Explained, explain_all
from hermes.credentials import REDACTED, Secrets, is_secret_key, is_secret_name
from hermes.dashboard.notices import done, leave
from hermes.dashboard.page import Page, open_page
from hermes.errors import UserError

router = APIRouter()
PageOf = Annotated[Page, Depends(open_page)]
REFERENCE = re.compile(r"\$\{secret:([^}]+)\}")
IN_FILE = re.compile(r"^(.*?) \((/.*)\)$")


@dataclass(frozen=True)
class Row:
    """One key as the page shows it."""

    key: str
    value: str
    layer: str
    file: str
    overrode: list[str]
    read_only: str | None
    """The system layer that sets it (then the page offers no edit)."""
    secret: bool


@dataclass(frozen=True)
class SecretRow:
    """A secret the profile has or refers to: set or unset, and where from."""

    name: str
    set: bool
    where: str


def _base(page: Page) -> str:
    return f"/p/{quote(page.profile)}/config"


def _environ(page: Page) -> Mapping[str, str]:
    return page.views.manager.environ


@router.get("/p/{profile}/config", response_class=HTMLResponse)
def config_page(page: PageOf) -> HTMLResponse:
    params = page.request.query_params
    key = params.get("key", "")
    return _index(page, form={"key": key, "value": "" if _is_secret(key) else
                              params.get("value", "")})


@router.post("/p/{profile}/config", response_class=HTMLResponse)
async def set_key(page: PageOf) -> Response:
    """``hermes config set KEY VALUE`` (never ``--force``), from the page's form."""
    from hermes.config.edit import set_value

    form = await page.request.form()
    key = str(form.get("key", "")).strip()
    value = str(form.get("value", ""))
    try:
        edit = set_value(page.home, key, value, _environ(page))
    except UserError as exc:
        refill = {"key": key, "value": "" if _is_secret(key) else value}
        said = exc.without_override() if isinstance(exc, DeclaredElsewhere) else str(exc)
        return _index(page, _hide(said, value if _is_secret(key) else ""), refill, 400)
    shown = REDACTED if edit.where.endswith(".env") or _is_secret(key) else value
    return _done(page, key, [f"{key} = {shown}  ({edit.where})", *edit.notes])


@router.post("/p/{profile}/config/unset", response_class=HTMLResponse)
async def unset_key(page: PageOf) -> Response:
    """``hermes config unset KEY``: the profile's value goes, a lower layer's shows."""
    from hermes.config.edit import unset_value

    key = str((await page.request.form()).get("key", "")).strip()
    try:
        edit = unset_value(page.home, key, _environ(page))
    except UserError as exc:
        return _index(page, str(exc), code=400)
    return _done(page, key, [f"unset {key}  ({edit.where})", *edit.notes])


def _done(page: Page, key: str, lines: list[str]) -> RedirectResponse:
    """Back to the page at ``key``'s row, saying what was done."""
    said = leave(page.request, "\n".join(lines))
    return RedirectResponse(f"{_base(page)}?done={said}#{quote(_anchor(key))}",
                            status_code=303)


def _is_secret(key: str) -> bool:
    """A secret's name, or a key in or under a secret-keyed value (``provider.api_key.x``)."""
    return is_secret_name(key) or any(map(is_secret_key, key.split(".")))


def _hide(message: str, secret: str) -> str:
    return message.replace(secret, REDACTED) if secret.strip() else message


def _index(page: Page, error: str | None = None, form: dict[str, str] | None = None,
           code: int = 200) -> HTMLResponse:
    from hermes.config import compose_config

    params = page.request.query_params
    rows: list[Row] = []
    secrets: list[SecretRow] = []
    sandbox: list[str] = []
    problem = None
    try:
        composed = compose_config(page.home, _environ(page))
        rows = _rows(page, explain_all(composed))
        secrets = _secrets(page, composed.raw)
        sandbox = _sandbox(page, composed.config)
    except UserError as exc:
        problem = str(exc)
    wanted = params.get("q", "").strip().lower()
    shown = [row for row in rows if wanted in row.key.lower()] if wanted else rows
    return page.render(
        "config/index.html", "config", code=code, rows=shown, total=len(rows),
        q=params.get("q", ""),
        secrets=secrets, sandbox=sandbox, problem=problem, error=error,
        form=form or {"key": "", "value": ""}, base=_base(page),
        done=done(page.request), file=str(page.home.config_file), anchor=_anchor)


def _anchor(key: str) -> str:
    return "key-" + re.sub(r"[^A-Za-z0-9_.-]", "_", key)


def _rows(page: Page, explained: list[Explained]) -> list[Row]:
    from hermes.config.drift import system_setter
    from hermes.config.layers import load_layers

    layers = load_layers(page.home, _environ(page))
    rows = []
    for item in explained:
        secret = _is_secret(item.key)
        layer, file = _where(item.set_by, secret)
        system = system_setter(layers, item.key)
        rows.append(Row(item.key, _shown(item.value, secret), layer, file,
                        [f"{_shown(old, secret)} from {_where(where, secret)[0]}"
                         for where, old in item.overrode],
                        system.where if system else None, secret))
    return rows


def _where(set_by: str | None, secret: bool) -> tuple[str, str]:
    """``(layer, file)`` of a source; an override's text is left out for a secret."""
    if set_by is None:
        return "schema default", ""
    found = IN_FILE.match(set_by)
    if found:
        return found[1], found[2]
    origin, _, text = set_by.partition(": ")
    return (origin, "") if secret else (origin, text)


def _shown(value: Any, secret: bool) -> str:
    """A value as one line; a secret's only as set or unset."""
    if secret or value == REDACTED:
        unset = value in (None, "") or (isinstance(value, str) and value.startswith("<unset"))
        return "unset" if unset else "set"
    if isinstance(value, str):
        return value
    import yaml

    return str(yaml.safe_dump(value, default_flow_style=True, width=10**6)
               ).strip().removesuffix("...").strip()


def _secrets(page: Page, raw: dict[str, Any]) -> list[SecretRow]:
    """The ``.env`` names and every ``${secret:NAME}`` the config refers to."""
    found = Secrets.for_config(page.home.env_file, _environ(page), raw.get("secrets"))
    names = sorted({*found.dotenv, *REFERENCE.findall(repr(raw))})
    rows = []
    for name in names:
        where = found.from_environment(name) or (
            str(page.home.env_file) if found.dotenv.get(name) else
            "environment" if _environ(page).get(name) else "")
        rows.append(SecretRow(name, bool(found.get(name)), where))
    return rows


def _sandbox(page: Page, config: Any) -> list[str]:
    from hermes.environments.sandbox.explain import explain_config, render

    try:
        return render(explain_config(page.home, _environ(page), config), page.profile)
    except UserError as exc:
        return [f"problem: {exc}"]
