"""The search engines of the ``ddgs`` package (9.16.1) as pages in each one's real format,
for ``fake_search_tls.TlsInterceptor``: what ``DDGS().text(query)`` with ``backend="auto"``
asks (first Wikipedia and Grokipedia, then DuckDuckGo, Mojeek, Brave, Yahoo and Startpage
in random order, one provider at a time, until it holds ``max_results``), read from the
engine classes under ``ddgs/engines/``:

- DuckDuckGo: ``POST https://html.duckduckgo.com/html/`` form ``q``, ``b``, ``l``
  (region); results are ``div.result__body`` (title ``h2``, link and snippet the
  ``a.result__snippet``); ads link to ``https://duckduckgo.com/y.js?...`` and are dropped;
- Mojeek: ``GET https://www.mojeek.com/search?q=``; ``ul.results-standard > li``
  (title ``h2 a``, snippet ``p.s``);
- Wikipedia: ``GET https://en.wikipedia.org/w/api.php?action=opensearch&search=`` (JSON
  ``[query, titles, descriptions, urls]``), then ``action=query&prop=extracts&titles=``
  for the first title's intro;
- Grokipedia: ``GET https://grokipedia.com/api/typeahead?query=&limit=1`` (JSON).

Engines given no pages here (Brave, Yahoo, Startpage) answer 404, which ddgs takes as
"no results from this engine", as it does a real engine's error page.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass

from fake_search import Hit
from fake_search_tls import Answer, Handler, Seen


@dataclass(frozen=True)
class Article:
    """Wikipedia's answer: the article the opensearch finds, and its intro."""

    title: str
    extract: str

    @property
    def url(self) -> str:
        return f"https://en.wikipedia.org/wiki/{self.title.replace(' ', '_')}"


def _first(values: dict[str, list[str]], name: str) -> str:
    return (values.get(name) or [""])[0]


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _bold(text: str, query: str) -> str:
    """The snippet as engines show it: the query's words in ``<b>``."""
    words = {w.lower() for w in query.split()}
    return " ".join(f"<b>{_e(w)}</b>" if w.lower() in words else _e(w) for w in text.split())


DDG_HEAD = """<!DOCTYPE html><html lang="en-US"><head><meta charset="UTF-8">
<meta name="referrer" content="origin"><title>{q} at DuckDuckGo</title>
<link rel="stylesheet" href="/dist/h.css" type="text/css"></head><body>
<div id="header" class="header cw"><form name="x" class="header__form" action="/html/"
method="post"><input class="search__input" type="text" name="q" value="{q}">
<input name="b" type="hidden" value=""><input type="submit" class="search__button"
value="S"></form></div><div id="links" class="results">"""
AD_URL = "https://duckduckgo.com/y.js?ad_domain=shop.example&amp;ad_provider=bingv7aa&amp;u3=x"
DDG_AD = f"""<div class="result results_links results_links_deep result--ad">
<div class="links_main links_deep result__body"><h2 class="result__title">
<a rel="nofollow" class="result__a" href="{AD_URL}">Buy widgets today</a></h2>
<a class="result__snippet" href="{AD_URL}">Widgets at half price. Free delivery.</a>
<div class="clear"></div></div></div>"""
DDG_RESULT = """<div class="result results_links results_links_deep web-result ">
<div class="links_main links_deep result__body"><h2 class="result__title">
<a rel="nofollow" class="result__a" href="{url}">{title}</a></h2>
<div class="result__extras"><div class="result__extras__url"><span class="result__icon">
<a rel="nofollow" href="{url}"><img class="result__icon__img" width="16" height="16" alt=""
src="//external-content.duckduckgo.com/ip3/{host}.ico" name="i15"></a></span>
<a class="result__url" href="{url}">{host}</a></div></div>
<a class="result__snippet" href="{url}">{snippet}</a>
<div class="clear"></div></div></div>"""
DDG_NONE = """<div class="result results_links results_links_deep result--no-result">
<div class="no-results">No results.</div></div>"""
DDG_TAIL = """</div><div class="nav-link"><form action="/html/" method="post">
<input type="submit" class="btn btn--alt" value="Next"><input type="hidden" name="q"
value="{q}"><input type="hidden" name="s" value="10"></form></div></body></html>"""
DDG_ANOMALY = """<!DOCTYPE html><html><head><title>DuckDuckGo</title></head><body>
<div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>
<div class="anomaly-modal__description">Please complete the following challenge to
confirm this search was made by a human.</div></body></html>"""


