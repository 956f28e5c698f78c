"""Config layers: which YAML files take part in composition, in which order.

Later layers win:

1. ``packaged`` — ``conf/config.yaml`` and the groups beside it, shipped in the wheel;
2. ``system`` — each directory in ``HERMES_CONFIG_LAYERS`` (``:``-separated), as
   rendered by the NixOS module or baked into an image: ``config.yaml`` plus
   optional group options in ``conf/<group>/`` for every profile, then
   ``profiles/<name>/config.yaml`` (and ``profiles/<name>/conf/``) for profile
   ``<name>`` alone — one directory serves all the profiles of a root, so a gateway
   serving several profiles gives each its own settings;
3. ``extends`` — profiles or examples the profile extends (``extends: coder``);
4. ``profile`` — ``$HERMES_HOME/config.yaml`` plus ``$HERMES_HOME/conf/<group>/``.

Environment and command-line overrides come on top (see ``overrides.py``).
This module reads YAML only: no Hydra, no OmegaConf, so it is cheap enough for
``hermes profile list``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from hermes.config.duplicates import DuplicateKeyFound, StrictLoader
from hermes.config.groups import GROUPS
from hermes.errors import ConfigError, did_you_mean, one_of
from hermes.home import NAME_PATTERN, PROFILES_DIR, Home

LAYERS_ENV = "HERMES_CONFIG_LAYERS"


@dataclass(frozen=True)
class Layer:
    """One config layer: the values of its ``config.yaml`` and its group choices."""

    label: str
    """Who this layer is: ``packaged``, ``system``, ``extends:NAME`` or ``profile``."""
    file: Path | None
    """The layer's ``config.yaml`` (may not exist yet for a new profile)."""
    groups_dir: Path | None
    """Directory holding this layer's own group options (``<group>/<option>.yaml``)."""
    body: dict[str, Any] = field(default_factory=dict)
    """Config values, without the ``defaults`` list and ``extends``."""
    choices: dict[str, str] = field(default_factory=dict)
    """Group options this layer picks, e.g. ``{"provider": "anthropic"}``."""

    @property
    def where(self) -> str:
        return f"{self.label} ({self.file})" if self.file else self.label


def package_dir(name: str, packaged: str | None = None) -> Path:
    """A data directory shipped with the package (``conf``, ``profiles``).

    Installed wheels carry them inside ``hermes/`` (as ``packaged`` when its name there
    differs); a source checkout keeps them at the repository's top level.
    """
    here = Path(__file__).resolve().parent.parent
    inside = here / (packaged or name)
    return inside if inside.is_dir() else here.parent.parent / name


def packaged_conf_dir() -> Path:
    return package_dir("conf")


def examples_dir() -> Path:
    # ``hermes/profiles`` is the Python package that manages homes.
    return package_dir("profiles", "example_profiles")


def read_yaml(path: Path, *, text: str | None = None) -> dict[str, Any]:
    """Load a YAML mapping; errors name the file and line. Missing file = empty."""
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise ConfigError(f"cannot read: {exc.strerror}", source=str(path)) from exc
    try:
        data = yaml.load(text, Loader=StrictLoader)
    except DuplicateKeyFound as exc:
        raise exc.duplicate.error(str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"invalid YAML: {problem}", source=f"{path}{line}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"expected a mapping of settings, got {type(data).__name__}", source=str(path)
        )
    return data


