"""One module per platform kind added after the first five (see ``platform_schema``).

A module here declares ``KIND`` (the ``platforms.enabled.<name>.kind`` value),
``Settings`` (a ``MessagingSettings`` or ``ListenerSettings`` subclass: the schema of
that platform's ``settings``) and ``ADAPTER`` (``"hermes.gateway.<pkg>.platform:Class"``,
imported only by the gateway that runs the platform). It imports nothing heavy: every
config check loads it.
"""

# A kind module imports ``platform_schema`` for its base classes, and ``platform_schema``
# imports every kind module when it is imported. Importing a kind module first would find
# its own module half-made there (no ``Settings`` yet); loading ``platform_schema`` here,
# before any kind module runs, makes every import order work.
import hermes.config.platform_schema  # noqa: E402, F401
