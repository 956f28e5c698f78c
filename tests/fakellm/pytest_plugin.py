"""The ``fake_llm`` fixture: a started, empty :class:`FakeLLM`; script it with ``push``.

Enable with ``pytest_plugins = ["fakellm.pytest_plugin"]`` in the root conftest, or
import the fixture into a test module.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .server import FakeLLM


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """Fails the test at teardown if the script ran out or a responder raised."""
    with FakeLLM() as llm:
        yield llm
