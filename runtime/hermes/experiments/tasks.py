"""Tasks of an experiment: one JSON object per line of a ``.jsonl`` file (or one ``-q``).

    {"id": "sum", "prompt": "What is 2+2?", "files": {"data.txt": "alpha"},
     "expect": {"contains": "4", "regex": "\\b4\\b", "json_schema": {...},
                "tool_called": "read_file", "tool_not_called": ["terminal"],
                "shell": "test -f out.txt", "max_cost": 0.01, "max_latency": 30,
                "rubric": "The answer is a single number."}}

Every line is checked before anything runs; each problem names its line.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hermes.config.sections import Regex

NAMES = "a tool name or a list of tool names"


class Expectations(BaseModel):
    """What a run's answer and actions must satisfy; every one given must pass."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    contains: list[str] = Field(default_factory=list)
    """Substrings the final answer must contain (a string or a list)."""
    regex: Regex | None = None
    """A regular expression the final answer must match (``re.search``)."""
    json_schema: dict[str, Any] | None = None
    """A JSON schema the final answer, parsed as JSON, must satisfy."""
    tool_called: list[str] = Field(default_factory=list)
    """Tools the agent must call (at least once each)."""
    tool_not_called: list[str] = Field(default_factory=list)
    """Tools the agent must not call."""
    shell: str | None = None
    """A shell command run in the task's working directory after the run; exit 0 passes."""
    max_cost: float | None = Field(default=None, ge=0)
    """Most the run may cost, in USD."""
    max_latency: float | None = Field(default=None, gt=0)
    """Most the run may take, in seconds."""
    rubric: str | None = None
    """Judged by the judge model (``--judge-model``): its verdict and reason are kept."""

    @field_validator("contains", "tool_called", "tool_not_called", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("json_schema")
    @classmethod
    def _is_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            from jsonschema import Draft202012Validator
            from jsonschema.exceptions import SchemaError

            try:
                Draft202012Validator.check_schema(value)
            except SchemaError as exc:
                raise ValueError(f"not a JSON schema: {exc.message}") from exc
        return value

    def kinds(self) -> list[str]:
        """The kinds of expectation given, in a fixed order."""
        return [name for name in type(self).model_fields if getattr(self, name) not in (None, [])]


class Task(BaseModel):
    """One task: a prompt, files for its working directory, and expectations."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    id: str = Field(min_length=1, pattern=r"^[\w.-]+$")
    """A name unique in the file (letters, digits, ``_ . -``)."""
    prompt: str = Field(min_length=1)
    """What the agent is asked."""
    files: dict[str, str] = Field(default_factory=dict)
    """Files placed in the task's working directory: relative path → text."""
    expect: Expectations = Field(default_factory=Expectations)
    """What the run must satisfy to pass."""

    @field_validator("files")
    @classmethod
    def _relative(cls, files: dict[str, str]) -> dict[str, str]:
        for name in files:
            path = PurePosixPath(name)
            if not name or path.is_absolute() or ".." in path.parts:
                raise ValueError(f"file {name!r}: give a path inside the working directory")
        return files


def read_tasks(path: Path) -> tuple[list[Task], list[str]]:
    """The tasks of a JSONL file and, line by line, every problem found (``FILE:N: …``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [f"{path}: cannot read: {exc}"]
    tasks: list[Task] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        task, problem = parse_task_line(line)
        if problem is None and task is not None and task.id in seen:
            problem = f"id {task.id!r} is also on line {seen[task.id]}"
        if problem is not None or task is None:
            problems.append(f"{path.name}:{number}: {problem}")
            continue
        seen[task.id] = number
        tasks.append(task)
    if not tasks and not problems:
        problems.append(f"{path}: no tasks (one JSON object per line)")
    return tasks, problems


def parse_task_line(line: str) -> tuple[Task | None, str | None]:
    """``(task, None)`` or ``(None, problem)`` for one line of a tasks file."""
    try:
        data = json.loads(line)
    except ValueError as exc:
        return None, f"not JSON: {exc}"
    if not isinstance(data, dict):
        return None, "expected a JSON object"
    try:
        return Task.model_validate(data), None
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "task"
        more = exc.error_count() - 1
        return None, f"{where}: {error['msg']}" + (f" (and {more} more)" if more else "")


def single_task(prompt: str) -> Task:
    """The one task of ``-q PROMPT``."""
    return Task(id="q", prompt=prompt)


def dump_tasks(tasks: list[Task]) -> str:
    """Tasks as JSONL (what an experiment keeps, and what ``rerun`` reads)."""
    return "".join(json.dumps(t.model_dump(exclude_defaults=True), ensure_ascii=False) + "\n"
                   for t in tasks)
