"""One person across platforms (``hermes identity``): linked addresses are one user for
``session_search`` — a direct chat finds its own person's sessions, on every linked
account, and never another person's — while each conversation stays its own session.

Through the real CLI (link, list, unlink, ``--code``; bad input refused in one line, exit
2, nothing written) and a real gateway on the fake Bot API with the fake LLM calling
``session_search``; linking with a code from the chat (``/link``, ``/link CODE``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ok, refused, wait_until
from fakebot import FakeBotAPI, check_markdown_v2, serving
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import Gateway, gateway
from messaging_support import configure_messaging, module_home, platform_detail

TOKEN = "123456789:AAH-identity-token-0123456789abcdefg"
ADA, BO, CY, DEE, EVE = 5101, 5102, 5103, 5104, 5105


def script(request: RecordedRequest) -> Reply:
    """``search WORD`` calls session_search; its result is said; anything else echoed."""
    if request.body["messages"][-1]["role"] == "tool":
        return Reply(text=f"tool said: {request.tool_results[-1].content}")
    text = (request.last_user_text or "").splitlines()[-1]
    if text.startswith("search "):
        return Reply(tool_calls=[ToolCall("session_search", {"query": text[7:]})])
    return Reply(text=f"noted: {text}")


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=script, strict=False) as fake:
        yield fake


@pytest.fixture(scope="module")
def bot() -> Iterator[FakeBotAPI]:
    with serving(TOKEN) as api:
        yield api


def telegram(bot: FakeBotAPI) -> dict:
    return {"kind": "telegram", "token": "${secret:TELEGRAM_BOT_TOKEN}",
            "allowed_users": [str(u) for u in (ADA, BO, CY, DEE, EVE)],
            "settings": {"base_url": bot.url, "poll_timeout": 2, "send_rate": 50}}


@pytest.fixture
def profile(root: Path, llm: FakeLLM, bot: FakeBotAPI) -> Path:
    configure_messaging(root, llm.openai_base_url, {"telegram": telegram(bot)},
                        {"TELEGRAM_BOT_TOKEN": TOKEN})
    return root


def test_link_list_and_unlink(hermes, profile: Path) -> None:
    assert ok(hermes("identity", "list")).startswith("no linked identities")
    assert ok(hermes("identity", "link", f"telegram:{ADA}", f"telegram:{BO}")) == \
        f"linked telegram:{ADA}, telegram:{BO}: one user for session_search\n"
    # a third address joins the same person; two people linked become one
    ok(hermes("identity", "link", f"telegram:{CY}", f"telegram:{BO}"))
    [line] = ok(hermes("identity", "list")).splitlines()
    assert f"telegram:{ADA}  telegram:{BO}  telegram:{CY}" in line
    assert ok(hermes("identity", "unlink", f"telegram:{BO}")) == \
        f"unlinked telegram:{BO} from telegram:{ADA}, telegram:{CY}\n"
    assert ok(hermes("identity", "unlink", f"telegram:{CY}")) == \
        f"unlinked telegram:{CY}; telegram:{ADA} is linked to nobody now\n"
    assert ok(hermes("identity", "list")).startswith("no linked identities")
    assert (profile / "identities.json").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(("args", "fragments"), [
    (["link", "telegram:1"], ["link needs two different addresses (or one with --code)"]),
    (["link", "telegram:1", "telegram:1"], ["link needs two different addresses"]),
    (["link", "telegram", "telegram:1"], ["'telegram' is not an address; write "
                                          "platform:user_id"]),
    (["link", "telegrm:1", "telegram:2"], ["telegrm:1: no platform 'telegrm' is enabled "
                                           "(did you mean \"telegram\"?) (enabled: telegram)"]),
    (["link", "telegram:1", "telegram:2", "--code"], ["--code goes with one address"]),
    (["unlink", "telegram:9"], ["telegram:9 is not linked to anyone"]),
])
def test_bad_input_is_refused_in_one_line_and_nothing_is_written(
        hermes, profile: Path, args: list[str], fragments: list[str]) -> None:
    refused(hermes("identity", *args), *fragments)
    assert not (profile / "identities.json").exists()


def test_linking_twice_and_a_broken_file_are_refused(hermes, profile: Path) -> None:
    ok(hermes("identity", "link", "telegram:1", "telegram:2"))
    before = (profile / "identities.json").read_text()
    refused(hermes("identity", "link", "telegram:2", "telegram:1"),
            "telegram:2 and telegram:1 are linked already")
    assert (profile / "identities.json").read_text() == before
    (profile / "identities.json").write_text("{not json")
    refused(hermes("identity", "list"), "identities.json: cannot read the identities file")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, llm: FakeLLM,
           bot: FakeBotAPI) -> Iterator[tuple[Gateway, dict[str, str]]]:
    with module_home(tmp_path_factory) as (root, environ):
        configure_messaging(root, llm.openai_base_url, {"telegram": telegram(bot)},
                            {"TELEGRAM_BOT_TOKEN": TOKEN})
        with gateway(environ, root, ready=False) as gw:
            platform_detail(gw, "telegram")
            yield gw, environ


def say(bot: FakeBotAPI, user: int, text: str, count: int = 1) -> list[str]:
    start = len(bot.texts(user))
    bot.push(text, user_id=user)
    wait_until(lambda: len(bot.texts(user)) >= start + count, 60, f"an answer to {user}")
    return [check_markdown_v2(t)[1] for t in bot.texts(user)[start:]]


def found(bot: FakeBotAPI, user: int, word: str) -> list[str]:
    """The sessions ``session_search`` found for ``user``, by their snippets."""
    [answer] = say(bot, user, f"search {word}")
    result = json.loads(answer.removeprefix("tool said: "))
    return [hit["snippet"] for hit in result["results"]]


def test_linked_accounts_find_each_others_sessions_and_others_never(
        served: tuple[Gateway, dict[str, str]], bot: FakeBotAPI) -> None:
    say(bot, ADA, "my locker code is swordfish")
    say(bot, CY, "the swordfish recipe needs lemon")
    assert found(bot, BO, "swordfish") == []  # two other people's sessions
    [offer] = say(bot, ADA, "/link")
    code = re.search(r"your link code: ([A-Z0-9]{8}) — send /link \1", offer)
    assert code, offer
    assert say(bot, BO, "/link WRONGCDE") == [
        "no such link code, or it expired (codes last 10 minutes); ask for a new one"]
    assert say(bot, BO, f"/link {code[1]}") == [f"linked telegram:{ADA}, telegram:{BO}: "
                                                "one user now"]
    [hit] = found(bot, BO, "swordfish")
    assert "locker" in hit  # Ada's, now Bo's own person's; never Cy's
    assert say(bot, BO, f"/link {code[1]}")[0].startswith("no such link code")  # used up


def test_a_code_from_the_cli_links_the_account_that_sends_it(
        served: tuple[Gateway, dict[str, str]], bot: FakeBotAPI, hermes_subprocess) -> None:
    gw, environ = served
    say(bot, EVE, "the swordfish recipe needs lemon")
    assert found(bot, DEE, "swordfish") == []
    shown = hermes_subprocess("identity", "link", f"telegram:{EVE}", "--code",
                              env={**environ, "HERMES_HOME": str(gw.home)})
    assert shown.returncode == 0, shown.stderr
    code = re.search(r"link code for telegram:\d+: ([A-Z0-9]{8}) — send `/link \1`",
                     shown.stdout)
    assert code, shown.stdout
    assert say(bot, DEE, f"/link {code[1]}") == [f"linked telegram:{EVE}, telegram:{DEE}: "
                                                 "one user now"]
    [hit] = found(bot, DEE, "swordfish")
    assert "recipe" in hit
