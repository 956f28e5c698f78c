"""The webhook platform over real HTTP, in a real gateway process with the fake LLM:
signatures (good, bad, missing, stale, replayed), template errors, the body limit
counted as bytes arrive, restricted toolsets, and the answer in the response."""

from __future__ import annotations

import json
import re
import socket
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import Gateway, gateway
from hermes.gateway.webhook.signature import sign, verify
from messaging_support import (
    WEBHOOK_SECRET,
    Since,
    configure_messaging,
    deliver,
    module_home,
    webhook_platform,
    webhook_url,
)

ISSUE = {"action": "opened", "issue": {"title": "Crash on start", "body": "It fails.",
                                       "labels": [{"name": "bug"}]},
         "sender": {"login": "ada"}}
ROUTES = {
    "issues": {"prompt": "Issue {issue.title} by {sender.login} ({issue.labels.0.name}): "
                         "{issue.body}"},
    "github": {"prompt": "Push to {repository.name}", "signature": "github"},
    "tools": {"prompt": "Use your tools on {task}", "toolsets": ["todo"]},
}


def answer(request: RecordedRequest) -> Reply:
    if "Use your tools" in (request.last_user_text or "") and not request.tool_results:
        return Reply(tool_calls=[ToolCall("todo", {"todos": [
            {"id": "1", "content": "look", "status": "in_progress"}]})])
    return Reply(text=f"handled: {(request.last_user_text or '')[:60]}")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=answer, strict=False) as llm:
        yield llm


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, fake: FakeLLM
           ) -> Iterator[tuple[Gateway, str]]:
    """One gateway for the module (starting one takes seconds): the tests compare the
    fake LLM's requests before and after."""
    with module_home(tmp_path_factory) as (root, environ):
        configure_messaging(root, fake.openai_base_url, {"webhook": webhook_platform(
            ROUTES, max_body_bytes=4096, replay_window=60)},
            {"TEST_WEBHOOK_SECRET": WEBHOOK_SECRET})
        with gateway(environ, root, ready=False) as gw:
            yield gw, webhook_url(gw)


@pytest.fixture
def hook(served: tuple[Gateway, str]) -> tuple[Gateway, str]:
    return served


@pytest.fixture
def llm(fake: FakeLLM) -> Since:
    return Since(fake)


