"""The ``mattermost`` platform (REST API v4 and WebSocket, over aiohttp)."""
