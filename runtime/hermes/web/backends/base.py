"""What every search backend is: ``search(query, limit)`` giving ``SearchHit``s, optionally
``extract(urls)`` giving ``BackendPage``s, and ``unavailable()`` naming what is missing.

HTTP backends (``HttpBackend``) talk to the one service the config names (``web.base_url``
or the service's own address), never to an address the model chose; httpx is imported
when the first request is made, never when the tool is registered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes.errors import ToolError


class SearchFailed(ToolError):
    """A search (or a backend's extraction) that failed: one line naming the backend."""


@dataclass(frozen=True)
class SearchHit:
    """One result as every backend gives it."""

    title: str
    url: str
    snippet: str


@dataclass(frozen=True)
class BackendPage:
    """One page a backend extracted (``extract``): its text, or why it could not."""

    url: str
    title: str = ""
    text: str = ""
    error: str | None = None


class SearchBackend:
    """A search backend; subclasses implement ``search`` (and ``extract`` if offered)."""

    name: str = "search"

    def unavailable(self) -> str | None:
        """Why the backend cannot search here (a missing key or address), else None."""
        return None

    def search(self, query: str, limit: int) -> list[SearchHit]:
        raise NotImplementedError

    def extract(self, urls: list[str]) -> list[BackendPage] | None:
        """The pages' text as the service extracts them; None: this backend does not."""
        return None


@dataclass(frozen=True)
class BackendSettings:
    """The ``web`` keys a backend reads."""

    api_key: str | None = None
    base_url: str | None = None
    timeout: float = 20.0
    proxy: str | None = None
    """The proxy the ddgs backend's requests go through (``web.proxy``)."""

    @classmethod
    def from_config(cls, web: Any) -> BackendSettings:
        return cls(api_key=getattr(web, "api_key", None) or None,
                   base_url=getattr(web, "base_url", None) or None,
                   timeout=float(getattr(web, "timeout", 20.0) or 20.0),
                   proxy=getattr(web, "proxy", None) or None)


class HttpBackend(SearchBackend):
    """A backend behind an HTTP JSON API with a key (``key_name`` in ``.env``)."""

    default_url = ""
    key_name = ""
    """The secret the packaged option references (``BRAVE_API_KEY``), for messages."""

    def __init__(self, settings: BackendSettings):
        self.settings = settings
        self.base_url = (settings.base_url or self.default_url).rstrip("/")

    def unavailable(self) -> str | None:
        if self.key_name and not self.settings.api_key:
            return (f"web.api_key is not set for {self.name}: `hermes config set "
                    f"{self.key_name} YOUR_KEY`")
        return None

    def request(self, method: str, path: str, *, json: Any = None,
                params: dict[str, Any] | None = None,
                headers: dict[str, str] | None = None) -> Any:
        """The service's JSON answer to one request, or ``SearchFailed`` in one line."""
        import httpx

        url = f"{self.base_url}{path}"
        try:
            response = httpx.request(method, url, json=json, params=params,
                                     headers={"Accept": "application/json", **(headers or {})},
                                     timeout=self.settings.timeout, follow_redirects=False)
        except httpx.TimeoutException:
            raise SearchFailed(f"{self.name}: no answer from {self.base_url} within "
                               f"{self.settings.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise SearchFailed(f"{self.name}: cannot reach {self.base_url} "
                               f"({type(exc).__name__})") from None
        if response.status_code >= 400:
            raise SearchFailed(f"{self.name}: HTTP {response.status_code} from "
                               f"{self.base_url}{path}{_reason(response)}")
        try:
            return response.json()
        except ValueError:
            raise SearchFailed(f"{self.name}: {self.base_url}{path} answered no JSON") from None


def _reason(response: Any) -> str:
    """`` (the service's message)`` when its error body has one, cut to one short line."""
    try:
        body = response.json()
    except ValueError:
        return ""
    message = body.get("error") or body.get("message") or body.get("detail") \
        if isinstance(body, dict) else None
    if isinstance(message, dict):
        message = message.get("detail") or message.get("message")
    return f" ({' '.join(str(message).split())[:200]})" if message else ""


def text_of(value: Any) -> str:
    """A result field as one clean line of text (services send null or lists at times)."""
    if isinstance(value, list):
        value = " ".join(str(part) for part in value if part)
    return " ".join(str(value or "").split())
