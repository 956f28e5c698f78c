"""A plugin that registers one of everything; what it sees goes to sink-events.jsonl in
the profile's home, so tests can check it from any process."""

import asyncio
import json
import time
from pathlib import Path

from hermes.environments.base import CommandResult, Environment
from hermes.gateway.base import MessageEvent, MessageSource, PlatformAdapter, PlatformState
from hermes.memory.base import ExternalProvider
from hermes.models.base import ModelClient
from hermes.models.types import ModelReply
from hermes.unix_socket import address

ECHO = {
    "name": "sink_echo",
    "description": "Echo the words back, upper-cased.",
    "parameters": {"type": "object", "properties": {"words": {"type": "string"}},
                   "required": ["words"]},
}


def _record(ctx, event, **fields):
    line = json.dumps({"event": event, "profile": ctx.profile_name, **fields}, default=str)
    with open(ctx.home.path / "sink-events.jsonl", "a", encoding="utf-8") as out:
        out.write(line + "\n")


class SinkModel(ModelClient):
    """A model that always answers with the same words (a plugin model provider)."""

    def __init__(self, settings):
        self.model = settings.model

    def complete(self, messages, tools=None, *, stream=False, callbacks=None, **params):
        return ModelReply(content=f"sink model says hi to {messages[-1]['content']!r}")


class SinkEnvironment(Environment):
    """Commands never run: they are echoed back (a plugin execution environment)."""

    kind = "plugin:sink-env"

    def __init__(self, settings):
        self.prefix = settings.plugin.get("prefix", "sink")

    def run(self, command, *, timeout=None, cancelled=None):
        return CommandResult(0, f"{self.prefix}$ {command}\n")


class SinkChat(PlatformAdapter):
    """A chat platform on a Unix socket in the home: one JSON line per message in
    ({"chat", "user", "text"}); answers go to sink-outbox.jsonl (a plugin platform)."""

    def __init__(self, name, platform, service, listeners):
        self.name = name
        self.status = PlatformState()
        self.socket = service.home.path / "sink-inbox.sock"
        self.outbox = service.home.path / "sink-outbox.jsonl"
        self.greeting = platform.settings.model_extra.get("greeting", "")

    async def start(self, on_message):
        async def client(reader, writer):
            line = json.loads(await reader.readline())
            source = MessageSource(self.name, line["chat"], user_id=line["user"])
            writer.close()
            await on_message(MessageEvent(source, line["text"]))

        with address(self.socket) as where:  # the home's path may pass 107 bytes
            self.server = await asyncio.start_unix_server(client, path=where)
        self.status = PlatformState("running", f"unix:{self.socket} {self.greeting}".strip())

    async def stop(self):
        self.server.close()
        await self.server.wait_closed()

    async def send(self, source, text):
        with open(self.outbox, "a", encoding="utf-8") as out:
            out.write(json.dumps({"chat": source.chat_id, "text": text}) + "\n")


class SinkMemory(ExternalProvider):
    name = "sink"

    def prefetch(self, query):
        return "the sink remembers: blue"


def register(ctx):
    def echo(args, **kwargs):
        return json.dumps({"echo": args["words"].upper(), "task": kwargs.get("task_id")})

    ctx.register_tool(name="sink_echo", toolset="sink", schema=ECHO, handler=echo)
    ctx.register_tool(name="sink_hidden", toolset="sink", schema=ECHO, handler=echo,
                      check_fn=lambda: False)

    def pre_tool(tool_name, args, **kwargs):
        _record(ctx, "pre_tool_call", tool=tool_name, args=args)
        if tool_name == "sink_echo" and args.get("words") == "forbidden":
            return {"action": "block", "message": "the sink refuses forbidden words"}
        if tool_name == "sink_echo" and args.get("words") == "rewrite me":
            return {"action": "modify", "args": {"words": "rewritten"}}
        return None

    ctx.register_hook("pre_tool_call", pre_tool)
    ctx.register_hook("post_tool_call", lambda tool_name, result, **kw: _record(
        ctx, "post_tool_call", tool=tool_name, result=result, blocked=kw.get("blocked")))
    ctx.register_hook("pre_llm_call", lambda user_message, **kw: _record(
        ctx, "pre_llm_call", first=kw.get("is_first_turn")) or {"context": "[sink context]"})
    ctx.register_hook("post_llm_call", lambda assistant_response, **kw: _record(
        ctx, "post_llm_call", answer=assistant_response))
    for event in ("on_session_start", "on_session_end", "on_session_reset"):
        ctx.register_hook(event, lambda event=event, **kw: _record(
            ctx, event, session=kw.get("session_id"), platform=kw.get("platform")))

    ctx.register_command("sink", lambda raw: ctx.dispatch_tool("sink_echo", {"words": raw}),
                         description="Echo through the sink_echo tool")
    ctx.register_command("model", lambda raw: "taken")  # a built-in's name: refused

    def setup(parser):
        sub = parser.add_subparsers(dest="action")
        status = sub.add_parser("status", help="Show the sink's status")
        status.add_argument("--loud", action="store_true")

    def run(args):
        if args.action != "status":
            print("usage: hermes sink status [--loud]")
            return 3
        token = "set" if ctx.getenv("SINK_TOKEN") else "unset"
        text = f"sink ok in {ctx.profile_name} (token {token})"
        print(text.upper() if args.loud else text)
        return 0

    ctx.register_cli_command("sink", help="The sink's own command", setup_fn=setup,
                             handler_fn=run)
    ctx.register_skill("checklist", Path(__file__).parent / "skills" / "checklist" / "SKILL.md")
    ctx.register_model_provider("sink-model", SinkModel)
    ctx.register_environment("sink-env", lambda home, settings, environ: SinkEnvironment(settings))
    ctx.register_memory_provider(SinkMemory())
    ctx.register_platform("sink-chat", SinkChat)

    def dispatch(text, **kwargs):
        if text == "drop me":
            return {"action": "skip"}
        if text.startswith("shout "):
            return {"action": "rewrite", "text": "/sink " + text[len("shout "):]}
        return None

    ctx.register_hook("pre_gateway_dispatch", dispatch)
    for event in ("on_gateway_start", "on_gateway_stop"):
        ctx.register_hook(event, lambda event=event, **kw: _record(ctx, event, **kw))
    _record(ctx, "registered", time=time.time())
