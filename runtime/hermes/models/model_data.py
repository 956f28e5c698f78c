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
import mmap
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hermes.models.types import Usage

DATA_FILE = "model_prices_and_context_window_backup.json"
_DECODER = json.JSONDecoder()
_KEY_END = re.compile(r"\s*:\s*(?=\{)")
_ENTRY_BYTES = 64 * 1024
"""Bytes after a key that hold its entry (the largest is ~12 KB)."""
_TIER = re.compile(r"^(input_cost_per_token|output_cost_per_token|cache_read_input_token_cost|"
                   r"cache_creation_input_token_cost)_above_(\d+)k_tokens$")


def candidate_names(provider: str, model: str) -> list[str]:
    """The keys litellm's data may hold ``model`` under: as written, without a route
    prefix, and as ``provider/model``."""
    names = [model, model.rsplit("/", 1)[-1], f"{provider}/{model}"]
    return list(dict.fromkeys(names))


def model_entry(names: Iterable[str]) -> dict[str, Any] | None:
    """The first of ``names`` the data holds an entry for; None when none is known (or
    litellm's file is missing)."""
    path = data_path()
    if path is None:
        return None
    try:
        with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            for name in names:
                entry = _entry(data, name)
                if entry is not None:
                    return entry
    except (OSError, ValueError):  # unreadable, or empty (mmap refuses empty files)
        return None
    return None


def _entry(data: mmap.mmap, name: str) -> dict[str, Any] | None:
    """The top-level entry ``name``: the key first on its line, then its object (only
    that object is decoded)."""
    key = json.dumps(name).encode()
    start = data.find(key)
    while start >= 0:
        line_start = data.rfind(b"\n", 0, start) + 1
        if not data[line_start:start].strip():
            window = data[start + len(key):start + len(key) + _ENTRY_BYTES].decode(
                errors="ignore")
            value = _KEY_END.match(window)
            if value is not None:
                try:
                    entry, _ = _DECODER.raw_decode(window, value.end())
                except ValueError:
                    return None
                known = isinstance(entry, dict) and ("mode" in entry
                                                     or "litellm_provider" in entry)
                return entry if known else None
        start = data.find(key, start + 1)
    return None


def data_path() -> Path | None:
    """litellm's data file, without importing litellm; None when litellm is missing."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / DATA_FILE


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
