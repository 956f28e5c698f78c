"""What ``hermes plugins info`` prints."""

from __future__ import annotations

from typing import Any

from hermes.plugins.discovery import Found
from hermes.plugins.index import read_index
from hermes.plugins.install import read_lock


def render_info(plugins: Any, found: Found) -> str:
    """The plugin's manifest, place, status, variables, commands and install record."""
    manifest = found.manifest
    lines = [f"{found.key} {manifest.version}".rstrip(),
             *_field("description", manifest.description), *_field("author", manifest.author),
             f"  kind: {manifest.kind}", f"  source: {found.source} ({found.where})",
             f"  status: {plugins.status(found)}"]
    lines += _field("provides tools", ", ".join(manifest.provides_tools))
    lines += _field("provides hooks", ", ".join((*manifest.provides_hooks, *manifest.hooks)))
    for title, names in (("web providers", manifest.provides_web_providers),
                         ("browser providers", manifest.provides_browser_providers),
                         ("pip dependencies", manifest.pip_dependencies),
                         ("programs it needs", manifest.external_dependencies),
                         ("platforms", manifest.platforms),
                         ("ignored manifest keys", manifest.ignored)):
        lines += _field(title, ", ".join(names))
    lines += [f"  warning: {note}" for note in manifest.notes]
    for title, variables in (("requires", manifest.requires_env),
                             ("optional", manifest.optional_env)):
        for var in variables:
            have = "set" if plugins.secrets.get(var.name) else "missing"
            about = f" — {var.description}" if var.description else ""
            lines.append(f"  {title} {var.name}: {have}{about}")
    index = read_index(plugins.home)
    commands = [name for name, entry in index.get("commands", {}).items()
                if entry.get("plugin") == found.key]
    lines += _field("CLI commands", ", ".join(f"hermes {c}" for c in commands))
    last = index.get("plugins", {}).get(found.key)
    if last:
        lines.append(f"  last load: {last.get('status')}: {last.get('detail')}")
        lines += _field("not supported yet", ", ".join(last.get("unsupported") or ()))
    record = read_lock(plugins.home).get(manifest.name)
    if record:
        commit = f" at {record['commit']}" if record.get("commit") else ""
        lines.append(f"  installed from: {record.get('source')}{commit}")
    return "\n".join(lines)


def _field(title: str, value: str) -> list[str]:
    return [f"  {title}: {value}"] if value else []
