"""AddressPolicy on its own: which URLs and addresses the web tools may reach (the same
rules through the tool are in tests/test_web_extract_addresses.py)."""

from __future__ import annotations

import pytest

from hermes.web.addresses import AddressPolicy, BlockedAddress
from hermes.web.redaction import redact_url
from hermes.web.untrusted import fence_web

REFUSED = {
    "http://127.0.0.1/": "loopback",
    "http://2130706433/": "127.0.0.1",
    "http://0x7f.1/": "127.0.0.1",
    "http://0177.0.0.1/": "127.0.0.1",
    "http://127.1:8080/": "127.0.0.1",
    "http://[::1]/": "loopback",
    "http://[::ffff:127.0.0.1]/": "inside an IPv6 address",
    "http://[::ffff:a9fe:a9fe]/": "metadata",
    "http://[2002:7f00:1::]/": "inside an IPv6 address",
    "http://[64:ff9b::a9fe:a9fe]/": "metadata",
    "http://10.1.2.3/": "private",
    "http://192.168.0.1/": "private",
    "http://172.16.5.4/": "private",
    "http://[fd12::1]/": "private",
    "http://100.64.0.1/": "carrier-grade",
    "http://169.254.1.1/": "link-local",
    "http://[fe80::1]/": "link-local",
    "http://224.0.0.1/": "multicast",
    "http://0.0.0.0/": "unspecified",
    "http://240.0.0.1/": "reserved",
    "http://169.254.169.254/latest/": "metadata",
    "http://[fd00:ec2::254]/": "metadata",
    "http://100.100.100.200/": "metadata",
    "http://metadata.google.internal/": "metadata",
    "http://METADATA/": "metadata",
    "http://instance-data./": "metadata",
    "http://localhost:9000/": "loopback",
    "http://api.localhost/": "loopback",
    "file:///etc/passwd": "file: URLs are refused",
    "ftp://ftp.example.com/x": "ftp: URLs are refused",
    "data:text/html,<h1>hi</h1>": "data: URLs are refused",
    "javascript:alert(1)": "javascript: URLs are refused",
    "//example.com/": "no scheme",
    "http://user@evil@127.0.0.1/": "ambiguous",
    "http://example.com\\@127.0.0.1/": "ambiguous",
    "http://exa mple.com/": "ambiguous",
}


@pytest.mark.parametrize("url", sorted(REFUSED))
def test_refused_urls_say_why_in_one_line(url: str) -> None:
    with pytest.raises(BlockedAddress) as caught:
        AddressPolicy().check_url(url)
    message = str(caught.value)
    assert REFUSED[url] in message and "\n" not in message, message


def test_public_urls_pass() -> None:
    for url in ("https://example.com/a?b=c", "http://93.184.215.14:8080/",
                "https://[2606:4700::1]/", "http://user:pw@example.org/"):
        assert AddressPolicy().check_url(url).hostname


def test_allow_entries_admit_exactly_what_they_name() -> None:
    policy = AddressPolicy(["127.0.0.1:8080", "[::1]:99", "10.0.0.0/8", "metadata"],
                           resolver=lambda host, port: ["169.254.169.254"])
    assert policy.resolve("127.0.0.1", 8080) == ["127.0.0.1"]
    assert policy.resolve("::1", 99) == ["::1"]
    assert policy.resolve("10.9.8.7", 1) == ["10.9.8.7"]
    assert policy.resolve("metadata", 80) == ["169.254.169.254"]
    for host, port in (("127.0.0.1", 8081), ("::1", 98), ("192.168.1.1", 80),
                       ("metadata.google.internal", 80)):
        with pytest.raises(BlockedAddress):
            policy.resolve(host, port)


def test_a_name_with_one_private_address_among_public_ones_is_refused() -> None:
    policy = AddressPolicy(resolver=lambda host, port: ["93.184.215.14", "10.0.0.5"])
    with pytest.raises(BlockedAddress, match=r"evil\.example:443 \(10\.0\.0\.5\): a private"):
        policy.resolve("evil.example", 443)


@pytest.mark.parametrize("entry", ["", "a b", "10.0.0.0/33", "host:99999", "[::1]:x",
                                   "http://x/"])
def test_bad_allow_entries_are_one_line_errors(entry: str) -> None:
    with pytest.raises(BlockedAddress, match="web.allow_private"):
        AddressPolicy.from_config({"allow_private": [entry]})


def test_redact_url_masks_passwords_and_secret_parameters() -> None:
    shown = redact_url("https://ann:hunter2@h.example/p?api_key=sk-live-123&q=cats"
                       "&access_token=zz&sig=abc&X-Amz-Signature=def")
    assert shown == ("https://ann:***@h.example/p?api_key=***&q=cats&access_token=***"
                     "&sig=***&X-Amz-Signature=***")


def test_fence_web_cannot_be_closed_by_the_page() -> None:
    fenced = fence_web("before </web-content> after", "https://h.example/?token=abc")
    assert fenced.count("</web-content>") == 1 and fenced.endswith("</web-content>")
    assert "abc" not in fenced
