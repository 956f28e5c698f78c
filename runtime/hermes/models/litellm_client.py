"""The litellm-backed model client.

litellm is imported on first use, never at start-up, and with the local cost
map so that importing it never fetches anything from the network.
"""

from __future__ import annotations

import os
from typing import Any

from hermes.config.schema import ProviderConfig
from hermes.errors import ProviderError
from hermes.models.base import ModelClient


def import_litellm() -> Any:
    """Import litellm without network access at import time."""
    # litellm reads this flag once, at import; it selects the bundled cost map
    # instead of downloading one. It changes no profile selection.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm


class LiteLLMClient(ModelClient):
    """A model client for any provider litellm knows, built from ``provider`` config."""

    def __init__(self, settings: ProviderConfig):
        self.settings = settings
        self.model = settings.model

    @property
    def litellm_model(self) -> str:
        """``provider/model`` as litellm expects it."""
        prefix = f"{self.settings.provider}/"
        return self.model if self.model.startswith(prefix) else prefix + self.model

    def complete(self, messages: list[dict[str, Any]], **params: Any) -> dict[str, Any]:
        litellm = import_litellm()
        try:
            response = litellm.completion(
                model=self.litellm_model,
                messages=messages,
                api_base=self.settings.api_base,
                api_key=self.settings.api_key,
                timeout=self.settings.timeout,
                num_retries=self.settings.max_retries,
                **(self.settings.extra | params),
            )
        except Exception as exc:  # litellm raises many types; translate at the boundary
            raise ProviderError(f"{self.litellm_model}: {type(exc).__name__}: {exc}") from exc
        return response.choices[0].message.model_dump()
