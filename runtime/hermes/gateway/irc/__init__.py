"""The ``irc`` platform: ``platform`` (the adapter), ``client`` (one connection over asyncio
streams), ``protocol`` (lines and text), ``identity`` (who a sender is)."""
