"""Hints run as ``hermes -p NAME``: a profile's `sandbox explain` widening hint and the
chat's /help, unknown-command and /plugins lines name the profile they were printed for."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from conftest import ok, write_fake_provider
from fakellm import FakeLLM

WIDEN = "config set environment.local.sandbox.allow_write"


def test_sandbox_explain_widens_the_profile_it_explains(hermes: Any, root: Path) -> None:
    ok(hermes("profile", "create", "demo"))
    shown = ok(hermes("-p", "demo", "sandbox", "explain"))
    if "commands run unconfined" in shown:
        pytest.skip(f"no sandbox works here, so there is nothing to widen: {shown}")
    assert f"widen: hermes -p demo {WIDEN}" in shown
    assert f"widen: hermes {WIDEN}" in ok(hermes("sandbox", "explain"))


def test_chat_help_names_the_profile(root: Path, environ: dict[str, str],
                                     tmp_path: Path) -> None:
    with FakeLLM() as llm:
        write_fake_provider(root / "profiles" / "demo", llm.openai_base_url)
        child = pexpect.spawn(sys.executable, ["-m", "hermes", "-p", "demo", "chat"],
                              env=environ | {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"},
                              cwd=str(tmp_path), encoding="utf-8", timeout=60,
                              dimensions=(40, 160))
        try:
            child.expect("/help for commands")
            child.sendline("/help")
            child.expect(r"load a skill into this turn \((hermes[^)]*)\)")
            assert child.match.group(1) == "hermes -p demo skills list"
            child.sendline("/nosuch")
            child.expect(r"unknown command /nosuch; /help lists them \(and `([^`]*)`")
            assert child.match.group(1) == "hermes -p demo skills list"
            child.sendline("/exit")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
