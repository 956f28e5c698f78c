"""Messaging platforms benchmark (issue 30): what a platform adds around the agent's turn,
and 200 chats in flight on one gateway.

Run from the repository root (the README's install: ``.venv/bin/python``):

    .venv/bin/python bench/platforms.py                       # every platform with a driver
    .venv/bin/python bench/platforms.py --only telegram --turns 60 --json /tmp/platforms.json

Everything real but the model and the chat service: ``hermes gateway run`` (the CLI, a
process of its own) serves one profile whose platform points at the platform's fake from
``tests/`` (Telegram: ``tests/fakebot.py``, the Bot API over real HTTP, long polling) and
whose model is ``tests.fakellm`` answering at once with ``re: <message>``.

1. **Latency**: one chat, messages one after another. For each: from the moment the
   platform could first know of the message (Telegram: the ``getUpdates`` answer that
   carried it went out) to the moment the reply reached the fake (its ``sendMessage``
   request arrived), less the agent's turn itself: from the user's message written to
   the session to the answer written (``messages.created_at`` in ``state.db``; the same
   clock). What is left is the platform's way in and out: the adapter, the gate, the
   routing, opening the turn, splitting and sending the reply. Target: median <= 50 ms
   for each platform. Shown beside it: the whole way (message to reply, less only the
   fake model's own handling, well under a millisecond) and, of it, the way to the
   model's request.
2. **Load**: 200 chats (200 allowed users) each send one message at once; every chat must
   get exactly one reply, its own (``re: <its message>``), none lost or duplicated (a
   second look after the last), and the gateway's resident memory (``VmRSS``) may grow
   by at most 50 MiB from before the burst (after warm-up turns) to after it. The
   platform's ``send_rate`` is set to Telegram's documented bulk limit (30 a second).

Exit status 0 even when a target fails; 2 when a platform cannot be set up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Protocol

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

LATENCY_TARGET_MS = 50.0
RSS_TARGET_MIB = 50.0
CHATS = 200
FIRST_USER = 10_000


class Driver(Protocol):
    """One platform's fake, as the bench talks to it."""

    name: str

    def platform(self, allowed: list[int]) -> dict[str, Any]:
        """The ``platforms.enabled.<name>`` entry pointing at the fake."""

    def secrets(self) -> dict[str, str]:
        """The profile's ``.env`` lines the entry refers to."""

    def ready(self) -> bool:
        """Whether the platform's connection to the fake is up (messages now reach it)."""

    def say(self, user: int, text: str) -> Any:
        """``user`` sends ``text`` in a direct chat; a handle for ``arrived``."""

    def arrived(self, handle: Any) -> float | None:
        """When (``time.monotonic()``) the platform could first know of the message."""

    def replies(self) -> dict[int, list[tuple[str, float]]]:
        """Every reply sent so far, by chat: its text and when the fake received it."""


class Telegram:
    """``tests/fakebot.py``: long polling, ``sendMessage``."""

    name = "telegram"
    token = "123456:bench-token-abcdefghijklmnopqrstuvwx"

    def __init__(self, api: Any):
        self.api = api

    @classmethod
    @contextmanager
    def serving(cls) -> Iterator[Telegram]:
        from fakebot import serving

        with serving(cls.token) as api:
            yield cls(api)

    def platform(self, allowed: list[int]) -> dict[str, Any]:
        return {"kind": "telegram", "token": "${secret:TELEGRAM_BOT_TOKEN}",
                "allowed_users": [str(user) for user in allowed],
                "settings": {"base_url": self.api.url, "poll_timeout": 5, "send_rate": 30}}

    def secrets(self) -> dict[str, str]:
        return {"TELEGRAM_BOT_TOKEN": self.token}

    def ready(self) -> bool:
        return True  # polling: a message waits for the next getUpdates

    def say(self, user: int, text: str) -> int:
        return int(self.api.push(text, user_id=user))

    def arrived(self, handle: int) -> float | None:
        return self.api.handed.get(handle)

    def replies(self) -> dict[int, list[tuple[str, float]]]:
        found: dict[int, list[tuple[str, float]]] = {}
        for call in self.api.of("sendMessage"):
            found.setdefault(int(call.params["chat_id"]), []).append(
                (str(call.params["text"]), call.at))
        return found


