"""Loading ahead what a process's first model call would load, for processes that run
many turns (the warm server, an experiment's runner) so no turn pays it."""

from __future__ import annotations


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
