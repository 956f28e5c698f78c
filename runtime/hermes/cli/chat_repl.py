"""The chat front end: one-shot answers and the interactive terminal session."""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from hermes.agent.attachments import (
    Attachment,
    ImageRefused,
    VisionLimits,
    check_count,
    from_path,
)
from hermes.agent.conversations import LATEST, Conversation, Conversations
from hermes.agent.dispatch import CallOutcome
from hermes.agent.factory import Interaction
from hermes.agent.loop import FORCED_ANSWER, AgentEvents, TurnResult
from hermes.cli.chat_commands import leaves, one_shot_command, run_command
from hermes.cli.chat_learning import LearnedNotices, answering
from hermes.environments.sandbox.policy import home_workspace_note
from hermes.hints import command, for_profile
from hermes.models.types import StreamCallbacks, ToolCall
from hermes.tools.approval import refusal_of

EXIT_CODES = {"completed": 0, "budget_exhausted": 0, "interrupted": 130, "error": 1}


def _conversations(runtime: Any) -> Conversations:
    conversations: Conversations = runtime.container.conversations()
    return conversations


def _open(runtime: Any, how: Interaction, resume: str | None, continue_: bool
          ) -> Conversation:
    return _conversations(runtime).open(how, resume=LATEST if continue_ else resume or None)


def _progress(call: ToolCall) -> None:
    sys.stderr.write(f"  ⚙ {call.name} {_brief(call.arguments)}\n")
    sys.stderr.flush()


def _brief(arguments: str, limit: int = 70) -> str:
    """A call's arguments in a line, secrets by shape and in URLs (a token in a query or
    userinfo) masked: the model may have written them."""
    from hermes.redact import Redactor
    from hermes.web.redaction import redact_url

    try:
        args = json.loads(arguments or "{}")
        text = " ".join(f"{k}={v!r}" for k, v in args.items()) if isinstance(args, dict) \
            else arguments
    except ValueError:
        text = arguments
    text = Redactor()(URL.sub(lambda match: redact_url(match[0]), text))
    return text if len(text) <= limit else text[: limit - 1] + "…"


URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
"""A URL in a call's arguments (up to a space or a quote)."""


def oneshot(runtime: Any, query: str, *, resume: str | None, continue_: bool, yolo: bool,
            stream: bool, images: Sequence[str] = ()) -> int:
    """Answer once: only the final answer goes to stdout, the rest to stderr. ``images``:
    the user's image files, checked before a session opens."""
    attached = attach_files(images, runtime.settings.vision)
    events = AgentEvents(on_tool_start=_progress, on_tool_end=_show_refusal)
    how = Interaction(interactive=False, yolo=yolo, stream=stream, events=events)
    conversation = _open(runtime, how, resume, continue_)
    _learned_notices(runtime)
    runtime.container.learning().hold()  # until the answer is out (see finish_reviews)
    reply, query = one_shot_command(query, conversation, _conversations(runtime))
    if reply is not None:  # a plugin's command answered; no turn ran
        conversation.end()
        sys.stdout.write(reply.rstrip("\n") + "\n")
        return 0
    try:
        result = _run_interruptibly(conversation, query, attached)
    except ImageRefused:  # no model can look at them: nothing was said, nothing kept
        conversation.end()
        raise
    kept = conversation.end().kept
    if result.exit_reason == "error":
        sys.stderr.write(f"error: {for_profile(str(result.error), runtime.home.name)}\n")
    elif result.text:
        sys.stdout.write(result.text.rstrip("\n") + "\n")
    if result.exit_reason == "budget_exhausted":
        sys.stderr.write("note: the iteration budget ran out (raise --max-iterations)\n")
    if kept:
        sys.stderr.write(f"session {conversation.session_id}\n")
    return EXIT_CODES[result.exit_reason]


def _show_refusal(outcome: CallOutcome) -> None:
    """A refused command gets a line on stderr, like the tool line above it."""
    refusal = refusal_of(outcome.content) if outcome.is_error else None
    if refusal is not None:
        sys.stderr.write(f"    refused: {refusal}\n")
        sys.stderr.flush()


def attach_files(paths: Sequence[str], vision: Any) -> list[Attachment]:
    """The user's own image files, checked (``vision.max_bytes``, ``vision.max_images``)."""
    limits = VisionLimits.from_config(vision)
    attached = [from_path(path, limits) for path in paths]
    check_count(attached, limits)
    return attached


