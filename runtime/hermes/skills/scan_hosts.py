"""Whether a command that sends a credential sends it to the credential's own service.

A secret variable is named for its service (``GITHUB_TOKEN``, ``AIRTABLE_API_KEY``,
``CANVAS_API_TOKEN``: the first word that is not ``api``, ``key``, ``token``, ...). It
goes to its own service when every destination of the command (the logical line,
``\\`` continuations joined, up to ``;``, ``&&``, ``||`` or ``|``) is that service: a
URL or bare host whose registrable name is the service's (``api.github.com``,
``raw.githubusercontent.com``, ``cloud.lambdalabs.com``, ``api.nal.usda.gov``, a
service's sub-domain of a shared API domain such as ``tenor.googleapis.com``), or a
variable named for it (``$CANVAS_BASE_URL``) or for no service at all (``$URL``,
``$BASE_URL``: the user's own endpoint), followed through the assignments the text
makes (``URL="https://api.airtable.com/v0/..."``). A variable named for no service
(``$TOKEN``, ``$API_KEY``) is the credential of whatever the text talks to. A command
with no destination to be read, a host of another name (``github.evil.example``) or
a variable named for another service is not its own service.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

SECRET = re.compile(r"\$\{?([A-Za-z_]\w*)\}?")
SECRET_WORDS = re.compile(r"key|token|secret|passw(?:or)?d|credential", re.IGNORECASE)
GENERIC_WORDS = frozenset({
    "api", "key", "keys", "token", "tokens", "secret", "secrets", "access", "auth", "pat",
    "password", "passwd", "pwd", "credential", "credentials", "client", "bearer",
    "personal", "oauth", "bot", "app", "private", "id", "my", "user", "admin", "refresh",
    "session", "value", "the", "base", "url", "uri", "host", "endpoint", "server", "addr",
    "address", "domain", "instance", "root", "v1", "v2"})
"""Words of a variable's name that name no service."""
HOST_VARIABLE = re.compile(r"(?:^|_)(?:URL|URI|HOST|ENDPOINT|BASE|DOMAIN|SERVER|ADDR)(?:_|$)",
                           re.IGNORECASE)
URL_HOST = re.compile(r"\bhttps?://(?:[^/\s\"'@]*@)?([A-Za-z0-9.-]+|\$\{?\w+\}?)",
                      re.IGNORECASE)
BARE_HOST = re.compile(
    r"(?<![\w@/.:$-])((?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|ai|co|app|gov|edu|cloud|sh|me"
    r"|xyz|info|us|uk|de|so|to|gg|tv|fm|ly|tech))(?=[/:\s\"'?]|$)", re.IGNORECASE)
SEPARATORS = re.compile(r"&&|\|\||;|\|")
MAX_CONTINUATIONS = 32
"""Lines a command is followed over through ``\\`` continuations, each way."""
ALIASES = {"gh": ("github",), "hf": ("huggingface", "hf"), "google": ("googleapis", "google"),
           "gemini": ("googleapis",), "aws": ("amazonaws",), "claude": ("anthropic",)}
BRAND_SUFFIXES = frozenset({"labs", "hq", "app", "apps", "api", "apis", "usercontent",
                            "cloud", "io", "ai", "dev", "hub", "cdn", "static"})
"""``lambda`` + ``labs``, ``github`` + ``usercontent``: the service's own domains."""
SHARED_API_DOMAINS = frozenset({"googleapis", "amazonaws"})
"""Where a service's sub-domain is its own (``tenor.googleapis.com``)."""
SECOND_LEVEL = frozenset({"co", "com", "org", "net", "gov", "ac", "edu"})
ASSIGNMENT = r"^[ \t]*(?:export[ \t]+|local[ \t]+|readonly[ \t]+)?{name}[ \t]*=[ \t]*(.+)$"


def sent_to_own_service(pattern: re.Pattern[str], match: re.Match[str], view: str) -> bool:
    """Whether the exfiltration ``match`` (of ``pattern``, in ``view``) is only secret
    variables sent to their own services: with those taken out the line no longer
    matches. Only the pattern of a sender's own arguments (``curl ... $X_TOKEN``) can be."""
    if not pattern.pattern.startswith(r"\b(?:curl|"):
        return False
    start = view.rfind("\n", 0, match.start()) + 1
    end = view.find("\n", match.start())
    end = len(view) if end < 0 else end
    logical, offset = _logical_line(view, start, end)
    neutral = list(view[start:end])
    for found in SECRET.finditer(logical):
        at = offset + found.start()
        if start <= at < end and SECRET_WORDS.search(found.group(1)) \
                and _own(found.group(1), _segment(logical, found.start()), view):
            size = len(found.group())  # same length: later positions stay
            neutral[at - start:at - start + size] = "$" + "O" * (size - 1)
    return pattern.search("".join(neutral)) is None


