"""The example profile ``researcher`` end to end through ``hermes -p NAME -z``: the fake LLM
scripts the tool calls, a fake SearXNG answers the search (tests/fake_search.py) and the
local test site serves the pages (tests/webpages.py).

- "find the docs for Z": web_search, then web_extract of the docs page, then the answer;
- "what does page X say about Y": web_extract of the page, then the answer citing it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ok
from fake_search import FakeSearch, Hit
from fakellm import FakeLLM, Reply, ToolCall
from webpages import WebPages, webpages  # noqa: F401 — the fixture


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def researcher(hermes, root: Path, llm: FakeLLM) -> str:
    """A profile made from the example, its model the fake LLM."""
    ok(hermes("profile", "create", "res", "--from", "researcher"))
    home = root / "profiles" / "res"
    config = yaml.safe_load((home / "config.yaml").read_text()) or {}
    config["defaults"] = [*config.get("defaults", []), {"override provider": "custom"}]
    config["provider"] = {"model": "gpt-4o", "api_base": llm.openai_base_url,
                          "retry_backoff": 0, "max_retries": 1, "timeout": 10}
    (home / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (home / ".env").write_text("CUSTOM_API_KEY=sk-fake-test-key-1234\n")
    (home / ".env").chmod(0o600)
    return "res"


def tool_results(llm: FakeLLM) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in llm.requests[-1].body["messages"]
            if m.get("role") == "tool"]


def test_find_the_docs_for_z(hermes_subprocess, llm: FakeLLM, researcher: str,
                             webpages: WebPages) -> None:  # noqa: F811
    docs = webpages.url("/docs")
    hits = [Hit("Configuring retries — fetchkit 2.4", docs, "fetchkit retries failed requests "
                "with exponential backoff."),
            Hit("fetchkit on PyPI", "https://pypi.example/project/fetchkit/", "A client.")]
    answer = (f"fetchkit's retry docs are at {docs}: pass Retry(attempts=..., backoff=...) "
              "to the Client; the defaults are 3 attempts and 0.2 s backoff.")
    with FakeSearch("searxng", hits=hits) as search:
        llm.push(Reply(tool_calls=[ToolCall("web_search", {"query": "fetchkit retry docs"})]),
                 Reply(tool_calls=[ToolCall("web_extract", {"urls": [docs]})]),
                 Reply(text=answer))
        proc = hermes_subprocess("-p", researcher, "-z", "find the docs for fetchkit retries",
                                 "web=searxng", f"web.base_url={search.base_url}",
                                 f'web.allow_private=["{webpages.allow}"]')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == answer
    first = llm.requests[0]
    assert "meticulous researcher" in json.dumps(first.body["messages"][0])
    assert {"web_search", "web_extract"} <= set(first.tool_names)
    assert "write_file" not in first.tool_names  # the research toolsets read only
    found, page = tool_results(llm)
    assert [r["url"] for r in found["results"]] == [docs, "https://pypi.example/project/fetchkit/"]
    assert search.requests[0].query["q"] == ["fetchkit retry docs"]
    content = page["results"][0]["content"]
    assert "Retry(attempts=4, backoff=0.5)" in content and "| attempts | 3 |" in content
    assert "DOCS-FOOTER" not in content


def test_what_does_page_x_say_about_y(hermes_subprocess, llm: FakeLLM, researcher: str,
                                      webpages: WebPages) -> None:  # noqa: F811
    article = webpages.url("/article")
    answer = (f"According to {article}, the Millbrook bridge closes for eighteen months "
              "while its 1962 deck is replaced; a ferry runs every twenty minutes.")
    llm.push(Reply(tool_calls=[ToolCall("web_extract", {"urls": [article]})]),
             Reply(text=answer))
    proc = hermes_subprocess("-p", researcher, "-z",
                             f"what does {article} say about the bridge closure?",
                             f'web.allow_private=["{webpages.allow}"]')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == answer
    (page,) = tool_results(llm)
    content = page["results"][0]["content"]
    assert content.startswith("<web-content") and "eighteen months" in content
    assert "ACCEPT-ALL-COOKIES-BANNER" not in content and "SIDEBAR-ADVERT-TEXT" not in content
