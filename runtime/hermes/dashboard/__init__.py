"""``hermes dashboard``: the profiles of one root in a browser, a front door like the CLI
and the gateway.

``app.create_app`` builds the FastAPI app; ``auth`` guards every request (token,
session cookie, anti-CSRF token, ``Host``/``Origin``); ``pages`` holds one module per
section of the nav (a router and its templates); ``templates/`` and ``static/`` ship in
the wheel. Importing this package imports no web framework: the CLI imports ``app`` only
when the dashboard starts.
"""
