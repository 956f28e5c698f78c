"""Threat scanning of text that will reach a prompt: memory writes, recalled
memory and context files (the context-file loader reuses ``scan_text``).

``scan_text(text)`` returns why the text is refused, or None when it is fine.
The text is checked for invisible Unicode first (zero-width and bidi control
characters survive NFKC), then NFKC-normalised (full-width and compatibility
look-alikes fold to ASCII) and matched against the threat patterns below.
Patterns aim at instructions and commands, not at topics: a note that
mentions curl, SSH or a config file passes; one that pipes secrets to curl
does not.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["THREATS", "Finding", "Threat", "find_invisible", "find_threat", "scan_text"]


@dataclass(frozen=True)
class Threat:
    """One pattern of one threat class."""

    kind: str
    """The class, shown to the model: "prompt injection", "exfiltration", ..."""
    pattern: re.Pattern[str]


def _threats(kind: str, *patterns: str) -> tuple[Threat, ...]:
    flags = re.IGNORECASE | re.MULTILINE
    return tuple(Threat(kind, re.compile(p, flags)) for p in patterns)


_SECRET_WORDS = r"(?:key|token|secret|passw(?:or)?d|credential)"
_KEY_DIR = r"(?<!-i )(?<![~/\w.])(?:~/|\$HOME/|/root/|/home/[\w.-]+/)?\.ssh/"
"""``~/.ssh/...``, except as the identity a command logs in with (``-i ~/.ssh/key``)."""
_STORES = (
    rf"\$\{{?\w*{_SECRET_WORDS}\w*|/etc/(?:passwd|shadow)|{_KEY_DIR}|\.aws/|\.netrc\b"
    r"|\.git-credentials\b|\.hermes/"
)
"""Secret variables, key files and credential stores."""
_UPLOADED = rf"(?:{_STORES}|\$\(\s*(?:env|printenv|cat)\b|@(?:\S*/)?\.env\b)"
"""What a network command's own arguments may leak (``-d @.env``, ``$(env)``)."""
_PIPED = rf"(?:{_STORES}|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|\b(?:env|printenv)\b|(?<![\w.])\.env\b)"
"""What may be piped into a network command (``cat .env | nc ...``)."""
_SENDERS = r"\b(?:curl|wget|nc|ncat|netcat|socat|telnet|scp|rsync|ftp|sftp|http(?:ie)?)\b"
_KEY_TYPES = r"\b(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)"
_OWN_FILES = r"(?:~/\.hermes\b|\.hermes/|\$\{?HERMES_HOME\b|\bHERMES_HOME/)"
"""The runtime's own home: its config.yaml, .env, memories, skills."""

