"""litellm's bundled model data (prices, input windows, image support), read without
importing litellm: ``hermes doctor`` and the direct OpenAI-compatible path
(``models/openai_wire.py``) never pay for that import. litellm reads the same file
(LITELLM_LOCAL_MODEL_COST_MAP=True).

Only the entries asked for are decoded: the file is 3 MB of JSON whose whole
decoding holds ~20 MiB of dicts.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hermes.models.types import Usage

DATA_FILE = "model_prices_and_context_window_backup.json"
_DECODER = json.JSONDecoder()
_KEY_END = re.compile(r"\s*:\s*(?=\{)")
_TIER = re.compile(r"^(input_cost_per_token|output_cost_per_token|cache_read_input_token_cost|"
                   r"cache_creation_input_token_cost)_above_(\d+)k_tokens$")


def candidate_names(provider: str, model: str) -> list[str]:
    """The keys litellm's data may hold ``model`` under: as written, without a route
    prefix, and as ``provider/model``."""
    names = [model, model.rsplit("/", 1)[-1], f"{provider}/{model}"]
    return list(dict.fromkeys(names))


def model_entry(names: Iterable[str], *, text: str | None = None) -> dict[str, Any] | None:
    """The first of ``names`` the data holds an entry for (``text``: the file, read when
    not given); None when none is known."""
    text = read_data() if text is None else text
    for name in names:
        entry = _entry(text, name)
        if entry is not None:
            return entry
    return None


def _entry(text: str, name: str) -> dict[str, Any] | None:
    """The top-level entry ``name``: the key at a line's start, then its object."""
    key = json.dumps(name)
    start = text.find(key)
    while start >= 0:
        line_start = text.rfind("\n", 0, start) + 1
        value = _KEY_END.match(text, start + len(key))
        if value is not None and not text[line_start:start].strip():
            try:
                entry, _ = _DECODER.raw_decode(text, value.end())
            except ValueError:
                return None
            known = isinstance(entry, dict) and ("mode" in entry or "litellm_provider" in entry)
            return entry if known else None
        start = text.find(key, start + 1)
    return None


def read_data() -> str:
    """The data file's text; empty when litellm (or its file) is missing."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return ""
    try:
        return (Path(next(iter(spec.submodule_search_locations))) / DATA_FILE).read_text(
            encoding="utf-8")
    except OSError:
        return ""


def input_window(entry: dict[str, Any] | None) -> int | None:
    """The model's input window in tokens, when the entry says."""
    for key in ("max_input_tokens", "max_tokens"):
        value = (entry or {}).get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


def cost_usd(entry: dict[str, Any] | None, usage: Usage) -> float | None:
    """The price of ``usage`` at the entry's per-token rates (the rates above the largest
    threshold the prompt passes, where the entry has tiers); None when unpriced.
    ``input_tokens`` includes the cached tokens read, as OpenAI counts them."""
    rates = _rates(entry or {}, usage.input_tokens)
    if rates.get("input_cost_per_token") is None or rates.get("output_cost_per_token") is None:
        return None
    base = rates["input_cost_per_token"]
    read = rates.get("cache_read_input_token_cost", base)
    written = rates.get("cache_creation_input_token_cost", base)
    fresh = max(usage.input_tokens - usage.cache_read_tokens, 0)
    return float(fresh * base + usage.cache_read_tokens * read
                 + usage.cache_write_tokens * written
                 + usage.output_tokens * rates["output_cost_per_token"])


def _rates(entry: dict[str, Any], prompt_tokens: int) -> dict[str, float]:
    rates = {key: float(value) for key, value in entry.items()
             if isinstance(value, int | float) and not isinstance(value, bool)}
    tiers: dict[str, tuple[int, float]] = {}
    for key, value in rates.items():
        tier = _TIER.match(key)
        threshold = int(tier.group(2)) * 1000 if tier else 0
        if tier and prompt_tokens > threshold and threshold > tiers.get(tier.group(1), (0, 0))[0]:
            tiers[tier.group(1)] = (threshold, value)
    return rates | {kind: value for kind, (_, value) in tiers.items()}


def model_reads_images(provider: str, model: str) -> bool:
    """What the data says of ``model`` (an unknown model reads no images, as litellm's
    ``supports_vision`` says of it)."""
    entry = model_entry(candidate_names(provider, model))
    return bool((entry or {}).get("supports_vision"))
