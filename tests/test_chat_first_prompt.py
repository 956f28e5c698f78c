"""Interactive chat with no server running: it runs in-process, its prompt comes before
the model layer is loaded, and it leaves a warm server for the next commands."""

from __future__ import annotations

import sys
from pathlib import Path

import pexpect

from conftest import wait_until, write_fake_provider
from fakellm import FakeLLM, Reply


def test_without_a_server_the_prompt_comes_first(root: Path, environ, tmp_path: Path) -> None:
    """No server running: the chat runs in-process, shows its prompt before litellm is
    loaded (it loads while the user types), and leaves a server for the next commands."""
    with FakeLLM() as llm:
        write_fake_provider(root, llm.openai_base_url)
        env = {k: v for k, v in environ.items() if k != "HERMES_NO_DAEMON"}
        env |= {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1",
                "PYTHONPATH": str(tmp_path / "probe")}
        # the probe reports whether litellm was loaded when the banner was written
        (tmp_path / "probe").mkdir()
        (tmp_path / "probe" / "sitecustomize.py").write_text(
            "import sys\n"
            "write = sys.stdout.write\n"
            "def probe(text):\n"
            "    if '/help for commands' in text:\n"
            "        text += f'[litellm loaded: {\"litellm\" in sys.modules}]\\n'\n"
            "    return write(text)\n"
            "sys.stdout.write = probe\n")
        child = pexpect.spawn(sys.executable, ["-m", "hermes", "chat"], env=env,
                              cwd=str(tmp_path), encoding="utf-8", timeout=60)
        try:
            child.expect(r"\[litellm loaded: (True|False)\]")
            assert child.match.group(1) == "False"
            llm.push(Reply("hello from in-process"))
            child.sendline("hi")
            child.expect("hello from in-process")
            child.sendline("/exit")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        wait_until((root / "run" / "daemon.sock").exists, 90,
                   "a server started for the next commands")
