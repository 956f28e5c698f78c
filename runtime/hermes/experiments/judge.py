"""The rubric judge: a model asked whether an answer meets a rubric, with its reason."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

from hermes.models.base import ModelClient
from hermes.models.errors import ModelCallError

INSTRUCTIONS = (
    "You grade an AI assistant's answer against a rubric. Reply with one JSON object "
    'and nothing else: {"verdict": "pass" or "fail", "reason": "one sentence"}.')


class RubricJudge:
    """Calls ``model`` once per rubric; an unusable reply counts as ``fail`` with the
    reply quoted as the reason. Thread-safe (runs judge concurrently)."""

    def __init__(self, model: ModelClient):
        self.model = model
        self._lock = threading.Lock()

    def __call__(self, rubric: str, prompt: str, answer: str) -> tuple[str, str]:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": f"## Task\n{prompt}\n\n## Rubric\n{rubric}\n\n"
                                        f"## Answer\n{answer}"}]
        try:
            reply = self.model.complete(messages, None, stream=False)
        except ModelCallError as exc:
            return "fail", f"the judge failed: {exc}"
        return parse_verdict(reply.content)


def parse_verdict(text: str) -> tuple[str, str]:
    """``(verdict, reason)`` from the judge's reply (JSON, possibly fenced)."""
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    try:
        data = json.loads(match.group(0)) if match else None
    except ValueError:
        data = None
    if isinstance(data, dict) and str(data.get("verdict", "")).lower() in ("pass", "fail"):
        return str(data["verdict"]).lower(), str(data.get("reason", ""))
    return "fail", f"unusable verdict: {(text or '').strip()[:200]!r}"
