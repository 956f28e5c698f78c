"""The closed learning loop: background reviews after turns, and the skills curator.

``nudges`` counts, per session, user turns since the last memory write and tool
iterations since the last skill write; when a count reaches its interval
(``learning.memory_nudge_turns``, ``learning.skill_nudge_iterations``) the session's
``service.LearningService`` starts a ``review.Reviewer`` run in a thread, on a
snapshot of the conversation, with only the memory and skill tools — an agent run
started by the runtime, never by a tool. ``log`` records what each review and each
curator run changed in ``logs/learning.jsonl``. ``curator`` keeps the home's skills
tidy: stale marks and archiving of long-unused skills.

Layer 1, a service: imports the foundation (``errors``, ``fsutil``, ``home``,
``credentials``, ``redact``, ``logs``, ``chats``, ``config``, ``sessions``,
``events``, ``models.types``), and the services it runs reviews with (``agent``,
``tools``, ``skills``, ``environments``, ``models``); the agent factory gets it by
injection and sees only its ``watch``.
"""