class Discord:
    """``tests/fake_discord.py``: MESSAGE_CREATE over the gateway WebSocket, replies over
    REST (``POST /channels/{dm}/messages``)."""

    name = "discord"
    token = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gabcde.bench-discord-bot-token-0123456789"

    def __init__(self, fake: Any):
        self.fake = fake

    @classmethod
    @contextmanager
    def serving(cls) -> Iterator[Discord]:
        from fake_discord import serving

        with serving(cls.token) as fake:
            yield cls(fake)

    def platform(self, allowed: list[int]) -> dict[str, Any]:
        return {"kind": "discord", "token": "${secret:DISCORD_BOT_TOKEN}",
                "allowed_users": [str(user) for user in allowed],
                "settings": {"api_base": self.fake.api_base, "send_rate": 50,
                             "slash_commands": False}}

    def secrets(self) -> dict[str, str]:
        return {"DISCORD_BOT_TOKEN": self.token}

    def ready(self) -> bool:
        return bool(self.fake.identified)

    def say(self, user: int, text: str) -> str:
        return str(self.fake.say(text, user_id=user))

    def arrived(self, handle: str) -> float | None:
        return next((at for event, data, at in list(self.fake.dispatched)
                     if event == "MESSAGE_CREATE" and data["id"] == handle), None)

    def replies(self) -> dict[int, list[tuple[str, float]]]:
        found: dict[int, list[tuple[str, float]]] = {}
        for call in self.fake.sent():
            channel = int(call.path.split("/")[1])
            found.setdefault(channel - self.fake.dm_channel(0), []).append(
                (str(call.body.get("content", "")), call.at))
        return found


class Slack:
    """``tests/fake_slack.py``: ``events_api`` envelopes over Socket Mode, replies with
    ``chat.postMessage``."""

    name = "slack"
    bot_token, app_token = "xoxb-1111-2222-bench-bot-token", "xapp-1-A0HERMES-3333-bench-app"

    def __init__(self, fake: Any):
        self.fake = fake

    @classmethod
    @contextmanager
    def serving(cls) -> Iterator[Slack]:
        from fake_slack import serving

        with serving(cls.bot_token, cls.app_token) as fake:
            yield cls(fake)

    def platform(self, allowed: list[int]) -> dict[str, Any]:
        return {"kind": "slack", "token": "${secret:SLACK_BOT_TOKEN}",
                "allowed_users": [f"U{user}" for user in allowed],
                "settings": {"app_token": "${secret:SLACK_APP_TOKEN}",
                             "api_base": self.fake.url, "send_rate": 50}}

    def secrets(self) -> dict[str, str]:
        return {"SLACK_BOT_TOKEN": self.bot_token, "SLACK_APP_TOKEN": self.app_token}

    def ready(self) -> bool:
        return bool(self.fake.sockets)

    def say(self, user: int, text: str) -> str:
        ts = self.fake.message(f"U{user}", text, f"D{user}")
        return next(e.envelope_id for e in list(self.fake.envelopes.values())
                    if e.payload.get("event", {}).get("ts") == ts)

    def arrived(self, handle: str) -> float | None:
        return self.fake.envelopes[handle].at

    def replies(self) -> dict[int, list[tuple[str, float]]]:
        from fake_slack import section_text

        found: dict[int, list[tuple[str, float]]] = {}
        for call in self.fake.of("chat.postMessage"):
            if call.ok and str(call.params.get("channel", "")).startswith("D"):
                found.setdefault(int(call.params["channel"][1:]), []).append(
                    (section_text(call.params), call.at))
        return found


