"""The web tools' common ground: which addresses they may reach (``addresses``), a
fetcher that keeps to them (``fetch``), page extraction (``extract``) and the fence
around everything that comes back (``untrusted``)."""
