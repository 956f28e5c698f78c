"""Whether images reach the model: the main model reads them, ``vision.model`` describes
them for it, or they are refused (and how to change that)."""

from __future__ import annotations

from typing import Any

from hermes.doctor.base import Check

HOW_TO_SEE = ("set vision.model to a model that reads images (hermes config set "
              "vision.model NAME), or provider.vision: true if this one does")


def check_vision(provider: Any, vision: Any) -> Check:
    """One row; litellm's model data (its file, not litellm) is read only when
    ``provider.vision`` is unset."""
    from hermes.models.model_data import model_reads_images

    reads = provider.vision if provider.vision is not None else \
        model_reads_images(provider.provider, provider.model)
    if reads:
        return Check("vision", "ok", f"{provider.model} reads images")
    if vision.model:
        return Check("vision", "ok", f"{provider.model} reads no images: vision.model "
                     f"{vision.model} describes them for it")
    return Check("vision", "warn", f"{provider.model} reads no images and vision.model is "
                 "unset: images are refused, vision_analyze cannot answer", HOW_TO_SEE)
