"""URLs as logs and results show them: passwords, a lone userinfo (a token) and
secret-looking query values as ``***`` (``https://u:***@host/p?api_key=***&q=cats``,
``https://***@host/``)."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
SECRET_PARAMETER = re.compile(
    r"(^|[_-])(key|apikey|token|secret|password|passwd|pwd|sig|signature|auth|"
    r"authorization|credential|credentials|session|sessionid|code|jwt|bearer)s?($|[_-])"
    r"|^(x-amz-|x-goog-)(signature|credential|security-token)$"
    r"|^(api[_-]?key|access[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|"
    r"private[_-]?key|sas|sv|se)$",
    re.I,
)
"""Query parameter names whose values are credentials (``key``, ``api_key``,
``access_token``, ``sig``, ``X-Amz-Signature``, ``password``...)."""


def redact_url(url: str) -> str:
    """``url`` with its userinfo password and secret-looking query values as ``***``;
    anything that does not parse is returned with its query masked whole."""
    try:
        parts = urlsplit(url)
        netloc = _netloc(parts.netloc)
    except ValueError:
        return url.split("?", 1)[0] + (f"?{MASK}" if "?" in url else "")
    query = _query(parts.query)
    fragment = _query(parts.fragment) if "=" in parts.fragment else parts.fragment
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def _netloc(netloc: str) -> str:
    userinfo, at, host = netloc.rpartition("@")
    if not at:
        return netloc
    user, colon, _password = userinfo.partition(":")
    # a userinfo of one part is as often a token (https://TOKEN@host/) as a name
    return f"{user}:{MASK}@{host}" if colon else f"{MASK}@{host}"


def _query(query: str) -> str:
    if not query:
        return query
    pairs = parse_qsl(query, keep_blank_values=True)
    if not any(SECRET_PARAMETER.search(name) for name, _ in pairs):
        return query
    masked = [(name, MASK if SECRET_PARAMETER.search(name) else value) for name, value in pairs]
    return urlencode(masked, safe="*/:,")
