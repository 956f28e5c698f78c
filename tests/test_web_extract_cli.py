"""web_extract end to end: ``hermes -z`` against the fake LLM, which calls the tool on the
local test site; what the model is sent back, and what the home keeps."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import write_fake_provider
from fake_search import FakeSearch
from fakellm import FakeLLM, Reply, ToolCall
from webpages import INJECTION, SECRET, WebPages, webpages  # noqa: F401 — the fixture


@pytest.fixture
def llm(root: Path) -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        write_fake_provider(root, fake.openai_base_url)
        yield fake


def tool_messages(llm: FakeLLM) -> list[str]:
    """The tool results the model was sent, in order."""
    return [m["content"] for r in llm.requests for m in r.body.get("messages", [])
            if m.get("role") == "tool"]


def test_a_page_s_instruction_reaches_the_model_inside_the_fence(
        hermes_subprocess, llm: FakeLLM, webpages: WebPages) -> None:  # noqa: F811
    llm.push(Reply(tool_calls=[ToolCall("web_extract", {"urls": [
        webpages.url("/injection"), webpages.url("/redirect-loopback")]})]),
        Reply(text="The page is about tomatoes."))
    proc = hermes_subprocess("-z", "what does the gardening page say?", "-t", "web",
                             f'web.allow_private=["{webpages.allow}"]')
    assert proc.returncode == 0, proc.stderr
    assert "The page is about tomatoes." in proc.stdout
    (content,) = tool_messages(llm)
    page, refused = json.loads(content)["results"]
    fenced = page["content"]
    assert fenced.index("<web-content") < fenced.index(INJECTION) < fenced.index("</web-content>")
    assert "a loopback address" in refused["error"] and SECRET not in content


@pytest.mark.parametrize(("where", "masked"), [("query", "api_key=***"),
                                               ("userinfo", "http://***@127.0.0.1")])
def test_a_secret_in_a_url_is_kept_nowhere(hermes_subprocess, llm: FakeLLM, root: Path,
                                           webpages: WebPages, where: str,  # noqa: F811
                                           masked: str) -> None:
    """A token as the query's api_key, or as the userinfo's only part (a GitHub token in
    https://TOKEN@host/)."""
    secret = "sk-proj-Zx81Qw55Lm20Ty47Hb93"
    url = (webpages.url(f"/secret?api_key={secret}&page=2") if where == "query"
           else webpages.url("/secret").replace("http://", "http://tok4Zx81Qw55Lm20Ty47Hb93@"))
    secret = secret if where == "query" else "tok4Zx81Qw55Lm20Ty47Hb93"  # no known key shape
    llm.push(Reply(tool_calls=[ToolCall("web_extract", {"urls": [url]})]), Reply(text="ok"))
    proc = hermes_subprocess("-z", "read it", "-t", "web",
                             f'web.allow_private=["{webpages.allow}"]', "web.cache_ttl=1h")
    assert proc.returncode == 0, proc.stderr
    (content,) = tool_messages(llm)
    assert "Nothing secret" in content and masked in content
    assert secret not in content and secret not in proc.stdout
    assert "web_extract urls=" in proc.stderr  # the progress line, its URL masked
    assert secret not in proc.stderr
    with sqlite3.connect(root / "state.db") as db:  # the model's own call keeps its URL
        stored = db.execute("SELECT group_concat(content) FROM messages WHERE role = 'tool'")
        assert masked in stored.fetchone()[0]
    for path in root.rglob("*"):  # logs, the web cache, every other file
        if path.is_file() and not path.name.startswith("state.db"):
            assert secret.encode() not in path.read_bytes(), path


def test_a_backend_that_extracts_reads_the_pages_it_can(hermes, llm: FakeLLM, root: Path,
                                                       webpages: WebPages) -> None:  # noqa: F811
    article, docs = webpages.url("/article"), webpages.url("/docs")
    with FakeSearch("tavily") as service:
        service.pages[article] = ("Bridge", "TAVILY-MARKDOWN of the bridge article")
        with (root / ".env").open("a") as env:
            env.write(f"TAVILY_API_KEY={service.key}\n")
        llm.push(Reply(tool_calls=[ToolCall("web_extract", {"urls": [article, docs]})]),
                 Reply(text="ok"))
        proc = hermes("-z", "read them", "-t", "web", "web=tavily",
                      f"web.base_url={service.base_url}", f'web.allow_private=["{webpages.allow}"]')
        assert proc.exit_code == 0, proc.stderr
        assert [seen.path for seen in service.requests] == ["/extract", "/extract"]
    (content,) = tool_messages(llm)
    remote, local = json.loads(content)["results"]
    assert "TAVILY-MARKDOWN" in remote["content"] and remote["extracted_by"] == "tavily"
    assert "| Option | Default | Meaning |" in local["content"]  # tavily failed it: read here