class Xmpp:
    """A real prosody (``tests/xmpp_support.py``, which needs the test group: ``uv sync
    --frozen --group test``) and one person's slixmpp client: latency only (200 accounts'
    clients would measure the bench, not the gateway). A message "arrives" when the person
    sends it (the server's relay on loopback is inside the figure)."""

    name = "xmpp"
    burst = False
    password = "password-of-the-bench-agent"

    def __init__(self, server: Any, person: Any, agent: str):
        self.server, self.person, self.agent = server, person, agent
        self.sent: dict[str, float] = {}

    @classmethod
    @contextmanager
    def serving(cls) -> Iterator[Xmpp]:
        from xmpp_support import XmppUser, prosody_server

        with tempfile.TemporaryDirectory(prefix="hermes-bench-xmpp-") as tmp, \
                prosody_server(Path(tmp)) as server:
            agent = server.register("hermes", cls.password)
            person = XmppUser(server, server.register("ada", "password-of-ada-0123"),
                              "password-of-ada-0123")
            try:
                yield cls(server, person, agent)
            finally:
                person.close()

    def platform(self, allowed: list[int]) -> dict[str, Any]:
        return {"kind": "xmpp", "token": "${secret:XMPP_PASSWORD}",
                "allowed_users": [self.person.jid],
                "settings": {"jid": self.agent, "host": "127.0.0.1", "port": self.server.port,
                             "ca_file": str(self.server.ca_file), "send_rate": 50}}

    def secrets(self) -> dict[str, str]:
        return {"XMPP_PASSWORD": self.password}

    def ready(self) -> bool:
        return True  # running: logged in and present

    def say(self, user: int, text: str) -> str:
        at = time.monotonic()
        stanza = self.person.say(self.agent, text)
        self.sent[stanza] = at
        return stanza

    def arrived(self, handle: str) -> float | None:
        return self.sent.get(handle)

    def replies(self) -> dict[int, list[tuple[str, float]]]:
        return {FIRST_USER: [(m.body, m.at) for m in self.person.from_(self.agent)
                             if not m.body.startswith("🎤")]}


class Mattermost:
    """``tests/fake_mattermost.py``: ``posted`` events over the WebSocket, replies with
    ``POST /api/v4/posts``."""

    name = "mattermost"
    token = "mm-bench-token-0123456789abcdef"

    def __init__(self, fake: Any):
        self.fake = fake

    @classmethod
    @contextmanager
    def serving(cls) -> Iterator[Mattermost]:
        from fake_mattermost import serving

        with serving(cls.token) as fake:
            yield cls(fake)

    def platform(self, allowed: list[int]) -> dict[str, Any]:
        return {"kind": "mattermost", "token": "${secret:MATTERMOST_TOKEN}",
                "allowed_users": [f"u{user:025d}" for user in allowed],
                "settings": {"url": self.fake.url, "send_rate": 50}}

    def secrets(self) -> dict[str, str]:
        return {"MATTERMOST_TOKEN": self.token}

    def ready(self) -> bool:
        return bool(self.fake.connected)

    def say(self, user: int, text: str) -> str:
        return str(self.fake.push(text, user_id=f"u{user:025d}", channel_id=f"d{user:025d}"))

    def arrived(self, handle: str) -> float | None:
        return self.fake.handed.get(handle)

    def replies(self) -> dict[int, list[tuple[str, float]]]:
        found: dict[int, list[tuple[str, float]]] = {}
        for post in list(self.fake.posts):  # the bot's posts, as the fake made them
            if str(post["channel_id"]).startswith("d"):
                found.setdefault(int(post["channel_id"][1:]), []).append(
                    (str(post["message"]), float(post["at"])))
        return found


