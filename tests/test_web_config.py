"""The ``web`` config group through the real CLI: default, switching, explain, bad values."""

from __future__ import annotations

import pytest

from conftest import ok, refused

BACKENDS = ("ddgs", "searxng", "brave", "tavily", "exa", "firecrawl", "none")


def test_ddgs_is_the_default_and_every_key_has_its_documented_value(hermes) -> None:
    assert ok(hermes("config", "explain", "web")).splitlines()[0] == "web = ddgs"
    expected = {"web.backend": "ddgs", "web.max_results": "5", "web.max_chars": "40000",
                "web.summarize_over": "12000", "web.model": "null", "web.allow_private": "[]",
                "web.cache_ttl": "1h", "web.timeout": "20", "web.max_bytes": "5000000",
                "web.max_redirects": "5"}
    for key, value in expected.items():
        assert ok(hermes("config", "get", key)).strip() == value, key


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_backend_option_composes_and_names_itself(hermes, backend: str) -> None:
    ok(hermes("config", "set", "web", backend))
    assert ok(hermes("config", "get", "web.backend")).strip() == backend
    ok(hermes("config", "validate"))


def test_a_key_is_referenced_never_shown(hermes) -> None:
    ok(hermes("config", "set", "web", "brave"))
    ok(hermes("config", "set", "BRAVE_API_KEY", "BSA-secret-value-123"))
    shown = ok(hermes("config", "show"))
    assert "BSA-secret-value-123" not in shown
    assert "BSA-secret-value-123" not in ok(hermes("config", "explain", "web.api_key"))


def test_an_existing_profile_without_web_still_composes(hermes, root) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text("defaults:\n  - override toolsets: coding\n")
    ok(hermes("config", "validate"))
    assert ok(hermes("config", "get", "web.backend")).strip() == "ddgs"


@pytest.mark.parametrize(("key", "value", "fragments"), [
    ("web.backend", "bravo", ("web.backend", "'bravo' is not one of", 'did you mean "brave"',
                              "a plugin's is named plugin:NAME")),
    # the shared builtin-or-plugin check printed a literal {value!r} before
    ("environment.kind", "dokker", ("environment.kind", "'dokker' is not one of")),
    ("web.allow_private", "foo bar", ("web.allow_private.0", "'foo bar' is no host",
                                      "127.0.0.1:8080")),
    ("web.allow_private", "10.0.0.1:99999", ("web.allow_private.0",)),
    ("web.cache_ttl", "soon", ("web.cache_ttl", "expected a duration")),
    ("web.timeout", "0", ("web.timeout", "greater than 0")),
    ("web.max_results", "30", ("web.max_results", "less than or equal to 20")),
    ("web.max_results", "true", ("web.max_results", "expected a number")),
])
def test_a_bad_value_is_one_line_naming_the_key(hermes, root, key: str, value: str,
                                                fragments: tuple[str, ...]) -> None:
    refused(hermes("config", "set", key, value), *fragments)
    assert not (root / "config.yaml").exists()


def test_base_url_must_be_http(hermes) -> None:
    ok(hermes("config", "set", "web", "searxng"))
    refused(hermes("config", "set", "web.base_url", "ftp://search.example"),
            "web.base_url", "is no http(s) URL")
    ok(hermes("config", "set", "web.base_url", "http://localhost:8888/"))
    assert ok(hermes("config", "get", "web.base_url")).strip() == "http://localhost:8888/"


def test_allow_private_takes_hosts_addresses_ranges_and_ports(hermes) -> None:
    entries = "127.0.0.1:8080,10.0.0.0/8,[fd00::1]:443,fd00::/8,intranet.example,localhost:3000"
    ok(hermes("config", "set", "web.allow_private", entries))
    ok(hermes("config", "validate", "web.cache_ttl=0"))
