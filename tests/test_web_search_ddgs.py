"""web_search with the default backend, ddgs, end to end: ``hermes -z`` against the fake LLM,
which calls the tool; the real ddgs package and its HTTP client (primp) reach their fixed
engine addresses through ``web.proxy``, a TLS-intercepting proxy on loopback
(tests/fake_search_tls.py) that plays the engines in their real formats
(tests/fake_ddgs.py). The client trusts the test CA only through ``SSL_CERT_FILE``."""

from __future__ import annotations

import functools
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ok, refused
from fake_ddgs import Article, Hit, duckduckgo, engines
from fake_search_tls import Seen, TestCA, TlsInterceptor
from fakellm import FakeLLM
from test_web_search import llm, search_once  # noqa: F401  (llm: the fixture)

ENGINE_HOSTS = {"html.duckduckgo.com", "www.mojeek.com", "en.wikipedia.org", "grokipedia.com",
                "search.brave.com", "search.yahoo.com", "www.startpage.com"}
"""Every host ddgs 9.16.1's text engines reach (DDGS().text, backend auto)."""
DDG_HITS = [
    Hit("Widget docs — Install", "https://docs.widget.example/install",
        "Install widget with pip, then import it. The docs cover every option."),
    Hit("Widget docs — Install", "https://docs.widget.example/install/?utm_source=ddg",
        "the same page, another address"),
    Hit("Widget changelog", "https://docs.widget.example/changes", "What changed in 2.0"),
]
MOJEEK_HITS = [
    Hit("Widget docs — Install", "https://docs.widget.example/install", "pip install widget"),
    Hit("Forum thread: getting started", "https://forum.example/t/1",
        "Questions and answers about the widget docs"),
]
ARTICLE = Article("Widget", "A widget is a small gadget or mechanical device.")


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsInterceptor]:
    with TlsInterceptor({}, tmp_path_factory.mktemp("tls")) as proxy:
        yield proxy


def through(net: TlsInterceptor, hermes: Any, hosts: dict[str, Any]) -> Any:
    """``hermes`` with the engines of ``hosts`` behind the proxy, the test CA trusted."""
    net.hosts, net.requests[:], net.tunnels[:] = hosts, [], []
    return functools.partial(hermes, env={"SSL_CERT_FILE": str(net.ca_file)})


def asked(net: TlsInterceptor, host: str) -> list[Seen]:
    return [seen for seen in net.requests if seen.host == host]


def test_ddgs_results_are_mapped_deduplicated_and_fenced(hermes, llm: FakeLLM,  # noqa: F811
                                                         net: TlsInterceptor) -> None:
    run = through(net, hermes, engines(duckduckgo(DDG_HITS), MOJEEK_HITS, ARTICLE))
    _, answer = search_once(run, llm, f"web.proxy={net.proxy_url}")
    assert answer["backend"] == "ddgs" and answer["query"] == "widget docs"
    results = answer["results"]
    # ddgs ranks Wikipedia first; the ad (duckduckgo.com/y.js) and the utm_ repeat are gone
    assert [(r["title"], r["url"]) for r in results] == [
        ("Widget", "https://en.wikipedia.org/wiki/Widget"),
        ("Widget docs — Install", "https://docs.widget.example/install"),
        ("Widget changelog", "https://docs.widget.example/changes"),
        ("Forum thread: getting started", "https://forum.example/t/1")]
    install = results[1]["snippet"]
    assert install.startswith("<web-content source=") and install.endswith("</web-content>")
    assert "Install widget with pip, then import it." in install  # the longer of two bodies
    assert "<b>" not in json.dumps(results) and "small gadget" in results[0]["snippet"]
    (ddg,) = asked(net, "html.duckduckgo.com")
    assert (ddg.method, ddg.path, ddg.form["q"], ddg.form["l"]) == (
        "POST", "/html/", ["widget docs"], ["us-en"])
    assert asked(net, "www.mojeek.com")[0].query["q"] == ["widget docs"]
    assert asked(net, "en.wikipedia.org")[0].query["search"] == ["widget docs"]
    assert {tunnel.rsplit(":", 1)[0] for tunnel in net.tunnels} <= ENGINE_HOSTS
    assert {tunnel.rsplit(":", 1)[1] for tunnel in net.tunnels} == {"443"}