def _logical_line(view: str, start: int, end: int) -> tuple[str, int]:
    """The line around ``[start, end)`` with its ``\\`` continuations (at most
    ``MAX_CONTINUATIONS`` each way), and its offset."""
    for _ in range(MAX_CONTINUATIONS):
        if start < 2 or not _continued(view, start - 1):
            break
        start = view.rfind("\n", 0, start - 1) + 1
    for _ in range(MAX_CONTINUATIONS):
        if end >= len(view) or not _continued(view, end):
            break
        following = view.find("\n", end + 1)
        end = len(view) if following < 0 else following
    return view[start:end], start


def _continued(view: str, newline: int) -> bool:
    """Whether the line ending at ``newline`` ends with a ``\\`` (blanks after it)."""
    at = newline - 1
    while at >= 0 and view[at] in " \t":
        at -= 1
    return at >= 0 and view[at] == "\\"


def _segment(line: str, at: int) -> str:
    """The command of ``line`` holding position ``at`` (up to ``;``, ``&&``, ``|``...)."""
    cuts = [0, *(m.end() for m in SEPARATORS.finditer(line) if m.end() <= at)]
    following = SEPARATORS.search(line, at)
    return line[cuts[-1]:following.start() if following else len(line)]


def _own(secret: str, command: str, view: str) -> bool:
    service = service_of(secret)
    if service is None:
        return True
    judged = list(_judged(command, view, service, 0, lenient=False))
    return bool(judged) and all(judged)


def service_of(name: str) -> str | None:
    """The service a variable is named for (``GITHUB_TOKEN``: github), or None."""
    words = [w for w in name.lower().split("_") if w and w not in GENERIC_WORDS]
    return words[0] if words else None


def _judged(command: str, view: str, service: str, depth: int, *, lenient: bool
            ) -> Iterator[bool]:
    """For each destination of ``command``: whether it is ``service``'s. ``lenient``: the
    text is the value of a variable named for the service, where an example host
    (``yourschool.instructure.com``) stands for the user's own."""
    for host in dict.fromkeys(m.group(1).lower() for m in BARE_HOST.finditer(command)):
        yield _host_judged(service, host, lenient)
    after_scheme: set[str] = set()
    for host in dict.fromkeys(m.group(1) for m in URL_HOST.finditer(command)):
        if host.startswith("$"):
            after_scheme.add(host.strip("${}"))
            yield from _variable_judged(host.strip("${}"), view, service, depth)
        else:
            yield _host_judged(service, host, lenient)
    for name in dict.fromkeys(m.group(1) for m in SECRET.finditer(command)):
        if name not in after_scheme and HOST_VARIABLE.search(name) \
                and not SECRET_WORDS.search(name):
            yield from _variable_judged(name, view, service, depth)


def _variable_judged(name: str, view: str, service: str, depth: int) -> Iterator[bool]:
    """A host variable: as the values the text assigns it, else by its name (named for
    no service: the user's own endpoint). Only a variable named for the service takes a
    placeholder host (``yourschool.instructure.com``) as the user's own: a value the
    text gives ``$URL`` is judged as the host it is."""
    named = service_of(name)
    named_for_it = named is not None and _same(named, service)
    values = _assigned(name, view)
    judged = [j for value in values if depth < 2
              for j in _judged(value, view, service, depth + 1, lenient=named_for_it)]
    yield from judged or [named is None or named_for_it]


@lru_cache(maxsize=256)
def _assigned(name: str, view: str) -> list[str]:
    """The values ``view`` assigns to variable ``name`` (once per text: a long one may
    name the same variable on every line)."""
    return re.findall(ASSIGNMENT.format(name=re.escape(name)), view, re.MULTILINE)


def _same(named: str, service: str) -> bool:
    return bool({named, *ALIASES.get(named, ())} & {service, *ALIASES.get(service, ())})


def _host_judged(service: str, host: str, lenient: bool) -> bool:
    host = host.lower()
    if lenient and re.match(r"(?:your|my|example)|(?:.*\.)?example\.", host):
        return True
    return _is_service(service, host)


def _is_service(service: str, destination: str) -> bool:
    labels = destination.strip(".").split(".")
    if len(labels) < 2 or labels[-1].isdigit():
        return False
    index = len(labels) - 2
    if labels[index] in SECOND_LEVEL and index > 0:
        index -= 1
    registrable, below = labels[index], labels[:index]
    for name in ALIASES.get(service, (service,)):
        if registrable == name or (registrable.startswith(name)
                                   and registrable[len(name):] in BRAND_SUFFIXES):
            return True
        if registrable in SHARED_API_DOMAINS and name in below:
            return True
    return False
