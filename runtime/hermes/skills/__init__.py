"""Skills: procedures the agent keeps and loads on demand (agentskills.io ``SKILL.md``).

``store.SkillsStore`` is the API: sources, listing, use counts, pins, archive and
validated, scanned, recorded writes. ``tools`` gives the model ``skills_list``,
``skill_view`` and ``skill_manage``; ``index`` renders the system prompt's index;
``commands`` turns ``/<name> [args]`` into a turn that carries the skill.

Layer 1, a service: imports the foundation (``errors``, ``fsutil``, ``home``,
``credentials``, ``redact``, ``logs``, ``chats``, ``config``, ``sessions``,
``events``, ``models.types``), ``tools`` and ``memory`` (the threat scan).
"""
