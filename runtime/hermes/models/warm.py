"""Loading ahead what a process's first model call would load, for processes that run
many turns (the warm server, an experiment's runner) so no turn pays it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def preload_litellm(models: Iterable[Any]) -> bool:
    """Import litellm ahead of the first model call when some of ``models`` (model
    clients) goes through it — an endpoint spoken to directly needs nothing. Whether it
    is loaded now; a failed import is left for the first call to report."""
    if not any(model.needs_litellm() for model in models):
        return False
    from hermes.models.litellm_client import import_litellm

    try:
        import_litellm()
    except Exception:  # noqa: BLE001 - the first model call reports it properly
        return False
    return True


def warm_openai_path() -> None:
    """What litellm's first OpenAI-compatible call loads (~500 modules of the openai SDK,
    a client: ~0.2 s), loaded once here so no forked child pays it. (tiktoken's encoding
    is not needed: ``import_litellm`` turns litellm's token counter off.)
    It starts no threads."""
    import openai.resources.chat.completions  # noqa: F401
    import openai.types.chat  # noqa: F401
    from openai import OpenAI

    OpenAI(api_key="warm-up", base_url="http://127.0.0.1:9/v1").chat.completions.create  # noqa: B018

    # Response types whose pydantic schemas are built on first use (~25 ms).
    from litellm.types.utils import ModelResponse, ModelResponseStream, Usage

    ModelResponse()
    ModelResponseStream()
    Usage()