def _run_interruptibly(conversation: Conversation, text: str,
                       images: Sequence[Attachment] = ()) -> TurnResult:
    """Run a turn in a worker thread so Ctrl-C in the main thread can interrupt it."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["result"] = conversation.run(text, images=images)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="agent-turn", daemon=True).start()
    # Wait on an Event, not Thread.join: a KeyboardInterrupt inside join() can leave
    # the thread looking finished while it still runs (CPython issue 90882).
    while True:
        try:
            if done.wait(0.2):
                break
        except KeyboardInterrupt:
            conversation.interrupt()
            sys.stderr.write("\n⏹ interrupting…\n")
    if "error" in box:
        raise box["error"]
    result: TurnResult = box["result"]
    return result


class _Spinner:
    """"thinking…" on stderr until the first output of a turn."""

    def __init__(self) -> None:
        self._status: Any = None
        self._lock = threading.Lock()

    def start(self) -> None:
        from rich.console import Console

        with self._lock:
            self._status = Console(stderr=True).status("thinking…", spinner="dots")
            self._status.start()

    def stop(self) -> None:
        with self._lock:
            if self._status is not None:
                self._status.stop()
                self._status = None


class _Printer:
    """Streams text to the terminal and ends the line before tool progress."""

    def __init__(self, profile: str, spinner: _Spinner | None = None) -> None:
        self.profile = profile
        """Named in the hints of error messages."""
        self.mid_line = False
        self.spinner = spinner or _Spinner()

    def text(self, delta: str) -> None:
        self.spinner.stop()
        sys.stdout.write(delta)
        sys.stdout.flush()
        self.mid_line = not delta.endswith("\n")

    def tool(self, call: ToolCall) -> None:
        self.spinner.stop()
        if self.mid_line:
            sys.stdout.write("\n")
            self.mid_line = False
        _progress(call)

    def done(self, outcome: CallOutcome) -> None:
        if outcome.is_error and refusal_of(outcome.content) is not None:
            _show_refusal(outcome)
        elif outcome.is_error:
            sys.stderr.write(f"    ✗ {outcome.content[:200]}\n")


def repl(runtime: Any, *, resume: str | None, continue_: bool, yolo: bool, stream: bool,
         while_typing: Callable[[], None] | None = None) -> None:
    """Interactive chat. ``while_typing`` starts once the prompt shows (the model layer's
    import, in a thread, while the user types the first message)."""
    from hermes.cli.chat_prompt import ChatPrompt

    printer = _Printer(runtime.home.name)
    events = AgentEvents(stream=StreamCallbacks(on_text=printer.text),
                         on_tool_start=printer.tool, on_tool_end=printer.done)
    from hermes.cli.chat_ask import TerminalQuestions

    questions = TerminalQuestions(runtime.home.name)
    how = Interaction(interactive=True, yolo=yolo, approve=questions.approve,
                      clarify=questions.clarify,
                      stream=stream, events=events)
    conversation = _open(runtime, how, resume, continue_)
    agent = conversation.agent
    notices = _learned_notices(runtime)
    prompt = ChatPrompt(runtime.home.path / ".chat_history")
    sys.stdout.write(f"hermes · {agent.model.model} · session {agent.session_id[:8]} · "
                     "/help for commands\n")
    if agent.ctx.environment.kind == "local" and (
            note := home_workspace_note(agent.ctx.cwd, {"HOME": str(agent.ctx.user_home)})):
        sys.stderr.write(f"note: {note}\n")
    if while_typing is not None:
        while_typing()
    while True:
        line = prompt.read()
        if line is None or leaves(line):
            break
        text: str | None = line.strip()
        if text and text.startswith("/"):
            conversation, text = run_command(text, conversation, _conversations(runtime), how)
        if text:
            with answering(runtime.container.learning(), notices):
                _turn(conversation, text, printer, stream)
    if conversation.end().kept:
        again = command(runtime.home.name, f"chat --resume {conversation.session_id}")
        sys.stderr.write(f"session {conversation.session_id} — resume with `{again}`\n")


def _learned_notices(runtime: Any) -> LearnedNotices:
    """Print "learned: ..." when a background review of this runtime saved something."""
    return LearnedNotices(runtime.container.learning())


def _turn(conversation: Conversation, text: str, printer: _Printer, stream: bool) -> None:
    printer.spinner.start()
    try:
        result = _run_interruptibly(conversation, text)
    except ImageRefused as exc:  # the images attached (/image): no turn ran, chat goes on
        sys.stderr.write(f"error: {exc}\n")
        return
    finally:
        printer.spinner.stop()
    _show(result, printer, stream)


def _show(result: TurnResult, printer: _Printer, stream: bool) -> None:
    if result.text and (not stream or result.text == FORCED_ANSWER):  # not streamed
        sys.stdout.write(result.text)
    if printer.mid_line or not stream:
        sys.stdout.write("\n")
        printer.mid_line = False
    if result.exit_reason == "error":
        sys.stderr.write(f"error: {for_profile(str(result.error), printer.profile)}\n")
    elif result.exit_reason == "interrupted":
        sys.stderr.write("(interrupted — the session is intact, carry on)\n")
    elif result.exit_reason == "budget_exhausted":
        sys.stderr.write("(iteration budget used up)\n")
    sys.stdout.flush()
