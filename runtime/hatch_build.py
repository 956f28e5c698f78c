"""Hatchling build hook: an editable install (``uv sync``, the README's) compiles the
package's own modules to ``__pycache__`` in place.

uv compiles what it installs into the virtualenv (``compile-bytecode``), but an editable
project's modules stay here, in the source tree. Where ``PYTHONDONTWRITEBYTECODE=1`` is
set (many images and CI machines) Python then never writes their bytecode, and every run
compiled ~350 modules again: 0.3 s of each ``gateway run`` start and cold one-shot.
Bytecode of a module edited later is stale and simply not used (Python checks the
source's mtime), so this only ever saves time. Wheels (the image, Nix) are compiled by
their installers and are left alone here.
"""

from __future__ import annotations

import compileall
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CompileEditable(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version != "editable":
            return
        package = Path(self.root) / "runtime" / "hermes"
        if package.is_dir():  # a module that does not compile is the tests' to report
            compileall.compile_dir(str(package), quiet=2, workers=0)