def sessions(home: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(home / "state.db") as db:
        return list(db.execute("SELECT id, source FROM sessions ORDER BY started_at"))


def test_a_signed_delivery_is_answered_in_the_response(hook: tuple[Gateway, str],
                                                       llm: Since) -> None:
    gw, url = hook
    response = deliver(url, "issues", ISSUE)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "done" and body["route"] == "issues"
    prompt = "Issue Crash on start by ada (bug): It fails."
    assert body["answer"] == f"handled: {prompt[:60]}"
    assert llm.requests[-1].last_user_text == prompt
    assert (body["session_id"], "webhook") in sessions(hook[0].home)
    assert llm.requests[-1].tool_names == []  # a route without toolsets gets no tools


@pytest.mark.parametrize(("change", "fragment"), [
    ({"x-webhook-signature": sign("another-secret", b"{}", "1")}, "does not match"),
    ({"x-webhook-signature": ""}, "missing x-webhook-signature"),
    ({"x-webhook-timestamp": ""}, "missing x-webhook-timestamp"),
    ({"x-webhook-signature": "sha256=\u00e9t\u00e9"}, "does not match"),
])
def test_a_bad_or_missing_signature_is_refused(hook: tuple[Gateway, str], llm: Since,
                                               change: dict[str, str], fragment: str) -> None:
    _, url = hook
    headers = {k: v for k, v in change.items() if v}
    missing = [k for k, v in change.items() if not v]
    raw = json.dumps(ISSUE).encode()
    stamp = str(int(time.time()))
    sent = {"x-webhook-timestamp": stamp, "x-webhook-signature": sign(WEBHOOK_SECRET, raw, stamp)}
    sent = {k: v for k, v in (sent | headers).items() if k not in missing}
    response = httpx.post(f"{url}issues", content=raw,
                          headers={k: v.encode() for k, v in sent.items()}, timeout=30)
    assert response.status_code == 401, response.text
    assert fragment in response.json()["error"]["message"]
    assert llm.requests == []


def test_a_body_changed_on_the_way_is_refused(hook: tuple[Gateway, str], llm: Since) -> None:
    _, url = hook
    stamp = str(int(time.time()))
    signature = sign(WEBHOOK_SECRET, json.dumps(ISSUE).encode(), stamp)
    forged = json.dumps({**ISSUE, "sender": {"login": "mallory"}}).encode()
    response = httpx.post(f"{url}issues", content=forged, timeout=30, headers={
        "x-webhook-timestamp": stamp, "x-webhook-signature": signature})
    assert response.status_code == 401 and llm.requests == []


def test_a_stale_or_future_timestamp_is_refused(hook: tuple[Gateway, str], llm: Since) -> None:
    _, url = hook
    # Two minutes off: a second or two of a loaded machine between signing and checking
    # cannot bring it inside the window (61 s once arrived 59 s ahead, and was let in).
    for skew, said in ((-120, "in the past"), (120, "in the future")):
        response = deliver(url, "issues", ISSUE, timestamp=time.time() + skew)
        assert response.status_code == 401, response.text
        message = response.json()["error"]["message"]
        assert re.search(rf"its timestamp is 1[0-4]\d s {said}, outside the replay window of "
                         "60 s", message), message
    assert llm.requests == []


def test_a_replayed_delivery_runs_once(hook: tuple[Gateway, str], llm: Since) -> None:
    _, url = hook
    # A body of its own: the same body signed in the same second by an earlier test of
    # this module's gateway would be (rightly) a duplicate already.
    issue = {**ISSUE, "test": "replayed delivery", "at": time.time()}
    raw = json.dumps(issue).encode()
    stamp = str(int(time.time()))
    headers = {"x-webhook-timestamp": stamp, "x-webhook-signature": sign(WEBHOOK_SECRET, raw,
                                                                         stamp)}
    first = httpx.post(f"{url}issues", content=raw, headers=headers, timeout=60)
    assert first.status_code == 200 and first.json()["status"] == "done"
    calls = len(llm.requests)
    again = httpx.post(f"{url}issues", content=raw, headers=headers, timeout=60)
    assert again.status_code == 200 and again.json()["status"] == "duplicate"
    now = time.time()  # signed anew each time: only the id says it is the same delivery
    same_id = deliver(url, "issues", issue, delivery_id="fixed-id", timestamp=now + 1)
    replay = deliver(url, "issues", issue, delivery_id="fixed-id", timestamp=now + 2)
    assert same_id.json()["status"] == "done" and replay.json()["status"] == "duplicate"
    assert len(llm.requests) == calls + 1


def test_github_signatures(hook: tuple[Gateway, str], llm: Since) -> None:
    _, url = hook
    raw = json.dumps({"repository": {"name": "hermes"}}).encode()
    good = {"x-hub-signature-256": sign(WEBHOOK_SECRET, raw), "x-github-delivery": "d-1"}
    response = httpx.post(f"{url}github", content=raw, headers=good, timeout=60)
    assert response.status_code == 200 and response.json()["answer"] == \
        "handled: Push to hermes"
    again = httpx.post(f"{url}github", content=raw, headers=good, timeout=60)
    assert again.json()["status"] == "duplicate"
    bad = {**good, "x-github-delivery": "d-2", "x-hub-signature-256": sign("wrong", raw)}
    assert httpx.post(f"{url}github", content=raw, headers=bad, timeout=60).status_code == 401
    missing = httpx.post(f"{url}github", content=raw, timeout=60)
    assert missing.status_code == 401
    assert "missing x-hub-signature-256" in missing.json()["error"]["message"]


def test_a_signed_github_ping_is_answered_without_the_agent(hook: tuple[Gateway, str],
                                                            llm: Since) -> None:
    """A new GitHub webhook's first delivery is a ``ping`` (no template field it could
    fill): answered 200, so GitHub shows the hook as working; unsigned, it is refused."""
    _, url = hook
    raw = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 7,
                      "hook": {"type": "Repository", "events": ["push"]}}).encode()
    ping = {"x-github-event": "ping", "x-github-delivery": "ping-1",
            "x-hub-signature-256": sign(WEBHOOK_SECRET, raw)}
    response = httpx.post(f"{url}github", content=raw, headers=ping, timeout=60)
    assert response.status_code == 200, response.text
    assert response.json() == {"status": "pong", "route": "github", "delivery_id": "ping-1"}
    unsigned = httpx.post(f"{url}github", content=raw, headers={"x-github-event": "ping"},
                          timeout=60)
    assert unsigned.status_code == 401
    assert llm.requests == []


