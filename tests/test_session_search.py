"""The ``session_search`` tool: through the agent loop against the fake LLM, and its
handler on a real ``state.db`` (safe syntax, CJK substrings, lineage, caps, scope)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall
from hermes.agent.factory import Interaction
from hermes.config import compose_config
from hermes.container import build_runtime
from hermes.home import home_from_path
from hermes.sessions.models import MATCH_CLOSE, MATCH_OPEN
from hermes.sessions.store import SessionStore
from hermes.tools.context import ToolContext
from hermes.tools.session_search import MAX_RESULTS
from test_tools_support import call, make_context, make_registry, other_home


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


def test_the_model_finds_a_chinese_place_name_from_an_earlier_session(
        root: Path, environ, llm: FakeLLM, tmp_path: Path) -> None:
    write_fake_provider(root, llm.openai_base_url)
    home = home_from_path(root)
    composed = compose_config(home, environ, [f"environment.cwd={tmp_path}"])
    llm.push(Reply(text="好的，祝你出差顺利！"),
             Reply(tool_calls=[ToolCall("session_search", {"query": "北京"}, id="s1")]),
             Reply(text="You said you were going to 北京 on a business trip."))
    with build_runtime(home, composed.config, environ) as runtime:
        factory = runtime.container.agent_factory()
        earlier = factory.new_session(Interaction())
        earlier.run_turn("我明天去北京出差")
        now = factory.new_session(Interaction())
        assert "session_search" in llm.requests[0].tool_names
        result = now.run_turn("Where did I say I was travelling?")
    assert result.exit_reason == "completed"
    [seen] = llm.requests[2].tool_results
    found = json.loads(seen.content)
    assert found["count"] == 1  # the current session (whose tool call says 北京) is left out
    [hit] = found["results"]
    assert hit["session_id"] == earlier.session_id and hit["role"] == "user"
    assert f"我明天去{MATCH_OPEN}北京{MATCH_CLOSE}出差" in hit["snippet"]
    assert hit["context"] == {"position": "after", "role": "assistant",
                              "text": "好的，祝你出差顺利！"}


# -- the handler on a real database --------------------------------------------------------

def seed(ctx: ToolContext, conversations: dict[str, list[tuple[str, str]]],
         parents: dict[str, str] | None = None) -> None:
    """Sessions (in order) with their (role, content) messages in the context's home."""
    with SessionStore(ctx.home.sessions_db) as store:
        for session_id, messages in conversations.items():
            parent = (parents or {}).get(session_id)
            store.create_session("cli", "m", parent, session_id=session_id)
            store.add_messages(session_id, [{"role": r, "content": c} for r, c in messages])


def search(ctx: ToolContext, **args: Any) -> dict[str, Any]:
    return call(make_registry(["session_search"]), ctx, "session_search", args)


def test_the_tool_is_declared_read_only_and_parallel_safe() -> None:
    registry = make_registry(["session_search"])
    assert registry.names() == ["session_search"]
    assert registry.is_parallel_safe("session_search")
    assert "session_search" not in make_registry().names()  # its own toolset


def test_a_profile_without_sessions_gets_no_results_and_no_database(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    found = search(ctx, query="anything")
    assert found["results"] == [] and "no sessions yet" in found["note"]
    assert not ctx.home.sessions_db.exists()


def test_hits_carry_a_marked_snippet_and_the_message_before(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    seed(ctx, {"a": [("user", "how do we ship?"),
                     ("assistant", "Run the deployment script in ops/ then tag the release.")]})
    [hit] = search(ctx, query="ploym")["results"]  # a word part: the trigram fallback
    assert f"de{MATCH_OPEN}ploym{MATCH_CLOSE}ent" in hit["snippet"]
    assert hit["context"] == {"position": "before", "role": "user", "text": "how do we ship?"}


def test_fts_syntax_in_the_query_is_harmless(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    seed(ctx, {"a": [("user", 'the "quoted" NEAR(thing) OR other')]})
    for query in ['"unbalanced', "NEAR(", "a OR", "*", "col:value", "(((", "thing)"]:
        found = search(ctx, query=query)
        assert "error" not in found and isinstance(found["results"], list), query


def test_a_conversation_and_its_continuation_are_one_hit(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    seed(ctx, {"root": [("user", "the kraken password rotates monthly")],
               "child": [("user", "remind me: kraken rotation day?")]},
         parents={"child": "root"})
    hits = search(ctx, query="kraken")["results"]
    assert len(hits) == 1 and hits[0]["session_id"] in {"root", "child"}


def test_results_are_capped(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    seed(ctx, {f"s{i:02}": [("user", f"zebra number {i}")] for i in range(MAX_RESULTS + 5)})
    assert search(ctx, query="zebra")["count"] == 5  # the default
    assert search(ctx, query="zebra", limit=MAX_RESULTS)["count"] == MAX_RESULTS
    assert search(ctx, query="zebra", limit=50)["count"] == MAX_RESULTS
    assert "error" in search(ctx, query="   ")


def test_the_current_session_is_left_out_unless_asked_for(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)  # its session id is "session-1"
    seed(ctx, {"older": [("user", "walrus facts")], ctx.session_id: [("user", "walrus?")]})
    assert [h["session_id"] for h in search(ctx, query="walrus")["results"]] == ["older"]
    both = search(ctx, query="walrus", include_current=True)["results"]
    assert {h["session_id"] for h in both} == {"older", ctx.session_id}


def test_another_profiles_sessions_are_never_searched(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    seed(ctx, {"mine": [("user", "my own note about otters")]})
    elsewhere = make_context(tmp_path, profile="other")
    assert elsewhere.home != ctx.home and other_home(ctx, "other") == elsewhere.home
    assert search(elsewhere, query="otters")["results"] == []
    assert search(ctx, query="otters")["count"] == 1
