"""The ``signal`` platform (a signal-cli daemon's JSON-RPC and Server-Sent Events, over aiohttp)."""
