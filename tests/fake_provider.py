"""A home pointed at the fake LLM (tests/fakellm) as a custom OpenAI-compatible provider:
for the tests (through conftest) and the benchmarks, which run without pytest."""

from __future__ import annotations

from pathlib import Path


def write_fake_provider(home: Path, base_url: str, **settings: object) -> None:
    """Point a home at the fake LLM as a custom OpenAI-compatible provider."""
    import yaml

    home.mkdir(parents=True, exist_ok=True)
    provider = {"model": "gpt-4o", "api_base": base_url, "retry_backoff": 0, "max_retries": 1,
                "timeout": 10} | settings
    config = {"defaults": [{"override provider": "custom"}], "provider": provider}
    (home / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (home / ".env").write_text("CUSTOM_API_KEY=sk-fake-test-key-1234\n")
    (home / ".env").chmod(0o600)
