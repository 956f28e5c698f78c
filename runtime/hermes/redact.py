"""Scrub secrets from text before a model, a log or a user sees it.

Two layers: the exact values this home knows are secret (its ``.env``, secret-shaped
environment variables such as ``*_KEY`` or ``*_PASSWORD``, and the variables the image
loaded from ``*_FILE`` files, named in ``HERMES_SECRET_NAMES``; the config's
``secrets.environment_files``), and the shapes of common credentials whoever they belong
to (``SECRET_SHAPES``), including the password inside any URL
(``postgres://user:<redacted>@host/db``). Shapes are a heuristic: a credential of another
form, or one split or encoded, passes. The agent loop and the logger use the same
``Redactor`` as the tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from hermes.credentials import REDACTED, Secrets

# Shorter values would scrub ordinary words and numbers out of every output.
MIN_SECRET_CHARS = 6
START = r"(?:(?<!\w)|(?<=\\[nrt]))"
"""Where a token may begin: not inside a word, but after a JSON escape such as ``\\n``
(tool results are redacted as JSON, where a line's first token follows ``\\n``)."""


def _begins(prefix: str) -> str:
    """A token's literal ``prefix``, then ``START`` checked where the token began. Every
    alternative of ``SECRET_SHAPES`` opens with a literal, so the regex engine jumps to
    the characters that can start one; a leading ``START`` made it try every position
    (a tool result cost 0.6 ms per 2.4 KB, as much as a loopback page fetch)."""
    n = len(prefix)
    return rf"{re.escape(prefix)}(?:(?<!\w.{{{n}}})|(?<=\\[nrt].{{{n}}}))"


SECRET_SHAPES = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)"
    # OpenAI (sk-, sk-proj-), Anthropic (sk-ant-api03-...), whole: random, so with a
    # digit or a long run of letters ("sk-learn-compatible" is not one)
    rf"|{_begins('sk-')}(?:(?=[A-Za-z0-9_-]{{0,200}}\d)[A-Za-z0-9_-]{{20,}}"
    r"|(?:[A-Za-z0-9]+-)*[A-Za-z0-9_]{16,}[A-Za-z0-9_-]*)"
    rf"|{_begins('gh')}[pousr]_[A-Za-z0-9]{{30,}}|{_begins('github_pat_')}[A-Za-z0-9_]{{30,}}"
    rf"|{_begins('gl')}(?:pat|dt|rt|ptt|cbt|soat|oas|ft)-[A-Za-z0-9_.-]{{20,}}"  # GitLab
    rf"|{_begins('xox')}[abposr]-[A-Za-z0-9-]{{10,}}"  # Slack
    rf"|{_begins('xapp-')}\d-[A-Za-z0-9-]{{10,}}"
    rf"|{_begins('AKIA')}[0-9A-Z]{{16}}\b|{_begins('ASIA')}[0-9A-Z]{{16}}\b"  # AWS key ids
    rf"|{_begins('sk_')}(?:live|test)_[A-Za-z0-9]{{16,}}"  # Stripe
    rf"|{_begins('rk_')}(?:live|test)_[A-Za-z0-9]{{16,}}"
    rf"|{_begins('whsec_')}[A-Za-z0-9+/=]{{24,}}"
    rf"|{_begins('AIza')}[0-9A-Za-z_-]{{35}}(?![0-9A-Za-z_-])"  # Google API keys
    rf"|{_begins('hf_')}[A-Za-z0-9]{{30,}}"  # Hugging Face
    rf"|{_begins('npm_')}[A-Za-z0-9]{{36,}}"  # npm
    rf"|{_begins('eyJ')}[A-Za-z0-9_-]{{10,}}\.eyJ[A-Za-z0-9_-]{{10,}}\.[A-Za-z0-9_-]*"  # JWTs
    # a URL's password (scheme://user:PASSWORD@), unless it is a template that a file
    # needs kept ($PASSWORD, ${X}, {password}, %(password)s) or already redacted. The
    # match starts at "://" (a scheme scanned from every letter cost 5x on plain text).
    r"|:(?<=[A-Za-z0-9+.-]:)(?P<url>//[^\s/?#@\[\]:\"'<>]*:)"
    r"(?!\$[A-Z_][A-Z0-9_]*@|\$\{|\{|%\(|<)[^\s/?#@\[\]\"]+(?=@)",
    re.DOTALL,
)


def _replace(match: re.Match[str]) -> str:
    return (f":{match['url']}" if match["url"] else "") + REDACTED


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
        return SECRET_SHAPES.sub(_replace, text)


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
