"""The dashboard's Config page over real HTTP and in the real Chromium: every key with the
layer and file that set it (as ``hermes config explain``), an edit refused with
``hermes config set``'s own line and nothing written, a valid edit written and shown with
its layer and file, a system-layer key read-only, secrets only ever set/unset, a POST
without the anti-CSRF token refused, a profile's token kept off another profile's config,
and the sandbox as ``hermes sandbox explain`` prints it."""

from __future__ import annotations

import html
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from conftest import write_fake_provider
from dashboard_support import Dashboard, browser_page, csrf_of, dashboard_for, screenshot
from hermes.dashboard.tokens import Tokens

SECRET = "sk-fake-test-key-1234"  # write_fake_provider's CUSTOM_API_KEY
OTHER_SECRET = "wx-weather-secret-98765"
LITERAL_SECRET = "sk-literal-in-a-file-4321"


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """default on a custom provider (CUSTOM_API_KEY in .env), one more .env secret, a
    literal secret in config.yaml, and a system layer setting display.show_cost; work."""
    system = tmp_path_factory.mktemp("system")
    (system / "config.yaml").write_text("display:\n  show_cost: true\n")

    def prepare(environ: dict[str, str]) -> None:
        home = Path(environ["HOME"]) / ".hermes"
        write_fake_provider(home, "http://127.0.0.1:9/v1")
        with (home / ".env").open("a") as env:
            env.write(f"WEATHER_API_KEY={OTHER_SECRET}\n")
        config = yaml.safe_load((home / "config.yaml").read_text())
        config["provider"]["api_key"] = LITERAL_SECRET
        (home / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        environ["HERMES_CONFIG_LAYERS"] = str(system)

    with dashboard_for(tmp_path_factory.mktemp("board"), profiles=("work",),
                       prepare=prepare) as running:
        yield running


def config_file(board: Dashboard, profile: str = "default") -> Path:
    home = board.root if profile == "default" else board.root / "profiles" / profile
    return home / "config.yaml"


def hermes(board: Dashboard, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "hermes", *args], env=board.environ,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def row_of(text: str, key: str) -> str:
    """The table row of ``key`` in a page's HTML."""
    start = text.index(f'id="key-{key}"')
    return text[start:text.index("</tr>", start)]


def test_every_key_shows_the_layer_and_file_config_explain_names(board: Dashboard) -> None:
    with board.client() as client:
        page = client.get("/p/default/config")
    assert page.status_code == 200, page.text
    text = html.unescape(page.text)
    explained = hermes(board, "config", "explain", "provider.model").splitlines()
    assert explained[1] == f"  set by: profile ({config_file(board)})"
    model = row_of(text, "provider.model")
    assert "gpt-4o" in model and ">profile<" in model and str(config_file(board)) in model
    assert "group option provider/custom" in model  # what it overrode
    assert "schema default" in row_of(text, "agent.max_iterations") or \
        "packaged" in row_of(text, "agent.max_iterations")
    assert "custom" in row_of(text, "provider") and "read-only" not in model
    sandbox = hermes(board, "sandbox", "explain").splitlines()[0]
    assert sandbox in text


@pytest.mark.chromium
def test_an_edit_is_refused_with_the_reason_shown_and_the_file_unchanged(
        board: Dashboard, chromium: str) -> None:
    before = config_file(board).read_bytes()
    with browser_page(chromium, board) as page:
        page.goto(board.url("/p/default/config"))
        page.fill("#set-key", "agent.max_iterations")
        page.fill("#set-value", "lots")
        page.click("button:text-is('Set')")
        alert = page.inner_text(".config-error")
        assert alert == (f"profile ({config_file(board)}): agent.max_iterations: input should "
                         "be a valid integer, unable to parse string as an integer, got 'lots'")
        assert page.input_value("#set-value") == "lots"  # kept for the fix
        screenshot(page, "config")
        assert config_file(board).read_bytes() == before

        page.fill("#set-value", "17")
        page.click("button:text-is('Set')")
        assert "agent.max_iterations = 17" in page.inner_text(".config-done")
        row = page.locator("#key-agent\\.max_iterations")
        assert "17" in row.inner_text() and str(config_file(board)) in row.inner_text()
        assert "profile" in row.inner_text()
    assert yaml.safe_load(config_file(board).read_text())["agent"]["max_iterations"] == 17


def test_a_system_layer_key_is_read_only(board: Dashboard) -> None:
    before = config_file(board).read_bytes()
    with board.client() as client:
        page = client.get("/p/default/config")
        row = row_of(page.text, "display.show_cost")
        assert "read-only" in row and "edit" not in row.split("read-only")[1]
        refused = client.post("/p/default/config", data={
            "csrf_token": csrf_of(page.text), "key": "display.show_cost", "value": "false"})
    assert refused.status_code == 400
    said = html.unescape(refused.text)
    assert "set by the read-only system layer system" in said
    assert "--force" not in said and "HERMES_CONFIG_LAYERS" in said
    assert config_file(board).read_bytes() == before


def test_a_secret_never_appears_in_any_response(board: Dashboard) -> None:
    env = board.root / ".env"
    bodies = []
    with board.client() as client:
        page = client.get("/p/default/config")
        csrf = csrf_of(page.text)
        bodies += [page.text, client.get("/p/default/config?key=provider.api_key").text,
                   client.get("/p/default/config?key=CUSTOM_API_KEY&value=x").text,
                   client.get("/p/default/config?q=api_key").text]
        secret_edit = client.post("/p/default/config", data={
            "csrf_token": csrf, "key": "NEW_API_KEY", "value": "nw-new-secret-55555"})
        assert secret_edit.status_code == 303
        bodies += [secret_edit.headers["location"],
                   client.get(secret_edit.headers["location"]).text]
        refused = client.post("/p/default/config", data={
            "csrf_token": csrf, "key": "provider.api_key.bad", "value": "rf-refused-77777"})
        assert refused.status_code == 400
        bodies.append(refused.text)
    assert "NEW_API_KEY=nw-new-secret-55555" in env.read_text()
    assert "<em>set</em>" in row_of(bodies[0], "provider.api_key")
    assert "CUSTOM_API_KEY" in bodies[0] and "WEATHER_API_KEY" in bodies[0]
    for body in bodies:
        for secret in (SECRET, OTHER_SECRET, LITERAL_SECRET, "nw-new-secret-55555",
                       "rf-refused-77777"):
            assert secret not in body


def test_a_post_without_the_anti_csrf_token_is_refused(board: Dashboard) -> None:
    before = config_file(board).read_bytes()
    with board.client() as client:
        for data in ({}, {"csrf_token": "wrong"}):
            answer = client.post("/p/default/config",
                                 data=data | {"key": "agent.max_iterations", "value": "3"})
            assert answer.status_code == 403, answer.text
    assert config_file(board).read_bytes() == before


def test_a_profiles_token_cannot_change_another_profiles_config(board: Dashboard) -> None:
    before = config_file(board).read_bytes()
    as_work = {"Authorization": f"Bearer {Tokens(board.root).profile_token('work')}"}
    with board.client(logged_in=False) as client:
        assert client.get("/p/default/config", headers=as_work).status_code == 403
        answer = client.post("/p/default/config", headers=as_work,
                             data={"key": "agent.max_iterations", "value": "4"})
        assert answer.status_code == 403, answer.text
        own = client.post("/p/work/config", headers=as_work,
                          data={"key": "agent.max_iterations", "value": "5"})
        assert own.status_code == 303, own.text
    assert config_file(board).read_bytes() == before
    assert yaml.safe_load(config_file(board, "work").read_text())["agent"] == {
        "max_iterations": 5}


def test_unset_falls_back_to_the_lower_layer(board: Dashboard) -> None:
    with board.client() as client:
        csrf = csrf_of(client.get("/p/default/config").text)
        assert client.post("/p/default/config", data={
            "csrf_token": csrf, "key": "memory.recall_limit", "value": "9"}).status_code == 303
        row = row_of(client.get("/p/default/config").text, "memory.recall_limit")
        assert "<code>9</code>" in row and "/unset" in row
        unset = client.post("/p/default/config/unset",
                            data={"csrf_token": csrf, "key": "memory.recall_limit"})
        assert unset.status_code == 303, unset.text
        row = row_of(html.unescape(client.get(unset.headers["location"]).text),
                     "memory.recall_limit")
        assert "<code>5</code>" in row and "/unset" not in row and ">profile<" not in row
        again = client.post("/p/default/config/unset",
                            data={"csrf_token": csrf, "key": "memory.recall_limit"})
        assert again.status_code == 400
        assert "not set in this profile" in html.unescape(again.text)
    assert "recall_limit" not in config_file(board).read_text()