def split_defaults(data: dict[str, Any], source: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """Separate a layer's ``defaults`` list (group choices) from its values.

    Accepts ``- provider: x``, ``- override provider: x`` and
    ``- override /provider: x``; ``_self_`` is implied.
    """
    if "hydra" in data:  # Hydra's own settings: a layer may not replace them
        raise ConfigError("unknown key (reserved by Hydra); remove it", source=str(source),
                          key="hydra")
    body = {k: v for k, v in data.items() if k not in ("defaults", "extends")}
    entries = data.get("defaults") or []
    if not isinstance(entries, list):
        raise ConfigError("expected a list of group choices", source=str(source), key="defaults")
    choices: dict[str, str] = {}
    for entry in entries:
        if entry == "_self_":
            continue
        if not (isinstance(entry, dict) and len(entry) == 1):
            raise ConfigError(
                f"expected `override GROUP: OPTION`, got {entry!r}",
                source=str(source),
                key="defaults",
            )
        (raw_key, option), = entry.items()
        group = str(raw_key).removeprefix("override").strip().lstrip("/")
        if group not in GROUPS:
            raise ConfigError(
                f'unknown config group "{group}"{did_you_mean(group, GROUPS)}; '
                f"groups: {one_of(GROUPS)}",
                source=str(source),
                key="defaults",
            )
        if not isinstance(option, str) or not option:
            raise ConfigError(
                f"{group}: expected an option name, got {option!r}",
                source=str(source),
                key="defaults",
            )
        choices[group] = option
    return body, choices


def load_layer(
    label: str, file: Path, groups_dir: Path | None, *, text: str | None = None
) -> tuple[Layer, Any]:
    """Read one layer; returns the layer and its raw ``extends`` value."""
    data = read_yaml(file, text=text)
    body, choices = split_defaults(data, file)
    return Layer(label, file, groups_dir, body, choices), data.get("extends")


def system_layer_dirs(environ: Mapping[str, str]) -> list[Path]:
    raw = environ.get(LAYERS_ENV, "")
    return [Path(part).expanduser() for part in raw.split(":") if part.strip()]


def _extends_target(
    home: Home, name: str, source: Path, current: str
) -> tuple[str, Path, Path | None]:
    """Find what ``extends: name`` refers to: a profile under the root, else an example.

    ``current`` is the profile whose file says ``extends``; a profile naming
    itself means the example of that name.
    """
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ConfigError(f"expected a profile or example name, got {name!r}",
                          source=str(source), key="extends")
    if name == "default":
        return "extends:default", home.root / "config.yaml", home.root / "conf"
    profile = home.root / PROFILES_DIR / name
    if profile.is_dir() and name != current:
        return f"extends:{name}", profile / "config.yaml", profile / "conf"
    example = examples_dir() / name
    if example.is_dir():
        return f"extends:example {name}", example / "config.yaml", example / "conf"
    known = [p.name for p in examples_dir().iterdir() if p.is_dir()]
    raise ConfigError(
        f'no profile or example named "{name}"{did_you_mean(name, known)}; '
        f"examples: {one_of(known)}",
        source=str(source),
        key="extends",
    )


def load_layers(
    home: Home, environ: Mapping[str, str], *, profile_text: str | None = None
) -> list[Layer]:
    """Every layer for ``home``, lowest precedence first.

    ``profile_text`` stands in for the profile's ``config.yaml`` (used to
    validate an edit before it is written).
    """
    conf = packaged_conf_dir()
    layers = [_packaged_layer(conf)]
    for directory in system_layer_dirs(environ):
        layers.extend(_system_layers(directory, home.name))
    profile, extends = load_layer("profile", home.config_file, home.conf_dir, text=profile_text)
    chain: list[Layer] = []
    seen = {str(home.path)}
    source, current = home.config_file, home.name
    while extends is not None:
        label, file, groups = _extends_target(home, extends, source, current)
        current = extends if label == f"extends:{extends}" else ""
        if str(file.parent) in seen:
            raise ConfigError(f'"{extends}" extends itself in a cycle', source=str(source),
                              key="extends")
        seen.add(str(file.parent))
        layer, extends = load_layer(label, file, groups)
        chain.append(layer)
        source = file
    return layers + chain[::-1] + [profile]


def _system_layers(directory: Path, profile: str) -> list[Layer]:
    """One system layer directory: what it sets for every profile, then for ``profile``.

    Its ``extends`` is ignored: a system layer sits below every profile.
    """
    shared, _ = load_layer("system", directory / "config.yaml", directory / "conf")
    own_dir = directory / PROFILES_DIR / profile
    if not own_dir.is_dir():
        return [shared]
    own, _ = load_layer(f"system:{profile}", own_dir / "config.yaml", own_dir / "conf")
    return [shared, own]


@cache
def _packaged_layer(conf: Path) -> Layer:
    layer, _ = load_layer("packaged", conf / "config.yaml", conf)
    return layer


def group_dirs(layers: list[Layer]) -> list[Path]:
    """Directories searched for group options, highest precedence first."""
    return [layer.groups_dir for layer in reversed(layers) if layer.groups_dir is not None]


def option_file(layers: list[Layer], group: str, option: str) -> Path | None:
    """The file that defines ``group/option``: the highest layer that has it."""
    for directory in group_dirs(layers):
        candidate = directory / group / f"{option}.yaml"
        if candidate.is_file():
            return candidate
    return None


def available_options(layers: list[Layer], group: str) -> list[str]:
    names: set[str] = set()
    for directory in group_dirs(layers):
        if (directory / group).is_dir():
            names.update(p.stem for p in (directory / group).glob("*.yaml"))
    return sorted(names)


def layer_choices(layers: list[Layer]) -> dict[str, tuple[str, Layer]]:
    """The option each group gets from the layers, and the layer that chose it."""
    chosen: dict[str, tuple[str, Layer]] = {}
    for layer in layers:
        for group, option in layer.choices.items():
            chosen[group] = (option, layer)
    return chosen