def duckduckgo(hits: list[Hit], *, blocked: bool = False) -> Handler:
    """html.duckduckgo.com: its results page (an ad first); ``blocked``: the bot challenge
    with status 202 that DuckDuckGo answers a client it distrusts."""

    def answer(seen: Seen) -> Answer:
        if (seen.method, seen.path) != ("POST", "/html/"):
            return Answer(405 if seen.path == "/html/" else 404, "")
        if blocked:
            return Answer(202, DDG_ANOMALY)
        query = _first(seen.form, "q")
        rows = [DDG_RESULT.format(url=_e(h.url), host=_e(h.url.split("/")[2]),
                                  title=_e(h.title), snippet=_bold(h.snippet, query))
                for h in hits]
        body = (DDG_AD + "".join(rows)) if query and hits else DDG_NONE
        return Answer(200, DDG_HEAD.format(q=_e(query)) + body + DDG_TAIL.format(q=_e(query)))

    return answer


MOJEEK_PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>{q} - Mojeek Search</title></head><body class="search-results"><header>
<form action="/search" method="GET"><input name="q" type="search" value="{q}"></form>
</header><div class="results-container"><div class="results">{body}</div></div></body></html>"""
MOJEEK_RESULT = """<li class=""><a class="ob" href="{url}"><p class="i">{url}</p></a>
<h2><a class="title" href="{url}">{title}</a></h2><p class="s">{snippet}</p></li>"""
MOJEEK_NONE = """<div class="no-results"><p>No pages found matching: <em>{q}</em></p></div>"""


def mojeek(hits: list[Hit]) -> Handler:
    """www.mojeek.com: its results list, or its "no pages found" page."""

    def answer(seen: Seen) -> Answer:
        if (seen.method, seen.path) != ("GET", "/search"):
            return Answer(404, "")
        query = _first(seen.query, "q")
        rows = "".join(MOJEEK_RESULT.format(url=_e(h.url), title=_e(h.title),
                                            snippet=_bold(h.snippet, query)) for h in hits)
        body = (f'<ul class="results-standard">{rows}</ul>' if hits
                else MOJEEK_NONE.format(q=_e(query)))
        return Answer(200, MOJEEK_PAGE.format(q=_e(query), body=body))

    return answer


def _json(value: object) -> Answer:
    return Answer(200, json.dumps(value), "application/json; charset=utf-8")


def wikipedia(article: Article | None) -> Handler:
    """en.wikipedia.org's API: opensearch finds ``article`` (or nothing), the extracts
    query gives its intro."""

    def answer(seen: Seen) -> Answer:
        if (seen.method, seen.path) != ("GET", "/w/api.php"):
            return Answer(404, "")
        action = _first(seen.query, "action")
        if action == "opensearch":
            found = [article] if article else []
            return _json([_first(seen.query, "search"), [a.title for a in found],
                          ["" for _ in found], [a.url for a in found]])
        if action == "query" and article and _first(seen.query, "titles") == article.title:
            return _json({"batchcomplete": "", "query": {"pages": {"4242": {
                "pageid": 4242, "ns": 0, "title": article.title, "extract": article.extract}}}})
        return _json({"batchcomplete": "", "query": {"pages": {"-1": {
            "ns": 0, "title": _first(seen.query, "titles"), "missing": ""}}}})

    return answer


def grokipedia(seen: Seen) -> Answer:
    """grokipedia.com's typeahead, finding nothing."""
    if (seen.method, seen.path) != ("GET", "/api/typeahead"):
        return Answer(404, "")
    return _json({"results": []})


def engines(ddg: Handler, mojeek_hits: list[Hit], article: Article | None
            ) -> dict[str, Handler]:
    """The host table for ``TlsInterceptor``: the engines this module plays."""
    return {"html.duckduckgo.com": ddg, "www.mojeek.com": mojeek(mojeek_hits),
            "en.wikipedia.org": wikipedia(article), "grokipedia.com": grokipedia}
