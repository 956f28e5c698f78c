"""The ``telegram`` platform: a bot over the Bot API with long polling (``platform``)."""
