"""Mail in and out: what an incoming message says, whether its sender is vouched for,
and the answer that goes back in its thread.

A From header is whatever the sender typed, so an allowlist of addresses means
nothing by itself: the receiving server's ``Authentication-Results`` header (RFC 8601)
must show DMARC, or an SPF or DKIM pass aligned with the From domain. Mail from
robots (bounces, lists, auto-replies) is never answered, so two robots cannot loop.
Image parts (attached or inline) are kept as ``MailImage``s, decoded only when asked.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import formataddr, formatdate, getaddresses, make_msgid, parseaddr

QUOTE_HEADER = re.compile(r"^On .{1,200} wrote:\s*$")
ROBOT_LOCALPARTS = frozenset({"mailer-daemon", "postmaster", "noreply", "no-reply",
                              "donotreply", "do-not-reply", "bounce", "bounces"})
AUTH_METHOD = re.compile(r"\b(dmarc|spf|dkim)\s*=\s*([a-z]+)", re.IGNORECASE)
AUTH_PROPERTY = re.compile(r"\b(header\.from|header\.d|smtp\.mailfrom)\s*=\s*([^\s;()]+)",
                           re.IGNORECASE)


@dataclass(frozen=True)
class MailImage:
    """An ``image/*`` part of a message (an attachment or an inline image), not decoded."""

    name: str
    """Its file name, else its place (``inline image 2``)."""
    mime: str
    part: EmailMessage = field(repr=False, compare=False)

    @property
    def size(self) -> int:
        """How many bytes it decodes to, counted without decoding it (base64 takes 4
        characters for 3 bytes)."""
        payload = self.part.get_payload()
        text = "".join(payload.split()) if isinstance(payload, str) else ""
        encoding = str(self.part.get("Content-Transfer-Encoding", "")).strip().lower()
        return len(text) * 3 // 4 - text[-2:].count("=") if encoding == "base64" else len(text)

    def data(self) -> bytes:
        payload = self.part.get_payload(decode=True)
        return payload if isinstance(payload, bytes) else b""


@dataclass(frozen=True)
class Mail:
    """An incoming message, as far as the agent cares."""

    sender: str
    """The From address, in lower case."""
    sender_name: str
    subject: str
    message_id: str
    references: tuple[str, ...]
    """The thread so far: References, else In-Reply-To."""
    text: str
    """The new text (quoted earlier messages taken out)."""
    date: str = ""
    robot: bool = False
    headers: dict[str, list[str]] = field(default_factory=dict, compare=False)
    """Every header's values, by lower-case name."""
    images: tuple[MailImage, ...] = ()
    """Its image parts, attached or inline, in order."""

    @property
    def thread_id(self) -> str:
        """The message that started the thread (its own id when it starts one)."""
        return self.references[0] if self.references else self.message_id

    @property
    def request(self) -> str:
        """What the agent is asked: a new thread's subject comes with its text."""
        if self.references or not self.subject:
            return self.text or self.subject
        return f"Subject: {self.subject}\n\n{self.text}".strip()


def parse_mail(raw: bytes) -> Mail:
    """An incoming message from its RFC 5322 bytes."""
    message = message_from_bytes(raw, policy=policy.default)
    name, address = parseaddr(str(message.get("From", "")))
    references = tuple(_ids(str(message.get("References", "")))) or \
        tuple(_ids(str(message.get("In-Reply-To", ""))))
    headers: dict[str, list[str]] = {}
    for key, value in message.items():
        headers.setdefault(key.lower(), []).append(str(value))
    return Mail(address.strip().lower(), name, " ".join(str(message.get("Subject", "")).split()),
                str(message.get("Message-ID", "")).strip(), references,
                _new_text(_body(message)), str(message.get("Date", "")),
                _robot(message, address), headers, _images(message))


def authenticated(mail: Mail, authserv_id: str) -> tuple[bool, str]:
    """Whether the server named ``authserv_id`` vouches for the From domain; why."""
    domain = mail.sender.rpartition("@")[2]
    results = [" ".join(value.split()) for value in mail.headers.get(
        "authentication-results", [])]
    ours = next((r for r in results if r.split(";", 1)[0].strip().lower() ==
                 authserv_id.lower()), None)  # a server strips forged headers with its id
    if ours is None:
        return False, f"no Authentication-Results from {authserv_id}"
    methods = {m.lower(): r.lower() for m, r in AUTH_METHOD.findall(ours)}
    found = {p.lower(): v.strip('"').lower() for p, v in AUTH_PROPERTY.findall(ours)}
    if methods.get("dmarc") == "pass":
        return True, "dmarc=pass"
    if methods.get("spf") == "pass" and _aligned(found.get("smtp.mailfrom", ""), domain):
        return True, "spf=pass, aligned"
    if methods.get("dkim") == "pass" and _aligned(found.get("header.d", ""), domain):
        return True, "dkim=pass, aligned"
    return False, "not authenticated: " + (", ".join(f"{m}={r}" for m, r in methods.items())
                                           or "no verdict")


def reply_to(mail: Mail, text: str, sender: str) -> EmailMessage:
    """The answer to ``mail`` from ``sender``: in its thread, quoting the question."""
    answer = _message(sender, formataddr((mail.sender_name, mail.sender)),
                      mail.subject if mail.subject.lower().startswith("re:") else
                      f"Re: {mail.subject}".strip())
    if mail.message_id:
        answer["In-Reply-To"] = mail.message_id
        answer["References"] = " ".join([*mail.references, mail.message_id])
    quoted = "\n".join(f"> {line}" if line else ">" for line in mail.text.splitlines())
    who = mail.sender_name or mail.sender
    answer.set_content(f"{text}\n\nOn {mail.date or 'an earlier date'}, {who} wrote:\n"
                       f"{quoted}\n")
    return answer


def new_mail(to: str, subject: str, text: str, sender: str) -> EmailMessage:
    """A message that answers nothing (a scheduled job's result, say)."""
    message = _message(sender, to, subject)
    message.set_content(text + "\n")
    return message


def _message(sender: str, to: str, subject: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = formatdate(localtime=True)
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or None)
    message["Auto-Submitted"] = "auto-replied"  # RFC 3834: robots must not answer it
    return message


def _ids(value: str) -> list[str]:
    return re.findall(r"<[^<>\s]+>", value)


def _body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError):  # an unknown charset or a broken encoding
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    if part.get_content_subtype() == "html":
        content = html.unescape(re.sub(r"<[^>]+>", " ", re.sub(
            r"(?is)<(script|style).*?</\1>|<br\s*/?>|</p>", "\n", content)))
    return str(content)


