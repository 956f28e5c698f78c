"""The ``SKILL.md`` format (agentskills.io): YAML frontmatter between ``---`` lines,
then Markdown instructions.

Frontmatter fields: ``name`` and ``description`` (required); ``license``,
``compatibility``, ``metadata`` and ``allowed-tools`` from the agentskills.io
specification; ``version``, ``platforms`` (``linux``, ``macos``, ``windows``) and
``required_environment_variables`` as hermes-agent writes them (its older
``prerequisites.env_vars`` too). Tags and related skills are read from ``metadata``
(``metadata.hermes.tags`` as hermes-agent nests them, or ``metadata.tags``).
Unknown fields are kept in ``extra`` and never refused: any valid agentskills.io
skill loads unchanged.

``parse_skill_text`` raises ``SkillFormatError`` naming the file, the field and the
fix; the loader turns that into one warning and skips the skill.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes.errors import UserError

NAME_PATTERN = re.compile(r"[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?")
"""Skill and category names: lowercase letters, digits, ``-``, ``_`` and ``.``, at most
64 characters, starting and ending with a letter or digit (agentskills.io allows only
``-``; hermes-agent's names also use ``_`` and ``.``). The one rule of the loader,
``hermes skills create``/``install`` and ``skill_manage`` (``check_name``)."""
NAME_RULE = ("1-64 lowercase letters, digits, '-', '_' or '.', starting and ending with a "
             "letter or digit")
"""``NAME_PATTERN`` in words, for errors, help texts and the tool schema."""
MAX_DESCRIPTION_CHARS = 1024
"""agentskills.io's limit: the loader cuts a longer description (as hermes-agent does,
with a note); writes through the store refuse one (as hermes-agent's skill_manage)."""
MAX_COMPATIBILITY_CHARS = 500
PLATFORMS = {"linux": "linux", "macos": "darwin", "windows": "win32"}
"""Frontmatter platform names and the ``sys.platform`` prefix each stands for."""
KNOWN_FIELDS = frozenset({"name", "description", "version", "license", "compatibility",
                          "metadata", "allowed-tools", "platforms",
                          "required_environment_variables", "prerequisites"})
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class SkillFormatError(UserError):
    """A ``SKILL.md`` that does not follow the format: names the file, field and fix."""

    def __init__(self, file: str, field: str, problem: str):
        self.file, self.field, self.problem = file, field, problem
        super().__init__(f"{file}: {field}: {problem}")


@dataclass(frozen=True)
class SkillMeta:
    """The frontmatter of one ``SKILL.md``, validated."""

    name: str
    description: str
    version: str | None = None
    license: str | None = None
    compatibility: str | None = None
    platforms: tuple[str, ...] = ()
    """Where the skill applies (``linux``, ``macos``, ``windows``); empty: everywhere."""
    tags: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    """Names of related skills (``metadata.hermes.related_skills``)."""
    required_env: tuple[str, ...] = ()
    """Environment variables the skill's instructions or scripts need."""
    allowed_tools: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    """Frontmatter fields this runtime does not interpret, kept as they are."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the discovery cache: fields with their default left out."""
        data = {"name": self.name, "description": self.description, "version": self.version,
                "license": self.license, "compatibility": self.compatibility,
                "platforms": list(self.platforms), "tags": list(self.tags),
                "related": list(self.related), "required_env": list(self.required_env),
                "allowed_tools": list(self.allowed_tools), "metadata": self.metadata,
                "extra": self.extra}
        return {k: v for k, v in data.items() if v or k in ("name", "description")}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SkillMeta:
        tuples = ("platforms", "tags", "related", "required_env", "allowed_tools")
        fields: dict[str, Any] = {k: tuple(v) if k in tuples else v for k, v in data.items()}
        return cls(**fields)

    def applies_to(self, platform: str) -> bool:
        """True when the skill is meant for ``platform`` (a ``sys.platform`` value)."""
        return not self.platforms or any(
            platform.startswith(PLATFORMS[p]) for p in self.platforms)


def split_frontmatter(text: str, file: str,
                      notes: list[str] | None = None) -> tuple[dict[str, Any], str]:
    """The frontmatter mapping and the Markdown body of a ``SKILL.md`` text (``notes``:
    see ``parse_skill_text``; the loader reads ``description: Use it: when...`` as
    hermes-agent and Claude Code do, as if the value were quoted)."""
    text = text.lstrip("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise SkillFormatError(file, "frontmatter", "missing — start the file with a '---' "
                               "line, then name: and description:, then '---'")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise SkillFormatError(file, "frontmatter", "not closed — add a '---' line after "
                               "the last field")
    import yaml  # on a parse-cache miss only: a warm listing never loads it

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load("\n".join(lines[1:end]), Loader=loader)
    except yaml.YAMLError as exc:
        data = _quoted_values(lines[1:end], loader) if notes is not None else None
        if data is not None and notes is not None:
            notes.append("frontmatter: a value holding ': ' was read as quoted text "
                         "(strict YAML refuses it) — quote it")
            return data, "\n".join(lines[end + 1:])
        mark = getattr(exc, "problem_mark", None)
        where = f" on line {mark.line + 2}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise SkillFormatError(file, "frontmatter", f"invalid YAML{where}: {problem}") from None
    if not isinstance(data, dict):
        raise SkillFormatError(file, "frontmatter", "expected 'key: value' lines")
    return data, "\n".join(lines[end + 1:])


_PLAIN_VALUE = re.compile(r"^([A-Za-z_][\w-]*):[ \t]+([^\s\"'\[{|>&*!%@`#].*: .*)$")
"""A top-level ``key: value`` whose unquoted value holds ``': '`` (invalid YAML)."""


def _quoted_values(lines: list[str], loader: Any) -> dict[str, Any] | None:
    """The frontmatter again with such values quoted; None when that is not the fault."""
    import json

    import yaml

    fixed = [_PLAIN_VALUE.sub(lambda m: f"{m[1]}: {json.dumps(m[2].rstrip())}", line)
             for line in lines]
    if fixed == lines:
        return None
    try:
        data = yaml.load("\n".join(fixed), Loader=loader)
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def parse_skill_text(text: str, file: str,
                     notes: list[str] | None = None) -> tuple[SkillMeta, str]:
    """The validated frontmatter and the body of a ``SKILL.md`` text. ``notes``: the
    loader's list of what it forgave (a description over the limit, cut); None for a
    write, which refuses it instead."""
    data, body = split_frontmatter(text, file, notes)
    meta = parse_meta(data, file, notes)
    if not body.strip():
        raise SkillFormatError(file, "body", "empty — write the instructions below the "
                               "frontmatter")
    return meta, body


def parse_meta(data: Mapping[str, Any], file: str, notes: list[str] | None = None) -> SkillMeta:
    """Validate frontmatter fields; ``SkillFormatError`` names the first bad one
    (``notes``: see ``parse_skill_text``)."""
    metadata = _mapping(data, "metadata", file)
    nested = metadata.get("hermes")
    hermes: dict[str, Any] = nested if isinstance(nested, dict) else {}
    return SkillMeta(
        name=check_name(_text(data, "name", file, required=True), file),
        description=_description(data, file, notes),
        version=_optional_text(data, "version", file),
        license=_optional_text(data, "license", file),
        compatibility=_compatibility(data, file),
        platforms=_platforms(data, file),
        tags=_words(hermes.get("tags", metadata.get("tags", data.get("tags"))), "metadata.tags",
                    file),
        related=_words(hermes.get("related_skills", metadata.get("related_skills")),
                       "metadata.related_skills", file),
        required_env=_required_env(data, file),
        allowed_tools=tuple(str(data.get("allowed-tools") or "").split()),
        metadata=dict(metadata),
        extra={k: v for k, v in data.items() if k not in KNOWN_FIELDS},
    )


def check_name(name: str, file: str, field: str = "name") -> str:
    """``name`` if it is a valid skill (or category) name."""
    if not NAME_PATTERN.fullmatch(name):
        raise SkillFormatError(file, field, f"{name!r} is not a valid name — use {NAME_RULE}")
    return name


def _text(data: Mapping[str, Any], key: str, file: str, *, required: bool = False) -> str:
    value = data.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise SkillFormatError(file, key, f"missing — add '{key}: ...' to the frontmatter")
        return ""
    if not isinstance(value, str | int | float):
        raise SkillFormatError(file, key, f"expected text, got {type(value).__name__}")
    return str(value).strip()


def _optional_text(data: Mapping[str, Any], key: str, file: str) -> str | None:
    return _text(data, key, file) or None


def _description(data: Mapping[str, Any], file: str, notes: list[str] | None) -> str:
    text = _text(data, "description", file, required=True)
    if len(text) <= MAX_DESCRIPTION_CHARS:
        return text
    if notes is None:
        raise SkillFormatError(file, "description", f"{len(text)} characters — shorten it "
                               f"to at most {MAX_DESCRIPTION_CHARS}")
    notes.append(f"description: {len(text)} characters, cut to {MAX_DESCRIPTION_CHARS} "
                 "(the agentskills.io limit) — shorten it to keep its end")
    return text[:MAX_DESCRIPTION_CHARS - 3] + "..."


def _compatibility(data: Mapping[str, Any], file: str) -> str | None:
    text = _optional_text(data, "compatibility", file)
    if text and len(text) > MAX_COMPATIBILITY_CHARS:
        raise SkillFormatError(file, "compatibility", f"{len(text)} characters — shorten it "
                               f"to at most {MAX_COMPATIBILITY_CHARS}")
    return text


def _mapping(data: Mapping[str, Any], key: str, file: str) -> dict[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, dict):
        raise SkillFormatError(file, key, f"expected a mapping of 'key: value', got "
                               f"{type(value).__name__}")
    return value


def _words(value: Any, key: str, file: str) -> tuple[str, ...]:
    """A list of short strings (a single string counts as a one-item list)."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str | int) for i in items):
        raise SkillFormatError(file, key, "expected a list of words, e.g. [git, release]")
    return tuple(str(i).strip() for i in items if str(i).strip())


def _platforms(data: Mapping[str, Any], file: str) -> tuple[str, ...]:
    names = tuple(p.lower() for p in _words(data.get("platforms"), "platforms", file))
    unknown = [p for p in names if p not in PLATFORMS]
    if unknown:
        raise SkillFormatError(file, "platforms", f"unknown platform {unknown[0]!r} — use "
                               f"{', '.join(PLATFORMS)}")
    return names


def _required_env(data: Mapping[str, Any], file: str) -> tuple[str, ...]:
    """``required_environment_variables`` (names, or ``{name: ...}`` entries), plus
    hermes-agent's older ``prerequisites.env_vars``."""
    key = "required_environment_variables"
    raw = data.get(key)
    prerequisites = data.get("prerequisites")
    if raw is None and isinstance(prerequisites, dict):
        key, raw = "prerequisites.env_vars", prerequisites.get("env_vars")
    items = raw if isinstance(raw, list) else [] if raw is None else [raw]
    names = [item.get("name") if isinstance(item, dict) else item for item in items]
    bad = next((n for n in names if not isinstance(n, str) or not ENV_NAME.fullmatch(n)), None)
    if bad is not None or (raw is not None and not isinstance(raw, list | str)):
        raise SkillFormatError(file, key, f"{bad!r} is not an environment variable name — "
                               "give a list of names, e.g. [GITHUB_TOKEN]")
    return tuple(str(n) for n in names)
