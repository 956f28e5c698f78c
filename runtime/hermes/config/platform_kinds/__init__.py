"""One module per platform kind added after the first five (see ``platform_schema``).

A module here declares ``KIND`` (the ``platforms.enabled.<name>.kind`` value),
``Settings`` (a ``MessagingSettings`` or ``ListenerSettings`` subclass: the schema of
that platform's ``settings``) and ``ADAPTER`` (``"hermes.gateway.<pkg>.platform:Class"``,
imported only by the gateway that runs the platform). It imports nothing heavy: every
config check loads it.
"""