THREATS: tuple[Threat, ...] = (
    *_threats(
        "prompt injection",
        r"\b(?:ignore|forget|disregard)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*"
        r"(?:previous|prior|above|earlier|preceding|system|original)\s+"
        r"(?:instructions?|prompts?|rules|messages|directions|guidelines|context)",
        r"\bdisregard\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:instructions?|rules|guidelines|"
        r"safety|polic(?:y|ies)|system\s+prompt)",
        r"\b(?:override|bypass)\s+(?:the\s+|your\s+|all\s+)*(?:system\s+prompt|instructions"
        r"|safety\s+(?:rules|guidelines|checks))",
        r"\byou\s+are\s+now\b",
        r"\bsystem\s*prompt\s*:",
        r"\bnew\s+(?:system\s+)?instructions?\s*:",
        r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|alert)\s+the\s+user\b",
        r"\b(?:act|behave)\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|jailbroken)\b",
    ),
    *_threats(
        "role hijack",
        r"<\|\s*im_(?:start|end|sep)\s*\|>",
        r"<\|\s*(?:system|assistant|user|endoftext|start_header_id|end_header_id|eot_id)\s*\|>",
        r"^[ \t]*#{1,6}[ \t]*(?:system|assistant|developer)(?:[ \t]+(?:prompt|message))?"
        r"[ \t]*:?[ \t]*$",
        r"^[ \t]*assistant[ \t]*:",
        r"^[ \t]*system[ \t]*:[ \t]*(?:you\b|your\b|ignore\b|from\s+now\s+on\b|always\b|never\b"
        r"|new\s+instructions?\b)",
        r"</?\s*(?:system|assistant)\s*>",
        r"\[/?INST\]|<</?SYS>>",
    ),
    *_threats(
        "exfiltration",
        rf"{_SENDERS}[^\n]*{_UPLOADED}",
        rf"{_PIPED}[^\n]*\|\s*(?:base64[^\n|]*\|\s*)?{_SENDERS}",
        rf"\b(?:send|post|upload|forward|exfiltrate|leak)\b[^\n]{{0,60}}"
        rf"(?:{_SECRET_WORDS}s?|\.env|ssh\s+keys?|private\s+keys?|environment\s+variables)\b"
        r"[^\n]{0,60}\bto\s+(?:https?://|\S+@|\d{1,3}(?:\.\d{1,3}){3})",
    ),
    *_threats(
        "ssh backdoor",
        r">>?\s*\S*authorized_keys\b",
        r"\b(?:tee|cp|mv|install)\b[^\n]*authorized_keys\b",
        r"\b(?:add|append|write|insert|put)\b[^\n]{0,80}\b(?:to|into|in)\s+\S*authorized_keys\b",
        rf"\bcommand\s*=\s*\"[^\"]*\"[^\n]*{_KEY_TYPES}\s",
        rf"\b(?:echo|printf)\b[^\n]*{_KEY_TYPES}\s+AAAA",
    ),
    *_threats(
        "config tampering",
        rf"(?:>>?|\btee\b|\bsed\s+-i\b|\bcp\b|\bmv\b|\brm\b|\bchmod\b|\btruncate\b)[^\n]*"
        rf"{_OWN_FILES}",
        r"\bhermes\s+config\s+(?:set|edit|unset)\b",
        r"\b(?:edit|modify|change|overwrite|rewrite|update|delete|append\s+to|write\s+to)\s+"
        r"(?:your\s+(?:own\s+)?|the\s+(?:hermes|agent|runtime)(?:'s)?\s+)"
        r"(?:config(?:uration)?(?:\.yaml)?|settings|\.env(?:\s+file)?|secrets)\b",
        r"\byolo\s*[:=]\s*(?:true|on|1)\b|\bapprovals?\s*[:=]\s*(?:off|false|disabled?|never)\b",
    ),
)
"""Every threat pattern, by class; matched against NFKC-normalised text."""

_INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
    "\U000e0000-\U000e007f]"
)
"""Zero-width characters, bidi controls, word joiners, BOM and tag characters."""


def find_invisible(text: str) -> str | None:
    """The first invisible or bidi-control character of ``text``, as ``U+XXXX``."""
    found = _INVISIBLE.search(text)
    return f"U+{ord(found.group()):04X}" if found else None


@dataclass(frozen=True)
class Finding:
    """Why a text was refused: the threat class and what matched."""

    kind: str
    matched: str

    def reason(self) -> str:
        """E.g. ``prompt injection ("ignore previous instructions")``; the quote is
        defused (no angle brackets, pipes or square brackets) and at most 60 chars."""
        flat = " ".join(re.sub(r"[<>|\[\]]", "", self.matched).split())
        quote = flat if len(flat) <= 60 else flat[:59] + "…"
        return f'{self.kind} ("{quote}")' if quote else self.kind


def find_threat(text: str) -> Finding | None:
    """The first threat in ``text`` (invisible characters first, then the patterns
    on the NFKC-normalised text), or None."""
    invisible = find_invisible(text)
    if invisible:
        return Finding("invisible unicode", f"{invisible}: zero-width or bidi control character")
    normalised = unicodedata.normalize("NFKC", text)
    for threat in THREATS:
        found = threat.pattern.search(normalised)
        if found:
            return Finding(threat.kind, found.group())
    return None


def scan_text(text: str) -> str | None:
    """Why ``text`` must not reach a prompt, or None if it may.

    The reason names the threat class and quotes what matched, e.g.
    ``prompt injection ("ignore previous instructions")``.
    """
    finding = find_threat(text)
    return finding.reason() if finding else None
