"""Names the approval rules judge commands by (``danger_paths``): the user's credential
stores (the sandbox policy's own list) and this home's runtime files.

Where the file tools may read and write is the sandbox policy's to say
(``environments/sandbox/access.py``), not a list kept here.
"""

from __future__ import annotations

from hermes.environments.sandbox.policy import CREDENTIAL_STORES

CREDENTIAL_PATHS = CREDENTIAL_STORES
"""Under the OS user's home: files that hold credentials for other systems."""
RUNTIME_FILES = (".env", "config.yaml", "conf", "approvals.json")
"""In a home: the runtime's own config and secrets, and the approvals allowlist
(writing it would let the agent approve its own commands)."""
