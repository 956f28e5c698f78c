"""The threat scan of a skill's text, read as a person reviewing the skill reads it.

The patterns are the memory scan's (``memory/scan.py``); what differs is where each
applies in a skill's files:

- Prose is not a shell. In Markdown (``SKILL.md``, references, ``.txt``) a shell
  redirect (``> ~/.hermes/...``, ``>> authorized_keys``) is looked for only in code:
  fenced blocks and inline code spans. A ``>`` quote or a ``<placeholder>`` in prose is
  no redirect. Other files are code throughout.
- Role markers (``<|endoftext|>``, ``# System message``, ``Assistant:``) count only in
  prose: in code they are a tokenizer's special token, a comment, a chat template.
- A phrase quoted in a sentence is a mention, not an instruction: ``rejects phrases
  like "ignore previous instructions"``; ``never tell the user to inspect x`` is advice
  (``never tell the user that ...`` is not).
- Exfiltration is a credential sent to a host that is not the credential's own
  service (``scan_hosts.py``): ``curl -H "Authorization: token $GITHUB_TOKEN"
  https://api.github.com`` is how the GitHub API is called; the same header sent to
  any other host, a key file or ``.env`` uploaded, or the environment piped to the
  network still are exfiltration.
- Invisible characters that hide nothing are allowed: a leading byte-order mark, a
  zero-width joiner inside an emoji, one zero-width space touching no letter (an escaped
  code fence, a table cell's start). Runs of them, one beside a letter, bidi controls
  and tag characters are still refused.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from hermes.memory.scan import THREATS, Finding, Threat, find_invisible
from hermes.skills.scan_hosts import sent_to_own_service

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".txt", ".rst")
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*$", re.MULTILINE)
INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
HIDDEN = "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
LONE_SPACE = re.compile(f"(?<![{HIDDEN}])[\u200b\u200c\u2060](?![{HIDDEN}])")
"""A zero-width space, non-joiner or word joiner standing alone."""
EMOJI_JOINER = re.compile(f"(?<=[^\\x00-\\x7f{HIDDEN}])\u200d(?=[^\\x00-\\x7f{HIDDEN}])")
"""A zero-width joiner between two visible non-ASCII characters (👩‍💻, Indic scripts)."""
QUOTES = {'"': '"', "'": "'", "`": "`", "\u201c": "\u201d", "\u2018": "\u2019"}
CODE_FILL = "\0"
"""Stands for code in the prose view: no pattern matches it, and the prose around it
stays one line (inline code is no line start)."""


def find_threats(file: str, text: str) -> list[Finding]:
    """Every threat in skill file ``file`` (relative; the suffix says how it is read):
    the first hidden character, else each distinct pattern match that stays one."""
    text = text.removeprefix("\ufeff")
    benign = _harmless_invisibles(text)
    hidden = find_invisible(_without(text, benign))
    if hidden:
        return [Finding("invisible unicode", f"{hidden}: zero-width or bidi control character")]
    prose, code = _views(file, text)
    views = {"full": _normal(text, benign), "prose": _normal(prose, benign),
             "code": _normal(code, benign)}
    found: dict[str, Finding] = {}
    for threat in THREATS:
        view = views[_view_of(threat)]
        for match in threat.pattern.finditer(view):
            if not _harmless(threat, match, view):
                finding = Finding(threat.kind, match.group())
                found.setdefault(finding.reason(), finding)
    return list(found.values())


def _normal(text: str, benign: list[int]) -> str:
    return unicodedata.normalize("NFKC", _without(text, benign))


def _view_of(threat: Threat) -> str:
    if threat.kind == "role hijack":
        return "prose"
    if threat.pattern.pattern.startswith((">>?", "(?:>>?")):
        return "code"  # a redirect: only where a shell would read it
    return "full"


def _views(file: str, text: str) -> tuple[str, str]:
    """``(prose, code)``: the text with its code (or its prose) blanked out, each the
    length of ``text``. Prose keeps its lines; code's pieces become lines of their own."""
    if not file.lower().endswith(MARKDOWN_SUFFIXES):
        return "", text
    prose, code = list(text), ["\n"] * len(text)
    for start, end in _code_spans(text):
        for index in range(start, end):
            code[index] = text[index]
            if text[index] != "\n":
                prose[index] = CODE_FILL
    return "".join(prose), "".join(code)


def _code_spans(text: str) -> Iterator[tuple[int, int]]:
    """Where fenced code blocks (fences included) and inline code spans are."""
    pos = 0
    while True:
        opening = FENCE.search(text, pos)
        yield from _inline_spans(text, pos, opening.start() if opening else len(text))
        if opening is None:
            return
        fence = opening.group(1)
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$",
                             re.MULTILINE).search(text, opening.end())
        end = closing.end() if closing else len(text)
        yield opening.start(), end
        pos = end


def _inline_spans(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    for line in re.finditer(r"[^\n]+", text[start:end]):
        for span in INLINE_CODE.finditer(line.group()):
            yield start + line.start() + span.start(), start + line.start() + span.end()


def _harmless_invisibles(text: str) -> list[int]:
    """Where invisible characters hide nothing: a joiner inside an emoji, a lone zero-width
    space touching no letter (```` `\\u200b`` ````, an escaped fence; not ``a\\u200b b``)."""
    found = [m.start() for m in EMOJI_JOINER.finditer(text)]
    for match in LONE_SPACE.finditer(text):
        at = match.start()
        before, after = text[at - 1:at], text[at + 1:at + 2]
        if not (before.isalnum() or after.isalnum()):
            found.append(at)
    return found


def _without(text: str, positions: list[int]) -> str:
    """``text`` without the invisible characters at ``positions`` (where a view still
    holds them: a blanked-out one stays blank)."""
    drop = {index for index in positions if index < len(text) and text[index] not in "\n\0"}
    if not drop:
        return text
    return "".join(char for index, char in enumerate(text) if index not in drop)


def _harmless(threat: Threat, match: re.Match[str], view: str) -> bool:
    if threat.kind == "prompt injection":
        return _quoted_mention(match, view) or _advice(match, view)
    if threat.kind == "exfiltration":
        return sent_to_own_service(threat.pattern, match, view)
    return False


def _advice(match: re.Match[str], view: str) -> bool:
    """``Never tell the user to inspect state.json``: what to advise, not what to hide
    (``never tell the user that ...`` still counts)."""
    return bool(re.match(r"(?:do\s+not|don'?t|never)\s+tell", match.group(), re.IGNORECASE)
                and re.match(r"\s+to\s", view[match.end():match.end() + 5]))


def _quoted_mention(match: re.Match[str], view: str) -> bool:
    """The match is all a quotation holds, inside a sentence (its paragraph has words
    before it): ``phrases like "ignore previous instructions"`` names the phrase; it
    tells the reader nothing to do."""
    paragraph = max(view.rfind("\n\n", 0, match.start()), 0)
    before = view[paragraph:match.start()]
    after = view[match.end():match.end() + 2]
    if not before or before[-1] not in QUOTES:
        return False
    closing = QUOTES[before[-1]]
    quoted_whole = after[:1] == closing or (after[:1] in ".,!?" and after[1:2] == closing)
    return quoted_whole and any(char.isalpha() for char in before[:-1])
