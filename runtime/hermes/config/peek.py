"""A cheap look at a profile's provider and model, for ``hermes profile list``.

Reads the layers' YAML only (no Hydra): the provider option the layers choose
and the last ``provider.model`` any layer or that option sets. Environment and
command-line overrides are not applied here.
"""

from __future__ import annotations

from collections.abc import Mapping

from hermes.config.layers import layer_choices, load_layers, option_file, read_yaml
from hermes.errors import ConfigError
from hermes.home import Home


def peek_model(home: Home, environ: Mapping[str, str]) -> tuple[str, str]:
    """``(provider option, model)`` for ``home``; ``("?", "<error>")`` if unreadable."""
    env = {k: v for k, v in environ.items() if k != "HERMES_HOME"}
    try:
        layers = load_layers(home, env)
    except ConfigError:
        return "?", "(config error: run `hermes config validate`)"
    choice = layer_choices(layers).get("provider")
    if choice is None:
        return "?", "?"
    option = choice[0]
    model = "?"
    path = option_file(layers, "provider", option)
    if path is not None:
        model = str(read_yaml(path).get("model", "?"))
    for layer in layers:
        provider = layer.body.get("provider")
        if isinstance(provider, dict) and "model" in provider:
            model = str(provider["model"])
    return option, model
