"""The README's "Web, browser and images" section runs as written, in a real shell, against
the fakes: a search backend picked and keyed with its two commands, then a one-shot that
searches (the profile's own ``conf/web/brave.yaml`` points Brave at the fake service, as
the Config section describes profile-local options); ``web.allow_private``; a browser the
user runs (``cdp``), started by the README's own line and driven by a one-shot; the
browser's ``persist``; an image attached to a one-shot; ``vision.model``."""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

import images
from chromium_support import chromium_path
from conftest import write_fake_provider
from fake_search import FakeSearch, Hit
from fakellm import FakeLLM, Reply, ToolCall
from nobody_support import NOBODY
from readme_support import bash, code_blocks, commands, section
from webpages import WebPages, webpages  # noqa: F401 — the fixture

SECTION = "## Web, browser and images"
CDP = "http://127.0.0.1:9222"


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(strict=False) as fake:
        yield fake


def block_with(text: str, heading: str = SECTION) -> list[str]:
    [block] = [b for b in code_blocks(section(heading)) if text in b]
    return commands(block)


def config_show(environ: dict[str, str], cwd: Path) -> dict:
    return yaml.safe_load(bash(environ, "hermes config show", cwd))


def tool_results(llm: FakeLLM) -> list[dict]:
    return [json.loads(m["content"]) for m in llm.requests[-1].body["messages"]
            if m.get("role") == "tool"]


def test_picking_a_search_backend_runs_as_written(environ: dict[str, str], root: Path,
                                                  llm: FakeLLM, tmp_path: Path) -> None:
    from hermes.config.layers import packaged_conf_dir

    pick, key, ask = block_with("BRAVE_API_KEY")
    assert pick == "hermes config set web brave" and ask.startswith("hermes -z ")
    write_fake_provider(root, llm.openai_base_url)
    hit = Hit("Retries — fetchkit docs", "https://docs.fetchkit.example/retries",
              "Retry(attempts=3) by default")
    with FakeSearch("brave", key="your-brave-api-key", hits=[hit]) as brave:
        option = yaml.safe_load((packaged_conf_dir() / "web" / "brave.yaml").read_text())
        (root / "conf" / "web").mkdir(parents=True)
        (root / "conf" / "web" / "brave.yaml").write_text(
            yaml.safe_dump(option | {"base_url": brave.base_url}))
        llm.push(Reply(tool_calls=[ToolCall("web_search", {"query": "fetchkit retries"})]),
                 Reply(text="https://docs.fetchkit.example/retries"))
        out = bash(environ, "\n".join([pick, key, ask]), tmp_path)
    assert out.strip().endswith("https://docs.fetchkit.example/retries")
    assert config_show(environ, tmp_path)["web"]["backend"] == "brave"
    assert (root / ".env").stat().st_mode & 0o777 == 0o600
    [seen] = brave.requests
    assert seen.headers["x-subscription-token"] == "your-brave-api-key"
    [found] = tool_results(llm)
    assert [r["url"] for r in found["results"]] == [hit.url]


def test_allow_private_runs_as_written(environ: dict[str, str], tmp_path: Path) -> None:
    [line] = block_with("web.allow_private")
    bash(environ, line, tmp_path)
    assert config_show(environ, tmp_path)["web"]["allow_private"] == [
        "intranet.example", "10.0.0.0/8", "127.0.0.1:8080", "[::1]:9000"]


def test_a_search_proxy_runs_as_written(environ: dict[str, str], root: Path, llm: FakeLLM,
                                       tmp_path: Path) -> None:
    """The proxy line as written; ddgs then goes through it: no Tor runs here, so the
    search fails in one line naming the proxy."""
    [line] = block_with("web.proxy")
    write_fake_provider(root, llm.openai_base_url)
    llm.push(Reply(tool_calls=[ToolCall("web_search", {"query": "fetchkit retries"})]),
             Reply(text="no search"))
    bash(environ, "\n".join([line, 'hermes -z "find the docs for fetchkit retries"']), tmp_path)
    assert config_show(environ, tmp_path)["web"]["proxy"] == "socks5h://127.0.0.1:9150"
    [found] = tool_results(llm)
    assert "through the proxy 127.0.0.1:9150" in json.dumps(found)