class Signal:
    """``tests/fake_signal.py``, signal-cli's daemon: events as Server-Sent Events, replies
    with the JSON-RPC ``send``."""

    name = "signal"
    account = "+15550000001"

    def __init__(self, fake: Any):
        self.fake = fake

    @classmethod
    @contextmanager
    def serving(cls) -> Iterator[Signal]:
        from fake_signal import serving

        with serving(cls.account) as fake:
            yield cls(fake)

    @staticmethod
    def number(user: int) -> str:
        return f"+1555{user:07d}"

    def platform(self, allowed: list[int]) -> dict[str, Any]:
        return {"kind": "signal", "allowed_users": [self.number(user) for user in allowed],
                "settings": {"account": self.account, "url": self.fake.url,
                             "send_rate": 50}}

    def secrets(self) -> dict[str, str]:
        return {}

    def ready(self) -> bool:
        return bool(self.fake.listening)

    def say(self, user: int, text: str) -> int:
        return int(self.fake.push(text, number=self.number(user)))

    def arrived(self, handle: int) -> float | None:
        return self.fake.handed.get(handle)

    def replies(self) -> dict[int, list[tuple[str, float]]]:
        found: dict[int, list[tuple[str, float]]] = {}
        for call in self.fake.of("send"):
            recipient = str((call.params.get("recipient") or [""])[0])
            if call.ok and recipient.startswith("+1555"):
                found.setdefault(int(recipient[5:]), []).append(
                    (str(call.params.get("message", "")), call.at))
        return found


class Irc:
    """A real ngIRCd (``tests/irc_support.py``, with the test group) and one person's
    client: latency only, as XMPP. A message "arrives" when the person sends it."""

    name = "irc"
    burst = False

    def __init__(self, server: Any, person: Any):
        self.server, self.person = server, person
        self.sent: dict[str, float] = {}

    @classmethod
    @contextmanager
    def serving(cls) -> Iterator[Irc]:
        from irc_support import Ngircd

        with tempfile.TemporaryDirectory(prefix="hermes-bench-irc-") as tmp:
            server = Ngircd(Path(tmp))
            server.start()
            try:
                person = server.user("alice")
                try:
                    yield cls(server, person)
                finally:
                    person.quit()
            finally:
                server.stop()

    def platform(self, allowed: list[int]) -> dict[str, Any]:
        return {"kind": "irc", "allowed_users": ["alice!*@127.0.0.1"],
                "settings": {"server": "localhost", "port": self.server.tls_port,
                             "ca_file": str(self.server.ca_file), "send_rate": 50}}

    def secrets(self) -> dict[str, str]:
        return {}

    def ready(self) -> bool:
        return True  # running: registered with the server

    def say(self, user: int, text: str) -> str:
        self.sent[text] = time.monotonic()
        self.person.say("hermes", text)
        return text

    def arrived(self, handle: str) -> float | None:
        return self.sent.get(handle)

    def replies(self) -> dict[int, list[tuple[str, float]]]:
        return {FIRST_USER: [(h.params[1], h.at) for h in self.person.lines_from("hermes")]}


DRIVERS: dict[str, Callable[[], Any]] = {
    "telegram": Telegram.serving, "discord": Discord.serving, "slack": Slack.serving,
    "mattermost": Mattermost.serving, "signal": Signal.serving, "irc": Irc.serving,
    "xmpp": Xmpp.serving}
"""Each platform with a fake the bench can drive: a context manager yielding its driver."""


class TimedModel:
    """The fake LLM's answer, ``re: <the user's message>``, its handling time noted."""

    def __init__(self) -> None:
        self.took: dict[str, float] = {}
        self.asked: dict[str, float] = {}
        self._lock = threading.Lock()

    def __call__(self, request: Any) -> Any:
        from fakellm import Reply

        text = request.last_user_text
        with self._lock:
            self.took[text] = time.monotonic() - request.received_at
            self.asked[text] = request.received_at
        return Reply(text=f"re: {text}")