def _images(message: EmailMessage) -> tuple[MailImage, ...]:
    """Every ``image/*`` leaf part: attachments and images inline in an HTML body."""
    found: list[MailImage] = []
    for part in message.walk():
        if not part.is_multipart() and part.get_content_maintype() == "image":
            name = part.get_filename() or f"inline image {len(found) + 1}"
            found.append(MailImage(name[:200], part.get_content_type(), part))
    return tuple(found)


def _new_text(body: str) -> str:
    """The body without the quoted message it answers, nor a signature."""
    kept: list[str] = []
    for line in body.replace("\r\n", "\n").split("\n"):
        if line.rstrip() == "--" or QUOTE_HEADER.match(line.strip()):
            break
        if not line.startswith(">"):
            kept.append(line.rstrip())
    return "\n".join(kept).strip()


def _robot(message: EmailMessage, address: str) -> bool:
    auto = str(message.get("Auto-Submitted", "no")).strip().lower()
    precedence = str(message.get("Precedence", "")).strip().lower()
    local = address.partition("@")[0].lower()
    return auto != "no" or precedence in ("bulk", "list", "junk") or \
        "List-Id" in message or local in ROBOT_LOCALPARTS or not address or \
        any(addr == "" for _n, addr in getaddresses([str(message.get("Return-Path", "x"))]))


def _aligned(value: str, domain: str) -> bool:
    """Relaxed DMARC alignment: the same domain, or one a subdomain of the other."""
    other = value.rpartition("@")[2].rstrip(".")
    return "." in other and bool(domain) and (other == domain or other.endswith("." + domain) or
                                       domain.endswith("." + other))