def test_the_listeners_root_names_nothing_of_the_agent(hook: tuple[Gateway, str],
                                                       llm: Since) -> None:
    gw, url = hook
    root = url.removesuffix("webhooks/")
    for path in ("", "favicon.ico", "v1/models"):
        response = httpx.get(f"{root}{path}", timeout=30)
        assert response.status_code == 404, (path, response.text)
        assert response.json() == {"error": {"message": "not found", "type":
                                             "invalid_request_error", "param": None,
                                             "code": "not_found"}}, (path, response.text)
    assert llm.requests == []


def test_a_missing_template_field_is_named(hook: tuple[Gateway, str], llm: Since) -> None:
    _, url = hook
    no_title = {**ISSUE, "issue": {"body": "x", "labels": [{"name": "bug"}]}}
    response = deliver(url, "issues", no_title)
    assert response.status_code == 422, response.text
    message = response.json()["error"]["message"]
    assert message == "template field issue.title: issue has no 'title' (it has: body, labels)"
    no_labels = {**ISSUE, "issue": {**ISSUE["issue"], "labels": []}}
    message = deliver(url, "issues", no_labels).json()["error"]["message"]
    assert message == "template field issue.labels.0.name: issue.labels has 0 item(s), no item 0"
    not_json = deliver(url, "issues", None, body=b"title=x")
    assert not_json.status_code == 400 and "not JSON" in not_json.json()["error"]["message"]
    assert llm.requests == []
    # a refused delivery is not remembered: its corrected retry, same id, runs
    assert deliver(url, "issues", no_title, delivery_id="retry").status_code == 422
    corrected = {**ISSUE, "sender": {"login": "retrying"}}  # a body no other test signed
    assert deliver(url, "issues", corrected, delivery_id="retry").json()["status"] == "done"


def test_the_body_limit_counts_bytes_as_they_arrive(hook: tuple[Gateway, str],
                                                    llm: Since) -> None:
    _, url = hook
    port = int(url.split(":")[2].split("/")[0])
    stamp = str(int(time.time()))
    chunk, reply = b"x" * 1024, b""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"POST /webhooks/issues HTTP/1.1\r\nHost: x\r\n"
                     b"Transfer-Encoding: chunked\r\nX-Webhook-Timestamp: " + stamp.encode() +
                     b"\r\nX-Webhook-Signature: sha256=00\r\n\r\n")
        try:
            for _ in range(64):  # 64 KiB offered, 4 KiB allowed
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            pass  # cut off once past the limit
        while part := sock.recv(65536):  # until the server closes the connection
            reply += part
    assert reply.startswith(b"HTTP/1.1 413"), reply
    assert b"settings.max_body_bytes of the webhook platform" in reply
    assert llm.requests == []


def test_a_route_sees_only_its_toolsets(hook: tuple[Gateway, str], llm: Since) -> None:
    _, url = hook
    response = deliver(url, "tools", {"task": "the backlog"})
    assert response.status_code == 200, response.text
    offered = {tuple(r.tool_names) for r in llm.requests}
    assert offered == {("todo",)}
    assert any(r.tool_results for r in llm.requests)  # the todo tool really ran


def test_unknown_routes_and_methods(hook: tuple[Gateway, str], llm: Since) -> None:
    _, url = hook
    unknown = deliver(url, "nope", ISSUE)
    assert unknown.status_code == 404 and "no webhook route" in unknown.text
    get = httpx.get(f"{url}issues", timeout=30)
    assert get.status_code == 405 and get.json()["error"]["code"] == "method_not_allowed"
    assert llm.requests == []


def test_a_long_delivery_id_is_kept_short() -> None:
    body, stamp = b"{}", str(int(time.time()))
    headers = {"x-webhook-timestamp": stamp, "x-webhook-signature": sign("k", body, stamp),
               "x-webhook-id": "x" * 10_000}
    kept = verify("generic", "k", headers, body, 60)
    assert kept.startswith("sha256:") and len(kept) == 71
    assert verify("generic", "k", headers | {"x-webhook-id": "short-id"}, body, 60) == "short-id"
