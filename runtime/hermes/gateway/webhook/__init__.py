"""The ``webhook`` platform: signed HTTP deliveries that run the agent (``platform``)."""