def test_the_limit_is_what_ddgs_is_asked_for(hermes, llm: FakeLLM,  # noqa: F811
                                             net: TlsInterceptor) -> None:
    run = through(net, hermes, engines(duckduckgo(DDG_HITS), MOJEEK_HITS, ARTICLE))
    _, answer = search_once(run, llm, f"web.proxy={net.proxy_url}",
                            arguments={"query": "widget docs", "limit": 2})
    assert [r["url"] for r in answer["results"]] == [
        "https://en.wikipedia.org/wiki/Widget", "https://docs.widget.example/install"]


def test_engines_answering_error_or_empty_pages_give_no_results(
        hermes, llm: FakeLLM, net: TlsInterceptor) -> None:  # noqa: F811
    """DuckDuckGo's bot challenge (202), Mojeek's and Wikipedia's "nothing found", and
    404 from the rest: an empty list for the model, no error."""
    run = through(net, hermes, engines(duckduckgo(DDG_HITS, blocked=True), [], None))
    _, answer = search_once(run, llm, f"web.proxy={net.proxy_url}")
    assert answer["results"] == [] and "error" not in answer
    assert {seen.host for seen in net.requests} == ENGINE_HOSTS  # every engine was asked


def test_a_certificate_from_another_ca_is_refused_in_one_line(
        hermes, llm: FakeLLM, net: TlsInterceptor, tmp_path: Path) -> None:  # noqa: F811
    """``SSL_CERT_FILE`` names the test CA; the proxy signs with another one: no engine's
    certificate is trusted (nothing turns checking off)."""
    run = through(net, hermes, engines(duckduckgo(DDG_HITS), MOJEEK_HITS, ARTICLE))
    trusted, net.ca = net.ca, TestCA(tmp_path)
    try:
        _, answer = search_once(run, llm, f"web.proxy={net.proxy_url}")
    finally:
        net.ca = trusted
    port = net.proxy_url.rsplit(":", 1)[1]
    assert answer["error"].startswith(f"ddgs: the search failed through the proxy 127.0.0.1:"
                                      f"{port} (DDGSException: RequestError"), answer
    assert "\n" not in answer["error"] and net.tunnels and not net.requests


def test_a_proxy_that_is_not_running_is_one_line(hermes, llm: FakeLLM) -> None:  # noqa: F811
    with socket.socket() as closed:  # bound, never listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        _, answer = search_once(hermes, llm, f"web.proxy=socks5h://tor:secret@127.0.0.1:{port}")
    assert answer["error"].startswith(f"ddgs: the search failed through the proxy 127.0.0.1:"
                                      f"{port} (DDGSException: ConnectError"), answer
    assert "secret" not in answer["error"]


def test_web_proxy_takes_a_proxy_url_only(hermes, root: Path) -> None:
    refused(hermes("config", "set", "web.proxy", "ftp://127.0.0.1:21"), "web.proxy",
            "'ftp://127.0.0.1:21' is no proxy URL", "socks5h://127.0.0.1:9150")
    refused(hermes("config", "set", "web.proxy", "socks5h://127.0.0.1"), "web.proxy")
    line = refused(hermes("config", "set", "web.proxy", "ftp://tor:pw123@127.0.0.1:21"),
                   "'ftp://***@127.0.0.1:21' is no proxy URL")
    assert "pw123" not in line
    assert not (root / "config.yaml").exists()
    ok(hermes("config", "set", "web.proxy", "socks5h://127.0.0.1:9150"))
    assert ok(hermes("config", "get", "web.proxy")).strip() == "socks5h://127.0.0.1:9150"
