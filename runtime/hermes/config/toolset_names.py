"""One vocabulary for toolsets: a group option (``coding``) or a list of toolset names.

``--toolsets``, ``HERMES_TOOLSETS`` and the override ``toolsets=`` each accept
either: ``toolsets=coding`` picks the option ``conf/toolsets/coding.yaml``;
``toolsets=file,terminal`` becomes ``toolsets.enabled=[file,terminal]``. Unknown
names are errors listing both vocabularies. The schema checks the names in
``toolsets.enabled`` and ``toolsets.disabled_tools`` with ``check_names``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from hermes.config.overrides import Override
from hermes.config.tool_catalog import tool_names, toolset_names
from hermes.errors import ConfigError, did_you_mean, one_of

GROUP = "toolsets"


def unknown_name(names: Iterable[str], kind: str, known: list[str]) -> str | None:
    """The error for the first of ``names`` not in ``known``, else None."""
    for name in names:
        if name not in known:
            return (f'unknown {kind} "{name}"{did_you_mean(name, known)} — '
                    f"known {kind}s: {one_of(known)}")
    return None


def toolset_error(names: Iterable[str]) -> str | None:
    return unknown_name(names, "toolset", toolset_names())


def tool_error(names: Iterable[str]) -> str | None:
    return unknown_name(names, "tool", tool_names())


def normalise_toolsets(requested: list[Override], options: Callable[[], list[str]]
                       ) -> list[Override]:
    """Rewrite ``toolsets=VALUE`` overrides into an option choice or an enabled list;
    ``options()`` lists the group's options.

    Only the last one counts (a command-line ``-t`` beats ``HERMES_TOOLSETS``).
    """
    picks = [o for o in requested if o.text.partition("=")[0] == GROUP]
    if not picks:
        return requested
    last = picks[-1]
    earlier = {id(o) for o in picks[:-1]}
    return [_rewrite(o, options()) if o is last else o for o in requested if id(o) not in earlier]


def _rewrite(override: Override, options: list[str]) -> Override:
    value = override.text.partition("=")[2].strip().strip("'\"").strip("[]")
    names = [name.strip() for name in value.split(",") if name.strip()]
    if len(names) == 1 and names[0] in options:
        return Override(f"{GROUP}={names[0]}", override.origin)
    known = toolset_names()
    for name in names:
        if name in options:
            raise ConfigError(
                f'"{name}" is a toolsets option and cannot be combined with other names — '
                f"give one option ({one_of(options)}) or toolset names ({one_of(known)})",
                source=override.origin, key=GROUP)
        if name not in known:
            hint = did_you_mean(name, [*options, *known])
            raise ConfigError(
                f'unknown toolset "{name}"{hint} — give an option ({one_of(options)}) '
                f"or comma-separated toolset names ({one_of(known)})",
                source=override.origin, key=GROUP)
    if not names:
        raise ConfigError(f"no toolsets given — options: {one_of(options)}; toolset names: "
                          f"{one_of(known)}", source=override.origin, key=GROUP)
    return Override(f"{GROUP}.enabled=[{','.join(names)}]", override.origin)
