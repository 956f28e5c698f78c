"""The Chat page of the dashboard the gateway serves (``dashboard.enabled``) runs its
turns in the gateway's own runtime: counted among the gateway's running turns
(``gateway.json``'s ``active_turns``), not in a second runtime of the same profile."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import wait_until
from dashboard_support import csrf_of
from fakellm import FakeLLM, Reply, ToolCall
from gateway_support import configure, gateway

URL = re.compile(r"^    http://(\w{20,}\.localhost:(\d+))(/p/default/profiles\?token=\S+)$",
                 re.M)


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(strict=False) as fake:
        yield fake


def active_turns(root: Path) -> object:
    return json.loads((root / "gateway.json").read_text()).get("active_turns")


def test_a_page_turn_is_one_of_the_gateway_s_turns(root: Path, environ: dict[str, str],
                                                   llm: FakeLLM) -> None:
    configure(root, llm.openai_base_url, dashboard__enabled=True, dashboard__port=0)
    llm.script.push(Reply(tool_calls=[ToolCall("terminal",
                                               {"command": f"rm -rf {root}/not-there"})]))
    with gateway(environ, root) as gw, httpx.Client(timeout=30) as browser:
        found = URL.search(gw.output())
        assert found, gw.output()
        browser.headers["Host"] = found[1]
        base = f"http://127.0.0.1:{found[2]}"  # the label host's Host, sent to loopback
        page = browser.get(base + found.group(3), follow_redirects=True)
        headers = {"x-csrf-token": csrf_of(browser.get(base + "/p/default/chat").text)}
        assert page.status_code == 200
        with browser.stream("POST", base + "/p/default/chat/turn", headers=headers,
                            json={"text": "remove it", "session_id": "in-gw"}) as answer:
            pieces = answer.iter_text()
            assert any('"type": "approval"' in piece for piece in pieces)
            wait_until(lambda: active_turns(root) == 1, what="the gateway counting it")
            stopped = browser.post(base + "/p/default/chat/in-gw/stop", headers=headers,
                                   json={})
            assert stopped.json() == {"stopped": True}
            assert '"exit_reason": "interrupted"' in "".join(pieces)
        wait_until(lambda: active_turns(root) == 0, what="the turn's end counted")
