"""A fetched page's main content as Markdown or plain text, read locally by trafilatura
(imported on first use): navigation, footers, banners and sidebars dropped; headings,
lists, tables and code blocks kept."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from hermes.web.fetch import Page

Format = Literal["markdown", "text"]
FORMATS: tuple[str, ...] = ("markdown", "text")
TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.I | re.S)
HEAD_CHARS = 65_536
"""Where the ``<title>`` is looked for."""


@dataclass(frozen=True)
class Extracted:
    """The readable content of one page."""

    url: str
    """The page's final URL (after redirects)."""
    title: str
    text: str
    by: str = ""
    """The search backend that extracted it; empty: extracted here."""

    def as_dict(self) -> dict[str, Any]:
        return {"url": self.url, "title": self.title, "text": self.text, "by": self.by}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Extracted:
        return cls(str(data["url"]), str(data.get("title") or ""), str(data["text"]),
                   str(data.get("by") or ""))


def extract_page(page: Page, fmt: Format) -> Extracted:
    """``page``'s content in ``fmt``: HTML through trafilatura, JSON pretty-printed,
    text as it is."""
    if page.kind == "json":
        return Extracted(page.url, "", _json(page.text(), fmt))
    if page.kind != "html":
        return Extracted(page.url, "", page.text().strip())
    document = page.text()
    return Extracted(page.url, page_title(document), main_content(document, fmt))


def main_content(document: str, fmt: Format) -> str:
    """The main content of an HTML document (trafilatura), or all its text when
    trafilatura finds no main part (a short page, a bare list of links)."""
    import trafilatura

    options: dict[str, Any] = extractor_options(fmt)
    text = trafilatura.extract(document, **options)
    if not text:
        text = trafilatura.html2txt(document)
    return (text or "").strip()


def extractor_options(fmt: Format) -> dict[str, Any]:
    """trafilatura's options for ``fmt`` (the bench times trafilatura with the same)."""
    return {"output_format": "markdown" if fmt == "markdown" else "txt",
            "include_tables": True, "include_formatting": fmt == "markdown",
            "include_links": False, "include_images": False, "include_comments": False,
            "with_metadata": False, "deduplicate": False}


def page_title(document: str) -> str:
    """The document's ``<title>``, whitespace collapsed (empty when it has none)."""
    found = TITLE.search(document, 0, HEAD_CHARS)
    return " ".join(html.unescape(found.group(1)).split()) if found else ""


def _json(text: str, fmt: Format) -> str:
    try:
        shown = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        shown = text.strip()
    return f"```json\n{shown}\n```" if fmt == "markdown" else shown


def capped(text: str, max_chars: int) -> tuple[str, str | None]:
    """``text`` cut to ``max_chars`` characters, and a note saying so (None if whole)."""
    if len(text) <= max_chars:
        return text, None
    return text[:max_chars], (f"cut at web.max_chars ({max_chars} of {len(text)} "
                              "characters shown)")
