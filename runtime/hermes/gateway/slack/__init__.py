"""The ``slack`` platform (``hermes.gateway.slack.platform``)."""
