"""Which wire format to speak: chosen in config, or detected."""

from __future__ import annotations

from hermes.config.schema import ProviderConfig

_RESPONSES_MODELS = ("codex", "gpt-5-codex", "o3-pro", "o1-pro")


def detect_api_mode(settings: ProviderConfig) -> str:
    """``api_mode`` unless ``auto``: then by provider, model name and base URL."""
    if settings.api_mode != "auto":
        return settings.api_mode
    model = settings.model.lower()  # "anthropic/claude-x" at a router is not Anthropic's API
    base = (settings.api_base or "").lower()
    if settings.provider == "anthropic" or model.startswith("claude-") \
            or "api.anthropic.com" in base:
        return "anthropic_messages"
    if settings.provider == "bedrock":
        return "bedrock_converse"
    if settings.provider == "openai" and any(m in model for m in _RESPONSES_MODELS):
        return "responses"
    return "chat_completions"


def litellm_model(provider: str, model: str, api_mode: str) -> str:
    """The model string litellm routes by (``provider/model``)."""
    if api_mode == "anthropic_messages":
        provider = "anthropic"
    if api_mode == "bedrock_converse":
        bare = model.removeprefix("bedrock/").removeprefix("converse/")
        return f"bedrock/converse/{bare}"
    prefix = f"{provider}/"
    return model if model.startswith(prefix) else prefix + model
