"""Config: layers, composition, validation, provenance and edits.

Only this package imports Hydra and OmegaConf; everything else receives plain,
validated objects. The heavy part (``compose``) is imported on first use so
that commands such as ``hermes profile list`` stay fast.

Layer 0, the foundation: imports no service package and nothing above, only
``errors``, ``fsutil``, ``home``, ``credentials``, ``chats`` (delivery targets),
``sessions`` (durations) and ``events`` (hook names; a leaf that imports nothing of
``hermes``). What a validator needs lives here (``tool_catalog``,
``zones``, ``webhook_template``) or in such a leaf; ``tests/test_import_direction.py``
keeps it so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes.config.compose import ComposedConfig, compose_config

__all__ = ["ComposedConfig", "compose_config"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from hermes.config import compose

        return getattr(compose, name)
    raise AttributeError(name)
