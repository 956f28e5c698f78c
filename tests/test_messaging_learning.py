"""Background learning reviews and the chat, on a real gateway process with two bots of
the fake Bot API and the fake LLM: where the platform's `settings.announce_learning` is
on, the chat gets one line of what the review of its conversation saved, after the
answer; where it is off (the default), the chat hears nothing of it."""

from __future__ import annotations

from pathlib import Path

from conftest import wait_until
from fakebot import check_markdown_v2, serving
from fakellm import FakeLLM, RecordedRequest, Reply, Turn
from gateway_support import gateway
from learning_support import is_review, log_lines, memory_add
from messaging_support import configure_messaging

LOUD = "123456789:AAH-loud-token-0123456789abcdefghijk"
QUIET = "987654321:AAH-quiet-token-0123456789abcdefghij"


class Model:
    """Answers ``re: <text>``; each review saves one note about the user."""

    def __init__(self) -> None:
        self.notes = 0

    def __call__(self, request: RecordedRequest) -> Turn:
        if not is_review(request):
            return Reply(text=f"re: {request.last_user_text}")
        if request.tool_results:
            return Reply(text="Saved.")
        self.notes += 1
        return memory_add(f"note {self.notes}: likes short answers")


def telegram(url: str, secret: str, **settings: object) -> dict[str, object]:
    return {"kind": "telegram", "token": f"${{secret:{secret}}}", "allowed_users": ["42"],
            "settings": {"base_url": url, "poll_timeout": 2, "send_rate": 50, **settings}}


def test_a_review_is_announced_only_where_the_platform_says_so(
        root: Path, environ: dict[str, str]) -> None:
    with FakeLLM(fallback=Model(), strict=False) as llm, serving(LOUD) as loud, \
            serving(QUIET) as quiet:
        configure_messaging(root, llm.openai_base_url, {
            "loud": telegram(loud.url, "LOUD_TOKEN", announce_learning=True),
            "quiet": telegram(quiet.url, "QUIET_TOKEN")},
            {"LOUD_TOKEN": LOUD, "QUIET_TOKEN": QUIET},
            learning={"memory_nudge_turns": 1, "skill_nudge_iterations": 0})
        with gateway(environ, root, ready=False):
            quiet.push("hello", user_id=42)
            wait_until(lambda: len(log_lines(root)) == 1, 90, "the quiet chat's review")
            loud.push("hi there", user_id=42)
            wait_until(lambda: len(loud.texts(42)) == 2, 90, "the answer and the line")
            assert [check_markdown_v2(t)[1] for t in loud.texts(42)] == [
                "re: hi there", "learned: memory updated"]
            assert len(log_lines(root)) == 2
        assert [check_markdown_v2(t)[1] for t in quiet.texts(42)] == ["re: hello"]
