"""The real Chromium behind the address guard (hermes.web.proxy): nothing a page does
reaches loopback ports it was not allowed, nor the metadata service; the allowed page
itself loads. First Playwright launched with the guard's own settings (chromium_args,
playwright_proxy), then the same rules through the browser tools."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from conftest import wait_until
from hermes.web.addresses import AddressPolicy
from hermes.web.proxy import GuardProxy, chromium_args, playwright_proxy, start_guard_proxy
from webpages import SECRET, WebPages, webpages  # noqa: F401 — the fixture

pytestmark = pytest.mark.chromium
CLIENT = "session-1"


def probe_page(internal: int) -> str:
    """Every way a page can make the browser fetch something, aimed at the internal
    port and the metadata service; ``document.title`` becomes ``done`` when the
    script's requests have settled."""
    targets = [f"http://127.0.0.1:{internal}", "http://169.254.169.254"]
    tags = "".join(f'<img src="{t}/img.png"><iframe src="{t}/frame"></iframe>'
                   f'<link rel="prefetch" href="{t}/prefetch">' for t in targets)
    script = """
const targets = %s;
const settle = p => p.then(() => 'reached', e => 'failed');
function xhr(url) { return new Promise((ok, no) => { const r = new XMLHttpRequest();
  r.onload = ok; r.onerror = no; r.open('GET', url); r.send(); }); }
function ws(url) { return new Promise((ok, no) => { const s = new WebSocket(url);
  s.onopen = ok; s.onerror = no; }); }
const worker = navigator.serviceWorker.register('/sw.js').then(r => new Promise(ok => {
  const w = r.installing || r.waiting || r.active;
  if (w.state === 'activated') ok(); else w.onstatechange = () => {
    if (w.state === 'activated' || w.state === 'redundant') ok(); }; }));
const probes = targets.flatMap(t => [settle(fetch(t + '/fetch')), settle(xhr(t + '/xhr')),
  settle(ws(t.replace('http', 'ws') + '/ws')),
  settle(Promise.resolve(navigator.sendBeacon(t + '/beacon', 'x')))]);
probes.push(settle(ws('ws://' + location.host + '/ws-allowed')), settle(worker));
Promise.all(probes).then(r => { window.outcomes = r; document.title = 'done'; });
""" % targets  # noqa: UP031 — JavaScript braces
    return (f"<!DOCTYPE html><html><head><title>probe</title></head><body><h1>Probe</h1>"
            f"{tags}<script>{script}</script></body></html>")


def service_worker(internal: int) -> str:
    """A worker that fetches the internal port when installed and for every request."""
    return (f"self.addEventListener('install', e => e.waitUntil("
            f"fetch('http://127.0.0.1:{internal}/sw-install').catch(() => null)));\n"
            f"self.addEventListener('activate', e => e.waitUntil(clients.claim()));")


class ProbeSite(ThreadingHTTPServer):
    """The allowed origin serving the probe page and its service worker."""

    daemon_threads = True

    def __init__(self, internal: int) -> None:
        super().__init__(("127.0.0.1", 0), ProbeHandler)
        self.internal = internal
        self.requests: list[str] = []
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()


class ProbeHandler(BaseHTTPRequestHandler):
    server: ProbeSite

    def log_message(self, *_: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 — http.server's name
        self.server.requests.append(f"{self.path} {self.headers.get('Upgrade') or ''}".strip())
        if self.path == "/sw.js":
            body, kind = service_worker(self.server.internal), "text/javascript"
        else:
            body, kind = probe_page(self.server.internal), "text/html"
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def probe_site(webpages: WebPages) -> Iterator[ProbeSite]:  # noqa: F811
    site = ProbeSite(webpages.other_port)
    yield site
    site.shutdown()
    site.server_close()


@pytest.fixture(scope="module")
def guard(webpages: WebPages, probe_site: ProbeSite) -> Iterator[GuardProxy]:  # noqa: F811
    policy = AddressPolicy([webpages.allow, f"127.0.0.1:{probe_site.server_address[1]}"])
    with start_guard_proxy(policy) as proxy:
        yield proxy


@pytest.fixture(scope="module")
def browser_context(chromium: str, guard: GuardProxy) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium,
                                             args=chromium_args(guard),
                                             proxy=playwright_proxy(guard))  # type: ignore[arg-type]
        # its own client name: the guard tells this context's refusals from others'
        context = browser.new_context(
            proxy=playwright_proxy(guard, CLIENT))  # type: ignore[arg-type]
        yield context
        browser.close()


def internal_hits(pages: WebPages) -> list[str]:
    return [path for path in pages.requests if path.startswith("INTERNAL")]


def test_nothing_a_page_loads_reaches_loopback_or_the_metadata_service(
        browser_context: Any, guard: GuardProxy, probe_site: ProbeSite,
        webpages: WebPages) -> None:  # noqa: F811
    guard.take_refusals(CLIENT)
    page = browser_context.new_page()
    response = page.goto(f"http://127.0.0.1:{probe_site.server_address[1]}/probe")
    assert response.status == 200 and page.locator("h1").inner_text() == "Probe"
    page.wait_for_function("document.title === 'done'", timeout=20_000)
    outcomes = page.evaluate("window.outcomes")
    # fetch, XHR, WebSocket to both targets fail (a beacon is only queued); the page's
    # own WebSocket went through the guard to its origin; the worker installed
    assert outcomes == ["failed", "failed", "failed", "reached"] * 2 + ["failed", "reached"]
    assert "/ws-allowed websocket" in probe_site.requests
    assert "/sw.js" in probe_site.requests
    page.close()
    refused: set[str] = set()
    wanted = {"img.png", "frame", "fetch", "xhr", "beacon", "sw-install"}

    def all_refused() -> bool:
        refused.update(r.target.split("//")[-1].split("/", 1)[-1]
                       for r in guard.take_refusals(CLIENT))
        return wanted <= refused

    wait_until(all_refused, timeout=10, what=f"refusals of {wanted}")
    assert internal_hits(webpages) == []
    assert guard.take_refusals(guard.username) == []  # the context's own name, every one


