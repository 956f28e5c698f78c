"""The ``skills`` toolset: ``skills_list``, ``skill_view`` and ``skill_manage``.

Progressive disclosure: the system prompt carries only an index; ``skills_list``
lists (by category or tag), ``skill_view`` loads one skill's instructions or one of
its supporting files (and counts a use), ``skill_manage`` writes the home's own
skills through the store, so every write is validated, scanned and recorded with
its author (``agent`` here; the background review builds its tools with
``actor="review"``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hermes.errors import UserError
from hermes.skills.format import NAME_RULE
from hermes.skills.links import refuse_outside
from hermes.skills.lockfile import accepted_findings
from hermes.skills.model import SKILL_FILE, SUPPORT_DIRS, Actor, Skill
from hermes.skills.store import SkillsStore
from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.context import ToolContext
from hermes.tools.results import error, ok

LIST_DESCRIPTION = (
    "List the skills you can load: reusable procedures saved from earlier work or shipped "
    "with Hermes. Filter by category or tag. Load one with skill_view before a task it "
    "covers.")
VIEW_DESCRIPTION = (
    "Load a skill: its SKILL.md instructions (follow them), or with file one of its "
    "supporting files (references/, templates/, scripts/, assets/) that SKILL.md "
    "mentions. Scripts are run with the terminal tool from the skill's directory.")
MANAGE_DESCRIPTION = (
    "Create and improve your skills (procedural memory kept across sessions). create: "
    "content is the whole SKILL.md (--- frontmatter with name and description ---, then "
    "Markdown: when to use it, numbered steps with exact commands, pitfalls, how to "
    "verify), optional category. patch: replace old_string with new_string in SKILL.md or "
    "file_path (preferred for fixes). edit: rewrite SKILL.md whole (read it first). "
    "write_file/remove_file: a supporting file under references/, templates/, scripts/ or "
    "assets/. delete: remove one of your skills. Create one after a task that took many "
    "steps, errors overcome or a correction from the user; patch one you used when it was "
    "wrong or incomplete. Skip one-off tasks. Bundled skills are read-only; every write is "
    "scanned and refused if it carries injected instructions, secrets leaving the machine "
    "or dangerous script commands.")
ACTIONS = ("create", "patch", "edit", "delete", "write_file", "remove_file")


def skill_tools(store: SkillsStore, actor: Actor = "agent",
                environ: Mapping[str, str] | None = None) -> list[ToolSpec]:
    """The three skill tools over ``store``; writes are recorded as made by ``actor``;
    ``environ`` is where ``skill_view`` looks for a skill's required variables. The
    background review reading a skill to improve it is not a use (the curator reads
    uses), so its ``skill_view`` counts none."""
    return [skills_list_tool(store), skill_view_tool(store, environ, count_uses=actor != "review"),
            skill_manage_tool(store, actor)]


def _guarded(run: Callable[[dict[str, Any]], str]) -> Callable[..., str]:
    """A handler whose user-facing refusals become error results for the model."""
    def handle(args: dict[str, Any], **_: Any) -> str:
        try:
            return run(args)
        except UserError as exc:
            return error(str(exc))
    return handle


def skills_list_tool(store: SkillsStore) -> ToolSpec:
    schema = object_schema(
        category={"type": "string", "description": "Only skills of this category."},
        tag={"type": "string", "description": "Only skills with this tag."})

    def run(args: dict[str, Any]) -> str:
        skills = store.list()
        if args.get("category"):
            skills = [s for s in skills if s.category == args["category"]]
        if args.get("tag"):
            skills = [s for s in skills if args["tag"] in s.tags]
        categories = sorted({s.category or "general" for s in store.list()})
        return ok(count=len(skills), categories=categories,
                  skills=[_summary(skill) for skill in skills])

    return ToolSpec("skills_list", "skills", LIST_DESCRIPTION, schema, _guarded(run),
                    parallel_safe=True)


def _summary(skill: Skill) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": skill.name, "category": skill.category or "general",
                             "description": skill.description}
    if skill.tags:
        entry["tags"] = list(skill.tags)
    if not skill.writable:
        entry["read_only"] = skill.origin
    return entry


def skill_view_tool(store: SkillsStore, environ: Mapping[str, str] | None = None, *,
                    count_uses: bool = True) -> ToolSpec:
    schema = object_schema(
        ("name",),
        name={"type": "string", "description": "The skill's name (see skills_list)."},
        file={"type": "string", "description": "A supporting file, relative to the skill, "
                                               "e.g. references/api.md; omit for SKILL.md."})

    def run(args: dict[str, Any]) -> str:
        name, file = str(args["name"]).strip().lstrip("/"), args.get("file")
        content = store.read(name, file)
        skill = store.get(name)
        result: dict[str, Any] = {"name": name, "directory": str(skill.path),
                                  "content": content}
        if file in (None, "", "SKILL.md"):
            if count_uses:
                store.record_use(name, "view")
            result["files"] = store.files(name)
            missing = [v for v in (skill.meta.required_env if skill.meta else ())
                       if not (environ if environ is not None else os.environ).get(v)]
            if missing:
                result["missing_environment_variables"] = missing
        else:
            withhold_threats(name, str(file), content,
                             accepted_findings(store.directory, name, skill.path)
                             if skill.writable
                             else frozenset())
            result["file"] = file
        return ok(**result)

    guarded = _guarded(run)

    def handle(args: dict[str, Any], *, ctx: ToolContext, **_: Any) -> str:
        try:
            refuse_what_commands_cannot_read(store, str(args["name"]).strip().lstrip("/"),
                                             args.get("file"), ctx)
        except UserError as exc:
            return error(str(exc))
        return guarded(args)

    return ToolSpec("skill_view", "skills", VIEW_DESCRIPTION, schema, handle,
                    parallel_safe=True)


def refuse_what_commands_cannot_read(store: SkillsStore, name: str, file: str | None,
                                     ctx: ToolContext) -> None:
    """A skill outside the Hermes root (``skills.directories``, bundled) is read through
    the session's sandbox policy like any file: what commands may not read, skill_view
    does not hand over either. The home's own skills are this tool's store."""
    if ctx.environment.kind != "local":
        return
    skill = store.get(name)
    if Path(os.path.realpath(skill.path)).is_relative_to(os.path.realpath(ctx.home.root)):
        return  # the store's own rule keeps its links inside the skill
    path = skill.file if file in (None, "", SKILL_FILE) else store.file_path(skill, str(file))
    refuse_outside(path, skill.path, f"{file or SKILL_FILE} of skill {name!r}")  # links first
    ctx.environment.files().locate(str(path))  # PathRefused: a tool error for the model


def withhold_threats(name: str, file: str, content: str,
                     accepted: frozenset[str] = frozenset()) -> None:
    """Refuse to hand the model a supporting file with injected text: files can change
    behind the store's back (an editor, a file tool), and only ``SKILL.md`` is scanned
    when skills are listed. What the user ``accepted`` installing the skill (findings as
    ``guard.Finding`` prints them) is handed over."""
    from hermes.skills.guard import Finding
    from hermes.skills.scan_text import find_threats  # read as the install scan reads it

    for threat in find_threats(file, content):
        if str(Finding.of(file, threat)) not in accepted:
            raise UserError(f"{file} of skill {name!r} is withheld: {threat.reason()}; ask "
                            "the user to check it (`hermes skills audit`)")


def skill_manage_tool(store: SkillsStore, actor: Actor = "agent") -> ToolSpec:
    text = {"type": "string"}
    schema = object_schema(
        ("action", "name"),
        action={"type": "string", "enum": list(ACTIONS), "description": "What to do."},
        name={"type": "string", "description": f"The skill's name: {NAME_RULE}."},
        content={**text, "description": "The whole SKILL.md (create, edit)."},
        category={**text, "description": "A category directory for create, e.g. devops."},
        file_path={**text, "description": "A supporting file under "
                                          f"{'/, '.join(SUPPORT_DIRS)}/ (write_file, "
                                          "remove_file; patch: instead of SKILL.md)."},
        file_content={**text, "description": "The file's content (write_file)."},
        old_string={**text, "description": "Text to find, exactly (patch)."},
        new_string={**text, "description": "Its replacement, may be empty (patch)."},
        replace_all={"type": "boolean", "description": "patch: every occurrence, not one."})

    def run(args: dict[str, Any]) -> str:
        return ok(success=True, **_manage(store, actor, args))

    return ToolSpec("skill_manage", "skills", MANAGE_DESCRIPTION, schema, _guarded(run))


def _manage(store: SkillsStore, by: Actor, args: dict[str, Any]) -> dict[str, Any]:
    action, name = args["action"], str(args["name"]).strip()

    def need(key: str) -> str:
        value = args.get(key)
        if value is None:
            raise UserError(f"{action} needs {key}")
        return str(value)

    if action == "create":
        shadowed = store.find(name)
        skill = store.create(name, need("content"), category=args.get("category"), by=by)
        note = f"; it takes precedence over the {shadowed.origin} one" if shadowed else ""
        return {"message": f"created skill {name}{note}", "directory": str(skill.path)}
    if action == "edit":
        store.edit(name, need("content"), by=by)
        return {"message": f"rewrote SKILL.md of {name}"}
    if action == "patch":
        count = store.patch(name, need("old_string"), need("new_string"),
                            file=args.get("file_path"), replace_all=bool(args.get("replace_all")),
                            by=by)
        return {"message": f"patched {args.get('file_path') or 'SKILL.md'} of {name} "
                           f"({count} place{'s' if count != 1 else ''})"}
    if action == "write_file":
        path = store.write_file(name, need("file_path"), need("file_content"), by=by)
        return {"message": f"wrote {args['file_path']} of {name}", "path": str(path)}
    if action == "remove_file":
        store.remove_file(name, need("file_path"), by=by)
        return {"message": f"removed {args['file_path']} from {name}"}
    store.delete(name, by=by)
    return {"message": f"deleted skill {name}"}
