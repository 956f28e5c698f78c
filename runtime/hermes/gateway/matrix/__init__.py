"""The ``matrix`` platform (mautrix, imported only when it starts)."""
