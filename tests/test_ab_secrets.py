"""`hermes ab` and API keys: an arm never stores a literal key. A key written as a value
(on the command line or in a layer) is refused before anything is written, with the fix;
a key by reference (`${secret:NAME}`, in .env) runs, and is stored as the reference."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ok, refused, write_fake_provider
from fakellm import FakeLLM
from fakellm.by_model import answer, by_model

LITERAL = "sk-literal-arm-key-5678"
OTHER = "sk-other-key-4321"


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=by_model({"good": answer("The answer is 4."),
                                    "gpt-4o": answer("4")})) as fake:
        yield fake


@pytest.fixture
def configured(root: Path, llm: FakeLLM) -> Path:
    write_fake_provider(root, llm.openai_base_url)
    return root


def nothing_written(root: Path, llm: FakeLLM) -> bool:
    experiments = root / "experiments"
    return (not experiments.exists() or not any(experiments.iterdir())) and llm.requests == []


def test_a_literal_key_on_the_command_line_is_refused_before_anything_is_written(
        hermes, configured: Path, llm: FakeLLM) -> None:
    result = hermes("ab", "provider.model=good,gpt-4o", f"provider.api_key={LITERAL}",
                    "-q", "What is 2+2?")
    line = refused(result, "2 problems, nothing ran", "arm 1 (provider.model=good): ",
                   "provider.api_key: a literal secret given on the command line would be "
                   "stored with the experiment", "`hermes config set PROVIDER_API_KEY …`",
                   "provider.api_key='${secret:PROVIDER_API_KEY}'")
    assert LITERAL not in line + result.stdout
    assert nothing_written(configured, llm)
    swept = hermes("ab", f"provider.api_key={LITERAL},{OTHER}", "-q", "What is 2+2?")
    line = refused(swept, "arm 1 (provider.api_key=<redacted>)")
    assert LITERAL not in line and OTHER not in line and nothing_written(configured, llm)


def test_a_literal_key_in_the_profile_is_refused_before_anything_is_written(
        hermes, configured: Path, llm: FakeLLM) -> None:
    config = configured / "config.yaml"
    config.write_text(config.read_text() + f"  api_key: {LITERAL}\n")
    result = hermes("ab", "provider.model=good,gpt-4o", "-q", "What is 2+2?")
    line = refused(result, f"provider.api_key: a literal secret in profile ({config})",
                   "`hermes config set PROVIDER_API_KEY …`", "${secret:PROVIDER_API_KEY}")
    assert LITERAL not in line and nothing_written(configured, llm)


def test_a_key_by_reference_runs_with_it_and_is_stored_as_the_reference(
        hermes, configured: Path, llm: FakeLLM) -> None:
    ok(hermes("config", "set", "OTHER_API_KEY", OTHER))
    result = hermes("ab", "provider.model=good,gpt-4o", "provider.api_key=${secret:OTHER_API_KEY}",
                    "-q", "What is 2+2?")
    ok(result)
    eid = result.stderr.split("experiment ", 1)[1].split(":", 1)[0]
    assert "2 of 2 runs done" in result.stdout and "100% [" in result.stdout
    assert {r.headers.get("authorization") for r in llm.requests} == {f"Bearer {OTHER}"}
    for arm in (configured / "experiments" / eid / "arms").iterdir():
        text = arm.read_text()
        assert "api_key: ${secret:OTHER_API_KEY}" in text and OTHER not in text
    rerun = hermes("ab", "rerun", eid)
    assert "2 of 2 runs done" in ok(rerun)
    assert len(llm.requests) == 4 and \
        {r.headers.get("authorization") for r in llm.requests} == {f"Bearer {OTHER}"}


def test_with_several_profiles_the_fix_names_the_arms_profile(hermes, configured: Path,
                                                              llm: FakeLLM) -> None:
    work = configured / "profiles" / "work"
    write_fake_provider(work, llm.openai_base_url)
    (work / "config.yaml").write_text((work / "config.yaml").read_text() +
                                      f"  api_key: {LITERAL}\n")
    result = hermes("ab", "--profiles", "default,work", "-q", "What is 2+2?")
    line = refused(result, "1 problem, nothing ran", "arm 2 (work): provider.api_key: a "
                   f"literal secret in profile ({work / 'config.yaml'})",
                   "`hermes -p work config set PROVIDER_API_KEY …`")
    assert LITERAL not in line and nothing_written(configured, llm)