def configure(home: Path, llm_url: str, driver: Driver, allowed: list[int]) -> None:
    home.mkdir(parents=True)
    config = {"defaults": [{"override provider": "custom"}],
              "provider": {"model": "gpt-4o", "api_base": llm_url, "timeout": 30,
                           "max_retries": 0, "retry_backoff": 0},
              "platforms": {"enabled": {driver.name: driver.platform(allowed)}}}
    (home / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    env = {"CUSTOM_API_KEY": "sk-bench-key-1234", **driver.secrets()}
    (home / ".env").write_text("".join(f"{k}={v}\n" for k, v in env.items()))
    (home / ".env").chmod(0o600)


def wait_for(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.002)
    raise TimeoutError(f"{what}: not within {timeout:g} s")


def running(gw: Any, name: str) -> bool:
    try:
        state = json.loads((gw.home / "gateway.json").read_text())["platforms"][name]["state"]
    except (OSError, ValueError, KeyError):
        if gw.proc.poll() is not None:
            raise RuntimeError(f"the gateway exited: {gw.output()[-2000:]}") from None
        return False
    if state == "failed":
        raise RuntimeError(f"{name} failed: {gw.output()[-2000:]}")
    return state == "running"


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


class Turns:
    """The agent's turns as the session database recorded them."""

    def __init__(self, home: Path):
        self.db = home / "state.db"
        self.offset = time.time() - time.monotonic()
        """Wall clock minus monotonic clock: the database's times on the bench's clock."""

    def took(self, text: str) -> float:
        """Seconds from the user's message ``text`` written to the answer written."""
        import sqlite3

        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True) as db:
            session, asked = db.execute(
                "SELECT session_id, created_at FROM messages WHERE role = 'user' AND "
                "content = ? ORDER BY id DESC LIMIT 1", (text,)).fetchone()
            answered, = db.execute(
                "SELECT min(created_at) FROM messages WHERE session_id = ? AND "
                "role = 'assistant' AND created_at >= ?", (session, asked)).fetchone()
        return float(answered) - float(asked)


def turn(driver: Driver, model: TimedModel, turns: Turns, user: int,
         text: str) -> tuple[float, float, float]:
    """One message and its reply, in ms: the platform's way in and out (the whole way less
    the agent's turn), the whole way (less the fake model's handling) and of it the way
    to the model's request."""
    before = len(driver.replies().get(user, []))
    handle = driver.say(user, text)
    reply, sent_at = wait_for(lambda: driver.replies().get(user, [])[before:], 60,
                              f"the reply to {text!r}")[0]
    if reply != f"re: {text}":
        raise RuntimeError(f"reply {reply!r} to {text!r}")
    arrived = driver.arrived(handle)
    if arrived is None:
        raise RuntimeError(f"{text!r} answered but never handed to the platform")
    whole = sent_at - arrived - model.took[text]
    agent = wait_for(lambda: _answered(turns, text), 10, f"{text!r} in the session")
    return ((sent_at - arrived - agent) * 1000, whole * 1000,
            (model.asked[text] - arrived) * 1000)


def _answered(turns: Turns, text: str) -> float | None:
    try:
        return turns.took(text)
    except TypeError:  # not written yet
        return None


def burst(driver: Driver, users: list[int], timeout: float) -> dict[str, Any]:
    """Every user sends one message at once; who got what back."""
    texts = {user: f"burst message of user {user}" for user in users}
    start = time.monotonic()
    for user, text in texts.items():
        driver.say(user, text)
    wait_for(lambda: all(driver.replies().get(u) for u in users), timeout,
             f"replies to {len(users)} chats")
    took = time.monotonic() - start
    time.sleep(1.0)  # a late duplicate would show now
    got = driver.replies()
    lost = [u for u in users if not got.get(u)]
    duplicated = [u for u in users if len(got.get(u, [])) > 1]
    wrong = [u for u in users if got.get(u) and got[u][0][0] != f"re: {texts[u]}"]
    return {"chats": len(users), "seconds": round(took, 2), "lost": len(lost),
            "duplicated": len(duplicated), "wrong": len(wrong)}


