"""Sweeps: Hydra's multirun override grammar expanded into single-run override lists.

``provider=openai,anthropic provider.model=a,b`` is the cross product of its choices
(four runs), in the order Hydra's basic sweeper uses: the first sweep varies slowest.
Every word is parsed by Hydra's own override parser, so quoting, ``range(1,4)``,
``+key=...`` and ``~key`` mean exactly what they mean to ``hydra --multirun``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from hermes.errors import ConfigError

MAX_RUNS = 1000
"""A sweep expanding to more runs than this is refused (almost certainly a mistake)."""


def expand_sweeps(words: Sequence[str], origin: str = "command line") -> list[list[str]]:
    """The override list of every run that ``words`` sweep over (``[[]]`` for none).

    Raises ``ConfigError`` naming the word on a parse error or an unsupported sweep.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import ValueType
    from hydra.errors import HydraException

    parser = OverridesParser.create()
    axes: dict[str, list[str]] = {}
    for word in words:
        try:
            (parsed,) = parser.parse_overrides([word])
        except HydraException as exc:
            first = str(exc).strip().splitlines()[0]
            raise ConfigError(f"bad override {word!r}: {first}", source=origin) from exc
        key = parsed.get_key_element()
        if key in axes:
            raise ConfigError(f"{key!r} is given twice; list its values once: "
                              f"{key}=a,b", source=origin)
        if not parsed.is_sweep_override():
            axes[key] = [word]
        elif parsed.is_discrete_sweep() and parsed.value_type != ValueType.GLOB_CHOICE_SWEEP:
            try:
                axes[key] = [f"{key}={value}" for value in parsed.sweep_string_iterator()]
            except HydraException as exc:
                raise ConfigError(f"bad sweep {word!r}: {exc}", source=origin) from exc
        else:
            raise ConfigError(f"bad sweep {word!r}: only lists (a,b) and range(...) "
                              "are supported", source=origin)
    runs = [list(run) for run in itertools.product(*axes.values())]
    if len(runs) > MAX_RUNS:
        raise ConfigError(f"the sweep expands to {len(runs)} runs (at most {MAX_RUNS})",
                          source=origin)
    return runs