def test_persist_runs_as_written(environ: dict[str, str], tmp_path: Path) -> None:
    [line] = block_with("browser.persist")
    bash(environ, line, tmp_path)
    assert config_show(environ, tmp_path)["browser"]["persist"] is True


@pytest.fixture
def user_dir() -> Iterator[Path]:
    """A home for the tests' ordinary user on a path that user can reach (pytest's own
    temporary directories are root's, 0700)."""
    path = Path(tempfile.mkdtemp(prefix="hermes-readme-web-", dir="/var/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def as_user(environ: dict[str, str], home: Path) -> tuple[list[str], dict[str, str]]:
    """How to run the README's browser line as the tests' ordinary user: Chromium refuses
    root without ``--no-sandbox``, which the line, written for people, leaves out."""
    env = environ | {"HOME": str(home)}
    if os.geteuid() != 0:
        return [], env
    for path in [home, *home.rglob("*")]:
        os.chown(path, 65534, 65534)
    return NOBODY, env


def wait_for_devtools(deadline: float) -> None:
    while True:
        try:
            with urllib.request.urlopen(f"{CDP}/json/version", timeout=2) as answer:
                assert "Browser" in json.loads(answer.read())
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.mark.chromium
def test_a_browser_the_user_runs_is_driven_as_written(
        environ: dict[str, str], root: Path, llm: FakeLLM, user_dir: Path, tmp_path: Path,
        webpages: WebPages) -> None:  # noqa: F811
    chromium_path()
    start, pick, url = block_with("--remote-debugging-port")
    home = user_dir / "user"
    home.mkdir()
    prefix, env = as_user(environ, home)
    log = user_dir / "browser.log"  # the browser keeps it open: no pipe to wait on
    with log.open("w") as out:
        browser = subprocess.Popen([*prefix, "bash", "-euo", "pipefail", "-c", start],
                                   env=env, cwd=home, start_new_session=True, stdout=out,
                                   stderr=out)
    try:
        assert browser.wait(timeout=60) == 0, log.read_text()
        write_fake_provider(root, llm.openai_base_url)
        bash(environ, "\n".join([pick, url]), tmp_path)
        wait_for_devtools(time.monotonic() + 30)
        form = webpages.url("/form")
        llm.push(Reply(tool_calls=[ToolCall("browser_navigate", {"url": form})]),
                 Reply(tool_calls=[ToolCall("browser_snapshot", {})]), Reply(text="seen"))
        answer = bash(environ, f"hermes -z 'open the form' "
                               f"'web.allow_private=[\"{webpages.allow}\"]'", tmp_path)
        assert answer.strip() == "seen"
        shown = config_show(environ, tmp_path)["browser"]
        assert (shown["backend"], shown["cdp_url"]) == ("cdp", CDP)
        navigated, snapshot = tool_results(llm)
        assert navigated.get("status") == 200, navigated
        assert "[ref=e" in json.dumps(snapshot)
        # the user's browser still runs (Hermes closed only its own context)
        wait_for_devtools(time.monotonic() + 5)
    finally:
        os.killpg(browser.pid, signal.SIGTERM)


def test_attaching_an_image_runs_as_written(environ: dict[str, str], root: Path,
                                            llm: FakeLLM, tmp_path: Path) -> None:
    attach, vision = block_with("--image") + block_with("vision.model")
    chart, raw = images.png(4, 3), images.JPEG
    (tmp_path / "chart.png").write_bytes(chart)
    (tmp_path / "raw.jpg").write_bytes(raw)
    write_fake_provider(root, llm.openai_base_url)
    llm.push(Reply(text="the y axis starts at 40"))
    assert bash(environ, attach, tmp_path).strip() == "the y axis starts at 40"
    assert images.wire_images(llm.requests[-1]) == [
        ("image/png", base64.b64encode(chart).decode()),
        ("image/jpeg", base64.b64encode(raw).decode())]
    bash(environ, vision, tmp_path)
    assert config_show(environ, tmp_path)["vision"]["model"] == "gpt-4o-mini"
