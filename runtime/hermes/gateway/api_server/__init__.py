"""The ``api_server`` platform: an OpenAI-compatible HTTP API."""
