"""What ``hermes plugins list | enable | disable | info`` do, without a runtime.

Plugins are opt-in: ``enable`` adds the plugin to ``plugins.enabled`` in the
profile's own ``config.yaml`` (``disable`` moves it to ``plugins.disabled``, which
always wins, and which a read-only system layer may hold too). Enabling checks the
plugin's ``requires_env`` first: the caller asks for missing values at a terminal
(they go to the profile's ``.env``), else the plugin is refused with the list and
nothing is written. Then the plugin is loaded once, with the values just typed, which
records its CLI commands (``index``) and shows at once whether its ``register`` works:
a plugin that fails to load is not enabled (the profile's config is put back, the
typed values are not saved) and ``PluginError`` says why. ``enable NAME --source
SOURCE`` picks NAME's plugin from SOURCE where several sources have one, and consents to
it replacing the others (``plugins.allow_shadow``); without that consent a plugin never
replaces an enabled one of another source.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.errors import PluginError, did_you_mean
from hermes.home import Home
from hermes.plugins.discovery import Discovery, Found
from hermes.plugins.host import PluginHost
from hermes.plugins.index import read_index
from hermes.plugins.manifest import EnvVar
from hermes.plugins.settings import PluginSettings, layered_plugin_settings, layered_secrets

Ask = Callable[[EnvVar], str]
"""Asks the user for one variable's value (the CLI's prompt)."""


@dataclass
class Plugins:
    """One home's plugins as the management commands see them."""

    home: Home
    environ: Mapping[str, str]
    cwd: Path | None = None

    def __post_init__(self) -> None:
        self.settings = layered_plugin_settings(self.home, self.environ)
        self.secrets = layered_secrets(self.home, self.environ)

    def host(self, settings: PluginSettings | None = None,
             typed: Mapping[str, str] | None = None) -> PluginHost:
        """A host of this home's plugins; ``typed``: values that count as set."""
        values = dict(typed or {})
        return PluginHost(self.home, settings or self.settings, environ=self.environ,
                          getenv=lambda name: values.get(name) or self.secrets.get(name),
                          cwd=self.cwd or Path.cwd())

    def discovery(self) -> Discovery:
        return self.host().discovery()

    def find(self, name: str) -> Found:
        """The plugin ``name`` refers to; ``PluginError`` with the closest name."""
        discovery = self.discovery()
        found = discovery.get(name)
        if found is None:
            names = [n for f in discovery.found for n in f.names]
            raise PluginError(f'no plugin "{name}"{did_you_mean(name, names)}; `hermes plugins '
                              "list` shows them, `hermes plugins install PATH|GIT-URL|PIP-NAME` "
                              "adds one")
        return found

    def status(self, found: Found) -> str:
        """``enabled``, ``disabled``, ``not enabled``, with what keeps an enabled one off."""
        if self.settings.is_disabled(*found.names):
            return "disabled"
        if not self.settings.is_enabled(*found.names):
            return "not enabled"
        missing = found.manifest.missing_env(self.secrets.get)
        if missing:
            return f"enabled, missing {', '.join(missing)}"
        last = read_index(self.home).get("plugins", {}).get(found.key, {})
        if last.get("status") == "failed":
            return f"enabled, failed: {last.get('detail')}"
        unsupported = last.get("unsupported") or []
        return f"enabled, not supported yet: {', '.join(unsupported)}" if unsupported \
            else "enabled"

    def missing_env(self, found: Found) -> list[EnvVar]:
        return [var for var in found.manifest.requires_env if not self.secrets.get(var.name)]

    def enable(self, name: str, ask: Ask | None, source: str | None = None
               ) -> tuple[Found, Any]:
        """Enable ``name`` (see the module docstring); the plugin and how it loaded. With
        ``source``, the plugin of that name from that source, which then may replace the
        others of its name (``plugins.allow_shadow``)."""
        found = self.find(name) if source is None else self.find_in(name, source)
        self._refuse_system_disable(found)
        missing = self.missing_env(found)
        if missing and ask is None:
            raise PluginError(f"plugin {found.key} needs {', '.join(v.name for v in missing)}; "
                              f"nothing was changed — set them in the environment or in "
                              f"{self.home.env_file} (NAME=value), or run `hermes plugins "
                              f"enable {found.key}` at a terminal to be asked")
        typed = {var.name: self._typed(var, ask) for var in missing}  # type: ignore[arg-type]
        enabled = [*[n for n in self.settings.enabled if n not in found.names], found.key]
        disabled = [n for n in self._profile_list("disabled") if n not in found.names]
        lists = {"enabled": enabled, "disabled": disabled}
        if source is not None:
            lists["allow_shadow"] = self._consents(found)
        before = self._config_text()
        self._write(lists)
        loaded, state = self._load(found, typed)
        if state is not None and state.status != "loaded":
            self._restore_config(before)
            raise PluginError(self._not_enabled(found, state))
        self._save_env(typed)
        return loaded, state

    def _consents(self, found: Found) -> list[str]:
        """The profile's ``plugins.allow_shadow`` with ``found``'s source as the one of its
        name (the bundled plugins come last: they need no consent)."""
        others = [entry for entry in self._profile_list("allow_shadow")
                  if entry.partition(":")[2] not in found.names]
        return others + ([f"{found.source}:{found.key}"] if found.source != "bundled" else [])

    def find_in(self, name: str, source: str) -> Found:
        """The plugin ``name`` from ``source``, shadowed or not; ``PluginError`` naming the
        sources that have it."""
        discovery = self.discovery()
        every = [*discovery.found, *(p for p, _ in discovery.refused),
                 *(p for p, _ in discovery.shadowed)]
        named = [f for f in every if name in f.names]
        found = next((f for f in named if f.source == source), None)
        if found is None:
            have = ", ".join(dict.fromkeys(f.source for f in named)) or "no source"
            raise PluginError(f"no plugin {name} from {source}; {name} is found in: {have} "
                              "(`hermes plugins list` shows where)")
        return found

    def disable(self, name: str) -> str:
        """Put ``name`` in ``plugins.disabled`` (an unknown name too: it stays blocked);
        the key written."""
        found = self.discovery().get(name)
        key = found.key if found else name
        names = found.names if found else (name,)
        enabled = [n for n in self._profile_list("enabled") if n not in names]
        self._write({"disabled": [*[n for n in self.settings.disabled if n not in names], key],
                     "enabled": enabled})
        return key

    def _refuse_system_disable(self, found: Found) -> None:
        from hermes.config.layers import load_layers

        env = {k: v for k, v in self.environ.items() if k != "HERMES_HOME"}
        for layer in load_layers(self.home, env):
            section = layer.body.get("plugins") or {}
            listed = section.get("disabled") or [] if isinstance(section, dict) else []
            if layer.label != "profile" and any(n in listed for n in found.names):
                raise PluginError(f"plugin {found.key} is disabled by {layer.where} "
                                  "(plugins.disabled), which this profile cannot change; "
                                  "ask whoever manages that layer")

    @staticmethod
    def _typed(var: EnvVar, ask: Ask) -> str:
        value = ask(var).strip()
        if not value:
            raise PluginError(f"no value for {var.name}; nothing was changed")
        return value

    def _save_env(self, values: Mapping[str, str]) -> None:
        from hermes.config.dotenv_edit import set_secret

        for name, value in values.items():
            set_secret(self.home.env_file, name, value)

    def _not_enabled(self, found: Found, state: Any) -> str:
        if state.status == "failed":
            return (f"plugin {found.key} failed to load, so it was not enabled: {state.detail}"
                    f" (traceback in {self.home.logs_dir / 'plugins.log'})")
        return f"plugin {found.key} was not enabled: {state.detail}"

    def _config_text(self) -> str | None:
        file = self.home.config_file
        return file.read_text(encoding="utf-8") if file.exists() else None

    def _restore_config(self, text: str | None) -> None:
        """Put the profile's config back as it was before ``enable`` wrote it."""
        from hermes.fsutil import atomic_write

        file = self.home.config_file
        if text is None:
            file.unlink(missing_ok=True)
        else:
            atomic_write(file, text, mode=file.stat().st_mode & 0o777)

    def _profile_list(self, key: str) -> list[str]:
        from hermes.config.layers import read_yaml

        section = read_yaml(self.home.config_file).get("plugins") or {}
        values = section.get(key) if isinstance(section, dict) else None
        return [str(v) for v in values] if isinstance(values, list) else []

    def _write(self, lists: dict[str, list[str]]) -> None:
        """Set ``plugins.<key>`` lists in the profile (an empty one only where it is set)."""
        from hermes.config.edit import set_paths

        changes = {f"plugins.{key}": list(dict.fromkeys(names)) for key, names in lists.items()
                   if names or self._profile_list(key)}
        set_paths(self.home, changes, self.environ)

    def _load(self, found: Found, typed: Mapping[str, str]) -> tuple[Found, Any]:
        """Load the enabled plugins as a runtime would (indexing their CLI commands);
        the plugin of ``found``'s key that loads (another source's, when ``found`` may
        not replace it) and how it fared."""
        self.settings = layered_plugin_settings(self.home, self.environ)
        host = self.host(self.settings, typed)
        failure = f"plugin {found.key} failed to load"  # enable's own error says it

        def warn(line: str) -> None:
            if not line.startswith(failure):
                host_warn(line)

        host_warn, host.warn = host.warn, warn
        registrations = host.registrations()
        loaded = host.discovery().get(found.key) or found
        return loaded, next((s for s in registrations.states if s.key == found.key), None)