def bench(name: str, turns: int, chats: int) -> dict[str, Any]:
    from fakellm import FakeLLM
    from gateway_support import gateway

    model = TimedModel()
    users = list(range(FIRST_USER, FIRST_USER + chats))
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hermes-bench-pl-")))
        fake = stack.enter_context(FakeLLM(fallback=model, strict=False))
        driver = stack.enter_context(DRIVERS[name]())
        environ = {"HOME": str(tmp), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8",
                   "HERMES_NO_DAEMON": "1"}
        configure(tmp / ".hermes", fake.openai_base_url, driver, users)
        gw = stack.enter_context(gateway(environ, tmp / ".hermes", ready=False))
        wait_for(lambda: running(gw, name), 90, f"{name} running")
        wait_for(driver.ready, 30, f"{name} connected to its fake")
        asker, turns_of = users[0], Turns(tmp / ".hermes")
        try:
            for n in range(3):  # warm: the first turns open the session and import the rest
                turn(driver, model, turns_of, asker, f"warm up {n}")
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}; the gateway said: {gw.output()[-1500:]}") from None
        timed = [turn(driver, model, turns_of, asker, f"timed message {n}")
                 for n in range(turns)]
        latencies = [platform for platform, _, _ in timed]
        rss_before = rss_mib(gw.proc.pid)
        load = burst(driver, users[1:], timeout=600) if getattr(driver, "burst", True) \
            else None
        rss_after = rss_mib(gw.proc.pid)
    ordered = sorted(latencies)
    return {"platform": name, "turns": turns,
            "around_the_turn_ms": {"p50": round(statistics.median(latencies), 2),
                                   "p95": round(ordered[round(0.95 * (len(ordered) - 1))], 2),
                                   "max": round(ordered[-1], 2),
                                   "whole_p50": round(statistics.median(w for _, w, _ in timed), 2),
                                   "to_model_p50": round(statistics.median(i for _, _, i in timed),
                                                         2)},
            "load": None if load is None else load | {
                "rss_before_mib": round(rss_before, 1), "rss_after_mib": round(rss_after, 1),
                "rss_growth_mib": round(rss_after - rss_before, 1)}}


def report(result: dict[str, Any]) -> str:
    around, load = result["around_the_turn_ms"], result["load"]
    latency_ok = around["p50"] <= LATENCY_TARGET_MS
    latency = (f"{result['platform']}: around the agent's turn p50 {around['p50']:.1f} ms, "
               f"p95 {around['p95']:.1f} ms (message to reply p50 {around['whole_p50']:.1f} "
               f"ms, of it to the model's request {around['to_model_p50']:.1f}; "
               f"{result['turns']} turns; target p50 <= {LATENCY_TARGET_MS:g} ms: "
               f"{'MET' if latency_ok else 'MISSED'})")
    if load is None:
        return latency + " (no burst on a real server)"
    load_ok = (load["lost"] == load["duplicated"] == load["wrong"] == 0
               and load["rss_growth_mib"] <= RSS_TARGET_MIB)
    return (f"{latency}; {load['chats']} chats at once: {load['seconds']} s, lost "
            f"{load['lost']}, duplicated {load['duplicated']}, wrong {load['wrong']}, RSS "
            f"{load['rss_before_mib']} -> {load['rss_after_mib']} MiB "
            f"(+{load['rss_growth_mib']}; target <= {RSS_TARGET_MIB:g}: "
            f"{'MET' if load_ok else 'MISSED'})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(DRIVERS), action="append",
                        help="this platform only (repeatable); default: all")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--chats", type=int, default=CHATS)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    results = []
    for name in args.only or sorted(DRIVERS):
        try:
            result = bench(name, args.turns, args.chats + 1)
        except (RuntimeError, TimeoutError) as exc:
            print(f"bench/platforms.py: {name}: {exc}")
            return 2
        results.append(result)
        print(report(result), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
