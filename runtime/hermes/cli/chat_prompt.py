"""The interactive input line: prompt_toolkit with history and multi-line editing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class ChatPrompt:
    """Reads one message: Enter sends, Esc-Enter / Alt-Enter inserts a newline."""

    def __init__(self, history_file: Path):
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.key_binding import KeyBindings

        if not history_file.exists():  # the history may hold secrets the user typed: 0600
            os.close(os.open(history_file, os.O_CREAT | os.O_WRONLY, 0o600))
        bindings = KeyBindings()

        @bindings.add("enter")
        def _send(event: Any) -> None:
            event.current_buffer.validate_and_handle()

        @bindings.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        self._session: Any = PromptSession(history=FileHistory(str(history_file)),
                                           multiline=True, key_bindings=bindings)

    def read(self) -> str | None:
        """The next message; None at end of input (Ctrl-D); '' when Ctrl-C clears the line.
        What other threads print meanwhile (a "learned: ..." line) appears above the
        prompt instead of inside it."""
        from prompt_toolkit.patch_stdout import patch_stdout

        try:
            with patch_stdout(raw=True):
                text: str = self._session.prompt("› ")
        except EOFError:
            return None
        except KeyboardInterrupt:
            return ""
        return text
