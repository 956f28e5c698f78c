"""web_extract through the real runtime: the container's tool registry, the guarded
fetch against the local test site (tests/webpages.py), trafilatura, the session
originals and the auxiliary model (the fake LLM)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply
from hermes.config import compose_config
from hermes.container import Runtime, build_runtime
from hermes.home import home_from_path
from hermes.sessions.files import session_files_dir
from hermes.tools.context import ToolContext
from hermes.web.cache import web_cache_dir
from webpages import INJECTION, WebPages, webpages  # noqa: F401 — the fixture

TIMEOUT = 2.0


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, webpages: WebPages,  # noqa: F811
         llm: FakeLLM) -> Iterator[tuple[Runtime, WebPages, dict[str, str]]]:
    """One runtime for the module: the ``web`` toolset on, the test site's port allowed,
    a 2 s timeout, 1 MB pages, 3 redirects, no cache, pages over 3,000 characters
    condensed by the main model (the fake LLM)."""
    user = tmp_path_factory.mktemp("user")
    root = user / ".hermes"
    write_fake_provider(root, llm.openai_base_url)
    environ = {"HOME": str(user), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    runtime = start_runtime(root, environ, webpages, "web.cache_ttl=0",
                            "web.summarize_over=3000")
    yield runtime, webpages, environ
    runtime.close()


def start_runtime(root: Path, environ: dict[str, str], pages: WebPages,
                  *overrides: str) -> Runtime:
    home = home_from_path(root)
    composed = compose_config(home, environ, [
        "toolsets.enabled=[web]", f'web.allow_private=["{pages.allow}"]',
        f"web.timeout={TIMEOUT}", "web.max_bytes=1000000", "web.max_redirects=3",
        "web.max_chars=20000", *overrides])
    return build_runtime(home, composed.config, environ).start()


def extract(site: tuple[Runtime, WebPages, dict[str, str]], *urls: str,
            session: str = "s1", context: dict[str, Any] | None = None,
            **args: Any) -> list[dict[str, Any]]:
    """``web_extract`` of ``urls`` (paths on the site or whole URLs); each URL's entry;
    ``context`` sets fields of the tool context."""
    runtime, pages, environ = site
    ctx = ToolContext.for_session(runtime.home, runtime.container.environment(), session,
                                  environ=environ, **(context or {}))
    full = [pages.url(url) if url.startswith("/") else url for url in urls]
    result = runtime.container.tools().dispatch("web_extract", {"urls": full, **args}, ctx)
    assert not result.is_error, result.content
    entries: list[dict[str, Any]] = json.loads(result.content)["results"]
    assert len(entries) == len(full)
    return entries


def error_of(site: tuple[Runtime, WebPages, dict[str, str]], url: str) -> str:
    (entry,) = extract(site, url)
    assert "content" not in entry, entry
    line: str = entry["error"]
    assert "\n" not in line
    return line


def internal_requests(pages: WebPages) -> list[str]:
    return [path for path in pages.requests if path.startswith("INTERNAL")]


def test_the_article_comes_without_its_boilerplate(site) -> None:
    (entry,) = extract(site, "/article")
    content = entry["content"]
    assert content.startswith(f'<web-content source="{site[1].url("/article")}"')
    assert content.endswith("</web-content>")
    assert "Title: Millbrook bridge to close for repairs" in content
    assert "23,000 vehicles a day" in content and "hotline for residents" in content
    for boilerplate in ("ACCEPT-ALL-COOKIES-BANNER", "FOOTER-COPYRIGHT-NOTICE",
                        "SIDEBAR-ADVERT-TEXT", "Subscribe for 1 EUR"):
        assert boilerplate not in content


def test_the_docs_page_keeps_its_code_block_and_table_in_markdown(site) -> None:
    (entry,) = extract(site, "/docs")
    content = entry["content"]
    assert "```" in content and "client = Client(retry=Retry(attempts=4, backoff=0.5))" in content
    assert "| Option | Default | Meaning |" in content
    assert "| backoff | 0.2 | Seconds before the first retry, doubled each time |" in content
    assert "DOCS-FOOTER" not in content
    (text,) = extract(site, "/docs", format="text")
    assert "```" not in text["content"] and "attempts" in text["content"]


def test_json_and_text_pages_come_whole_and_a_pdf_is_one_line(site) -> None:
    json_entry, text_entry, pdf = extract(site, "/json", "/text", "/pdf")
    assert '"name": "fetchkit"' in json_entry["content"]
    assert "Line two of the notes." in text_entry["content"]
    assert "a PDF (application/pdf): PDF text extraction is not supported" in pdf["error"]


@pytest.mark.parametrize("path, reason", [
    ("/redirect-loopback", "redirected to 127.0.0.1:{other}: a loopback address"),
    ("/redirect-metadata", "redirected to 169.254.169.254:80: a cloud metadata address"),
    ("/redirect?to=http://2130706433:{other}/secret", "(127.0.0.1): a loopback address"),
    ("/redirect?to=http://0x7f.1:{other}/secret", "(127.0.0.1): a loopback address"),
    ("/redirect?to=http://[::1]:{other}/secret", "[::1]:{other}: a loopback address"),
    ("/redirect?to=http://[::ffff:127.0.0.1]:{other}/secret", "inside an IPv6 address"),
    ("/redirect?to=http://localhost:{other}/secret", "localhost"),
    ("/redirect?to=file:///etc/passwd", "file: URLs are refused"),
])
def test_redirects_to_refused_addresses_are_one_line_and_reach_nothing(
        site, path: str, reason: str) -> None:
    pages = site[1]
    before = len(internal_requests(pages))
    line = error_of(site, path.format(other=pages.other_port))
    assert reason.format(other=pages.other_port) in line, line
    assert "refused" in line
    assert len(internal_requests(pages)) == before


@pytest.mark.parametrize("url, reason", [
    ("http://127.0.0.1:{other}/secret", "127.0.0.1:{other}: a loopback address"),
    ("http://2130706433:{other}/", "2130706433:{other} (127.0.0.1): a loopback address"),
    ("http://0x7f.1:{other}/", "(127.0.0.1): a loopback address"),
    ("http://[::1]:{other}/", "[::1]:{other}: a loopback address"),
    ("http://[::ffff:127.0.0.1]:{other}/", "a loopback address inside an IPv6 address"),
    ("http://localhost:{other}/", "localhost: a loopback name"),
    ("http://169.254.169.254/latest/meta-data/", "a cloud metadata address"),
    ("http://metadata.google.internal/computeMetadata/v1/", "a cloud metadata service"),
    ("file:///etc/passwd", "file: URLs are refused"),
    ("ftp://127.0.0.1/x", "ftp: URLs are refused"),
    ("data:text/html,<p>hi</p>", "data: URLs are refused"),
])
def test_refused_urls_are_one_line_and_reach_nothing(site, url: str, reason: str) -> None:
    pages = site[1]
    before = len(internal_requests(pages))
    line = error_of(site, url.format(other=pages.other_port))
    assert reason.format(other=pages.other_port) in line, line
    assert len(internal_requests(pages)) == before


def test_a_name_resolving_to_a_private_address_is_refused(site) -> None:
    import socket

    name = socket.gethostname()
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(name, 80)}
    except OSError:
        addresses = set()
    line = error_of(site, f"http://{name}:{site[1].other_port}/")
    if addresses:  # the machine's own name, resolving to its private or loopback address
        assert "refused unless web.allow_private names it" in line, line
    else:
        assert "cannot be resolved" in line, line


def test_the_allow_entry_admits_exactly_its_port(site) -> None:
    pages = site[1]
    (entry,) = extract(site, "/secret")
    assert "Nothing secret" in entry["content"]
    line = error_of(site, f"http://127.0.0.1:{pages.other_port}/secret")
    assert "a loopback address" in line


def test_too_many_redirects_too_big_and_never_finishing_are_one_line_each(site) -> None:
    chain, big = extract(site, "/chain/4", "/big?bytes=3000000")
    assert "more than web.max_redirects (3) redirects" in chain["error"]
    assert "larger than web.max_bytes (1000000 bytes)" in big["error"]
    (fine,) = extract(site, "/chain/3")
    assert "Millbrook" in fine["content"]
    started = time.monotonic()
    line = error_of(site, "/never")
    took = time.monotonic() - started
    assert "no complete answer within web.timeout (2 s)" in line
    assert TIMEOUT - 0.1 <= took < TIMEOUT + 1.5, took


def test_one_failing_url_leaves_the_others(site) -> None:
    ok, refused, missing = extract(site, "/article", "/redirect-metadata", "/nothing-here")
    assert "Millbrook" in ok["content"]
    assert "metadata" in refused["error"] and "HTTP 404" in missing["error"]


def test_the_injection_arrives_inside_the_fence(site) -> None:
    (entry,) = extract(site, "/injection")
    content = entry["content"]
    start, end = content.index("<web-content"), content.rindex("</web-content>")
    assert start < content.index(INJECTION) < end
    assert content.count("</web-content>") == 1


def test_secret_query_values_never_appear_in_results_or_logs(
        site, caplog: pytest.LogCaptureFixture) -> None:
    secret = "sk-live-9f8e7d6c5b4a39281706"
    with caplog.at_level(logging.INFO, logger="hermes.web"):
        entry, blocked = extract(site, f"/secret?api_key={secret}&q=x",
                                 f"http://169.254.169.254/?token={secret}")
    assert "***" in entry["url"] and "***" in entry["final_url"]
    assert entry["content"].startswith('<web-content source="http://127.0.0.1:')
    assert "/secret?api_key=***&q=x" in entry["content"].splitlines()[0]
    shown = json.dumps([entry, blocked])
    assert secret not in shown and secret not in caplog.text
    assert "api_key=***" in caplog.text


def test_a_long_page_is_condensed_and_full_returns_the_original(site, llm: FakeLLM) -> None:
    llm.push(Reply(text="CONDENSED: the inquiry found corrosion in eleven girders."))
    pages = site[1]
    fetched = pages.requests.count("/long")
    (entry,) = extract(site, "/long", session="long-1")
    assert "CONDENSED: the inquiry" in entry["content"]
    assert "condensed by the auxiliary model" in entry["note"] and "full=true" in entry["note"]
    request = llm.requests[-1].body
    prompt = json.dumps(request["messages"])
    assert "Condense this web page" in prompt and "Report item 3" in prompt
    assert "<web-content" in prompt  # the page reaches the aux model fenced too
    (whole,) = extract(site, "/long", session="long-1", full=True)
    assert "Report item 3" in whole["content"] and "CONDENSED" not in whole["content"]
    assert "cut at web.max_chars (20000 of" in whole["note"]
    assert "condensed earlier in this session" in whole["note"]
    assert pages.requests.count("/long") == fetched + 1  # full=true fetched nothing
    originals = session_files_dir(site[0].home.path, "long-1") / "web-originals"
    assert [path.stat().st_mode & 0o777 for path in originals.iterdir()] == [0o600]


def test_a_failing_aux_model_leaves_the_original_capped(site, llm: FakeLLM) -> None:
    llm.push(Reply(text=""))
    (entry,) = extract(site, "/long", session="long-2")
    assert "could not be condensed" in entry["note"] and "Report item 3" in entry["content"]


def test_the_cache_answers_within_its_ttl_in_private_files(
        tmp_path: Path, webpages: WebPages, llm: FakeLLM) -> None:  # noqa: F811
    root = tmp_path / ".hermes"
    write_fake_provider(root, llm.openai_base_url)
    environ = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    runtime = start_runtime(root, environ, webpages, "web.cache_ttl=1h")
    try:
        site = (runtime, webpages, environ)
        before = webpages.requests.count("/docs")
        first = extract(site, "/docs")
        again = extract(site, "/docs")
        assert first == again and webpages.requests.count("/docs") == before + 1
        extract(site, "/docs", format="text")  # another format is another entry
        assert webpages.requests.count("/docs") == before + 2
        files = list((web_cache_dir(runtime.home.path) / "pages").iterdir())
        assert len(files) == 2 and all(f.stat().st_mode & 0o777 == 0o600 for f in files)
        assert all("127.0.0.1" not in f.name for f in files)
    finally:
        runtime.close()



def test_web_model_names_the_model_that_condenses(
        tmp_path: Path, webpages: WebPages, llm: FakeLLM) -> None:  # noqa: F811
    root = tmp_path / ".hermes"
    write_fake_provider(root, llm.openai_base_url)
    environ = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    runtime = start_runtime(root, environ, webpages, "web.cache_ttl=0",
                            "web.summarize_over=3000", "web.model=gpt-4o-mini")
    try:
        llm.push(Reply(text="Short version."))
        (entry,) = extract((runtime, webpages, environ), "/long")
        assert "Short version." in entry["content"]
        assert llm.requests[-1].body["model"] == "gpt-4o-mini"
    finally:
        runtime.close()


def test_an_interrupted_turn_reads_no_more_pages(site) -> None:
    before = len(site[1].requests)
    entries = extract(site, "/article", "/docs", context={"cancelled": lambda: True})
    assert all("the turn was interrupted" in entry["error"] for entry in entries)
    assert len(site[1].requests) == before
