"""Scrub secrets from text before a model, a log or a user sees it.

Two layers: the exact values this home knows are secret (its ``.env``, secret-shaped
environment variables such as ``*_KEY`` or ``*_PASSWORD``, and the variables the image
loaded from ``*_FILE`` files, named in ``HERMES_SECRET_NAMES``; the config's
``secrets.environment_files``), and the shapes of
common credentials (OpenAI-style ``sk-`` keys, GitHub and Slack tokens, AWS
access key ids, PEM private keys) whoever they belong to. The agent loop and
the logger use the same ``Redactor`` as the tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from hermes.credentials import REDACTED, Secrets

# Shorter values would scrub ordinary words and numbers out of every output.
MIN_SECRET_CHARS = 6
SECRET_SHAPES = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)"
    r"|\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_]{16,}"
    r"|\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}"
    r"|\bxox[abposr]-[A-Za-z0-9-]{10,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    re.DOTALL,
)


class Redactor:
    """Callable ``text -> text`` that replaces secrets with ``<redacted>``."""

    def __init__(self, values: Iterable[str] = ()):
        variants = {v for value in values if len(value) >= MIN_SECRET_CHARS
                    for v in (value, json.dumps(value)[1:-1])}
        # Longest first, so a secret containing another is replaced whole.
        ordered = sorted(variants, key=len, reverse=True)
        self._values = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __call__(self, text: str) -> str:
        if self._values is not None:
            text = self._values.sub(REDACTED, text)
        return SECRET_SHAPES.sub(REDACTED, text)


def secret_values(env_file: Path, environ: Mapping[str, str],
                  environment_files: Sequence[str] = ()) -> list[str]:
    """Every secret value the home loads (``credentials.Secrets.values``), long enough
    to be told from ordinary words."""
    secrets = Secrets(env_file, environ, environment_files=environment_files)
    return sorted(v for v in secrets.values() if len(v) >= MIN_SECRET_CHARS)


def build_redactor(env_file: Path, environ: Mapping[str, str],
                   environment_files: Sequence[str] = ()) -> Redactor:
    """The redactor of one home: ``build_redactor(home.env_file, environ, files)``, where
    ``files`` are the config's ``secrets.environment_files``."""
    return Redactor(secret_values(env_file, environ, environment_files))


def no_redaction(text: str) -> str:
    """The identity; the default where no secrets are known."""
    return text
