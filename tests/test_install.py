"""The install compiles bytecode: with PYTHONDONTWRITEBYTECODE=1 nothing else would."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


@pytest.mark.parametrize("module", ["litellm", "litellm.main", "pydantic", "fastapi"])
def test_installed_modules_have_their_bytecode(module: str) -> None:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    cached = Path(importlib.util.cache_from_source(spec.origin))
    assert cached.is_file(), f"{cached} is missing: install with compile-bytecode " \
                             "([tool.uv] compile-bytecode = true, or UV_COMPILE_BYTECODE=1)"
