"""The messaging core every chat platform (telegram, matrix, email, ...) is built on.

- ``gate``: who may talk to the agent. A platform's ``allowed_users`` (its config) and
  the users paired through ``pairing`` pass; anyone else is refused, and an unknown
  sender in a direct message may be given a pairing code to hand to the owner.
- ``pairing``: 8-character codes from an unambiguous alphabet, valid one hour, stored
  hashed and salted in 0600 files in the home; ``hermes pairing approve | list | revoke``.
- ``approvals``: a dangerous command waits for ``/approve`` or ``/deny`` in the chat it
  came from, from an allowed user; unanswered it is refused after
  ``approvals.chat_timeout`` seconds.
- ``outbox`` and ``connection``: replies leave one at a time under the platform's rate
  limit, retried with backoff (a 429's ``retry_after`` is honoured); while the
  connection is lost they wait, and the connection is re-made with backoff.
- ``adapter``: ``MessagingAdapter``, the base class that ties these to one platform:
  a subclass writes ``connect``, ``listen``, ``deliver`` (and ``typing``).
- ``text``: long answers split on paragraph, then line boundaries.
"""
