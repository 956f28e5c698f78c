"""The ``xmpp`` platform (slixmpp)."""
