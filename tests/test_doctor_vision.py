"""`hermes doctor` says whether images reach the model: read by it, described by
vision.model, or refused (with how to change that)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import write_fake_provider
from hermes.config.schema import ProviderConfig
from test_doctor import http_server, table  # noqa: F401 — the fixture


@pytest.mark.parametrize(("settings", "extra", "status", "fragment"), [
    ({"model": "gpt-4o"}, [], "ok", "gpt-4o reads images"),
    ({"model": "my-vlm", "vision": True}, [], "ok", "my-vlm reads images"),
    ({"model": "gpt-3.5-turbo"}, ["vision.model=gpt-4o"], "ok",
     "gpt-3.5-turbo reads no images: vision.model gpt-4o describes them"),
    ({"model": "gpt-3.5-turbo"}, [], "warn", "images are refused"),
])
def test_doctor_says_who_reads_images(hermes, root: Path, http_server: str,  # noqa: F811
                                      settings: dict, extra: list[str], status: str,
                                      fragment: str) -> None:
    write_fake_provider(root, http_server, **settings)
    row = table(hermes("doctor", "--offline", *extra))["vision"]
    assert row[0] == status and fragment in row[1], row
    if status == "warn":
        assert "hermes config set vision.model NAME" in row[2]


@pytest.mark.parametrize(("provider", "model"), [
    ("openai", "gpt-4o"), ("openai", "gpt-4o-mini"), ("openai", "gpt-3.5-turbo"),
    ("anthropic", "claude-sonnet-4-5"), ("openai", "no-such-model-x")])
def test_doctor_reads_images_as_the_turn_does(provider: str, model: str) -> None:
    """doctor reads litellm's data file without importing litellm; a turn asks litellm:
    both say the same of these models."""
    from hermes.models.litellm_client import LiteLLMClient
    from hermes.models.model_data import model_reads_images

    settings = ProviderConfig(name=provider, provider=provider, model=model)
    assert model_reads_images(provider, model) == LiteLLMClient(settings).takes_images()