def test_each_blocked_target_is_named_by_the_guard(browser_context: Any, guard: GuardProxy,
                                                   probe_site: ProbeSite) -> None:
    guard.take_refusals(CLIENT)
    page = browser_context.new_page()
    page.goto(f"http://127.0.0.1:{probe_site.server_address[1]}/probe")
    page.wait_for_function("document.title === 'done'", timeout=20_000)
    page.close()
    refusals = guard.take_refusals(CLIENT)
    assert {r.target for r in refusals} >= {
        "http://169.254.169.254/fetch", "http://169.254.169.254/xhr",
        "http://169.254.169.254/img.png", "169.254.169.254:80"}
    assert all(r.reason.split(":")[0] in ("127.0.0.1", "169.254.169.254") for r in refusals)


@pytest.mark.parametrize("path", ["/redirect-loopback", "/redirect-metadata"])
def test_a_navigation_redirected_to_a_private_address_is_refused(
        browser_context: Any, guard: GuardProxy, webpages: WebPages,  # noqa: F811
        path: str) -> None:
    guard.take_refusals(CLIENT)
    page = browser_context.new_page()
    response = page.goto(webpages.url(path))
    assert response is not None and response.status == 403
    assert page.locator("body").inner_text().startswith("blocked: ")
    assert SECRET not in page.content()
    page.close()
    assert internal_hits(webpages) == []
    if path == "/redirect-loopback":
        target, reason = f"http://127.0.0.1:{webpages.other_port}/secret", "loopback"
    else:
        target, reason = "http://169.254.169.254/latest/meta-data/iam/security-credentials/", \
            "metadata"
    # (other pages' late requests may be refused meanwhile: look for this one)
    refusals = guard.take_refusals(CLIENT)
    assert any(r.target == target and reason in r.reason for r in refusals), refusals


def test_the_allowed_page_loads_and_its_script_cannot_reach_the_internal_port(
        browser_context: Any, webpages: WebPages) -> None:  # noqa: F811
    page = browser_context.new_page()
    page.goto(webpages.url("/fetches-loopback"))
    out = page.locator("#out")
    wait_until(lambda: out.inner_text() != "waiting", timeout=20, what="the page's fetch")
    assert out.inner_text().startswith("blocked: ") and SECRET not in page.content()
    page.goto(webpages.url("/article"))
    assert "Millbrook" in page.locator("h1").inner_text()
    page.close()
    assert internal_hits(webpages) == []


# --- the same rules through the browser tools (hermes.browser, one runtime) -------------


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory, chromium: str,
          webpages: WebPages) -> Iterator[Any]:  # noqa: F811
    """``tools(name, **args)``: one browser tool call in session s1 of a runtime whose
    web.allow_private admits the test site only; the result parsed."""
    import json

    from conftest import write_fake_provider
    from test_browser import dispatch, start_runtime

    user = tmp_path_factory.mktemp("user")
    write_fake_provider(user / ".hermes", "http://127.0.0.1:9/v1")
    environ = {"HOME": str(user), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"}
    runtime = start_runtime(user / ".hermes", environ, [webpages.allow])

    def call(name: str, **args: Any) -> dict[str, Any]:
        result = dispatch(runtime, environ, user, name, "s1", args)
        parsed: dict[str, Any] = json.loads(result.content)
        return parsed | {"_error": parsed.get("error")} if result.is_error else parsed

    yield call
    runtime.close()


def test_the_tools_refuse_a_redirect_to_loopback(tools: Any, webpages: WebPages) -> None:  # noqa: F811
    result = tools("browser_navigate", url=webpages.url("/redirect-loopback"))
    assert "127.0.0.1" in result["_error"] and "loopback" in result["_error"]
    assert "\n" not in result["_error"]
    assert internal_hits(webpages) == []


def test_the_tools_report_what_a_pages_script_was_refused(tools: Any,
                                                          webpages: WebPages) -> None:  # noqa: F811
    seen = [tools("browser_navigate", url=webpages.url("/fetches-loopback"))["content"]]

    def page_says_blocked() -> bool:
        seen.append(tools("browser_snapshot")["content"])
        return "blocked: TypeError" in seen[-1]

    wait_until(page_says_blocked, timeout=15, what="the page's own fetch to fail")
    events = [line for text in seen for line in text.splitlines()
              if line.startswith("event: refused: blocked: ")]
    assert any("127.0.0.1" in line and "loopback" in line for line in events), seen
    assert SECRET not in "".join(seen) and internal_hits(webpages) == []


def test_the_tools_refuse_a_name_that_resolves_to_a_private_address(
        tools: Any, webpages: WebPages) -> None:  # noqa: F811
    """This machine's own host name: the system resolver gives a loopback or private
    address for it (/etc/hosts, a container's bridge), never in web.allow_private."""
    import ipaddress
    import socket

    name = socket.gethostname()
    addresses = {info[4][0] for info in socket.getaddrinfo(name, None)}
    if all(ipaddress.ip_address(a).is_global for a in addresses):
        pytest.skip(f"{name} resolves to public addresses only here ({addresses})")
    result = tools("browser_navigate", url=f"http://{name}:{webpages.other_port}/secret")
    assert name in result["_error"] and "refused unless web.allow_private" in result["_error"]
    assert internal_hits(webpages) == []
