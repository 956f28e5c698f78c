"""Whether a model reads images, as litellm's bundled model data says, read without
importing litellm (``hermes doctor`` never pays for that import). The turn itself asks
``litellm.supports_vision`` (``LiteLLMClient.takes_images``); both read the same file."""

from __future__ import annotations

import importlib.util
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA_FILE = "model_prices_and_context_window_backup.json"
"""litellm's model data, shipped in its package (LITELLM_LOCAL_MODEL_COST_MAP=True)."""


def model_reads_images(provider: str, model: str) -> bool:
    """What litellm's data says of ``model`` (tried as written, without a route prefix,
    and as ``provider/model``); an unknown model reads no images, as at a turn."""
    data = _model_data()
    for key in (model, model.rsplit("/", 1)[-1], f"{provider}/{model}"):
        entry = data.get(key)
        if isinstance(entry, dict) and "supports_vision" in entry:
            return bool(entry["supports_vision"])
    return False


@lru_cache(maxsize=1)
def _model_data() -> dict[str, Any]:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / DATA_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
