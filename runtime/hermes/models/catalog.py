"""Which models a provider offers: its endpoint's own list, else litellm's offline map.

An endpoint that speaks OpenAI's or Anthropic's wire lists its models at ``GET …/models``
(local servers list the one they serve). Providers litellm reaches through a native API
(Gemini, Vertex, Bedrock, Azure) are listed from the model map litellm ships in its
wheel: the file is read as it is, litellm is not imported and nothing is fetched.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.config.schema import ProviderConfig
from hermes.models.errors import ErrorClass, ModelCallError
from hermes.models.modes import detect_api_mode

OPENAI_BASE = "https://api.openai.com/v1"
ANTHROPIC_BASE = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
LIST_TIMEOUT = 10.0
"""Seconds a ``GET …/models`` may take."""
_MAP_FILE = "model_prices_and_context_window_backup.json"
_CHAT_MODES = ("chat", "responses")


@dataclass(frozen=True)
class ModelList:
    """Model ids and where they came from (a URL, or litellm's offline map)."""

    models: list[str]
    source: str


def models_url(settings: ProviderConfig) -> str | None:
    """``GET`` here lists the endpoint's models; None where the provider has no such list
    in a wire Hermes speaks (native APIs: Gemini, Vertex, Bedrock, Azure)."""
    mode = detect_api_mode(settings)
    base = (settings.api_base or "").rstrip("/")
    if mode == "anthropic_messages":
        return f"{base or ANTHROPIC_BASE}/v1/models"
    if mode == "bedrock_converse" or settings.provider in ("gemini", "vertex_ai", "azure"):
        return None
    if settings.provider in ("ollama", "ollama_chat"):
        return f"{base or 'http://127.0.0.1:11434'}/v1/models"
    if not base:
        return f"{OPENAI_BASE}/models" if settings.provider == "openai" else None
    return f"{base}/models"


def auth_headers(settings: ProviderConfig) -> dict[str, str]:
    """The key as the endpoint's wire expects it (none without a key)."""
    if not settings.api_key:
        return {}
    if detect_api_mode(settings) == "anthropic_messages":
        return {"x-api-key": settings.api_key, "anthropic-version": ANTHROPIC_VERSION}
    return {"authorization": f"Bearer {settings.api_key}"}


def fetch_models(url: str, settings: ProviderConfig) -> list[str] | None:
    """The ids ``url`` lists (OpenAI's and Anthropic's ``{"data": [{"id": …}]}``); None
    when the endpoint has no such list (404); ``ModelCallError`` (authentication,
    connection, ...) when it cannot be read."""
    import httpx

    try:
        response = httpx.get(url, headers=auth_headers(settings), timeout=LIST_TIMEOUT)
    except httpx.HTTPError as exc:
        raise ModelCallError(f"{url}: cannot connect ({type(exc).__name__}); is "
                             "provider.api_base right and the server running?",
                             ErrorClass.CONNECTION) from exc
    if response.status_code in (401, 403):
        raise ModelCallError(f"{url}: the key was refused (HTTP {response.status_code})",
                             ErrorClass.AUTH)
    if response.status_code == 404:
        return None
    if response.status_code >= 400:
        raise ModelCallError(f"{url}: HTTP {response.status_code}", ErrorClass.SERVER_ERROR)
    return _ids(_json(response))


def _json(response: Any) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _ids(body: Any) -> list[str]:
    data = body.get("data") if isinstance(body, dict) else None
    items = data if isinstance(data, list) else body.get("models", []) \
        if isinstance(body, dict) else []
    ids = (item.get("id") or item.get("name") for item in items if isinstance(item, dict))
    return sorted({str(i) for i in ids if i})


def offline_models(provider: str) -> list[str]:
    """Chat models litellm's bundled map lists for ``provider`` (names without the
    ``provider/`` prefix); empty when litellm or its map is not installed."""
    path = _map_path()
    if path is None:
        return []
    entries = json.loads(path.read_text(encoding="utf-8"))
    families = (provider, f"{provider}_converse")  # bedrock's Converse models
    names = {name.removeprefix(f"{provider}/") for name, entry in entries.items()
             if isinstance(entry, dict) and entry.get("mode") in _CHAT_MODES
             and str(entry.get("litellm_provider", "")).split("-")[0] in families}
    # region wildcards and commitment tiers (Bedrock's) are prices, not names to ask for
    return sorted(n for n in names if "*" not in n and "-commitment/" not in n)


def _map_path() -> Path | None:
    spec = importlib.util.find_spec("litellm")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / _MAP_FILE
    return path if path.is_file() else None


def list_models(settings: ProviderConfig) -> ModelList:
    """The endpoint's models where it lists them, else litellm's offline map's."""
    url = models_url(settings)
    found = fetch_models(url, settings) if url is not None else None
    if found is not None:
        return ModelList(found, str(url))
    source = "litellm's offline model map" + (f"; {url} has no list" if url else "")
    if settings.provider == "openai" and settings.api_base:  # not OpenAI's own models
        return ModelList([], f"{url}: no list")
    return ModelList(offline_models(settings.provider), source)


def check_access(settings: ProviderConfig) -> str:
    """One cheap call proving the endpoint takes the key: its model list where it has
    one, else a one-token completion; what was checked. ``ModelCallError`` if refused."""
    url = models_url(settings)
    found = fetch_models(url, settings) if url is not None else None
    if found is not None:
        return f"GET {url}: {len(found)} model{'' if len(found) == 1 else 's'}"
    from hermes.models.litellm_client import LiteLLMClient

    client = LiteLLMClient(settings.model_copy(update={"max_retries": 0, "fallbacks": []}))
    client.complete([{"role": "user", "content": "Say OK."}], max_tokens=1)
    return f"a one-token completion from {client.litellm_model}"
