"""The README's Dashboard section runs as written, in a real shell: each line of its ``sh``
block starts a dashboard (or sets its port), the printed URL is opened with curl as a
browser would (the token becomes a cookie and leaves the address), Ctrl-C stops it, a
port in use is one line and exit status 2; its ``nix`` block evaluates to the unit.

The lines use the fixed port 9119 (and 9200): each test runs in a network namespace of
its own (bubblewrap ``--unshare-net``, its own loopback), so nothing else on the machine
can hold those ports, nor see the dashboards."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hermes.dashboard.tokens import label_of
from readme_support import code_blocks, commands, on_path, section
from test_nix import command_of, evaluate, nixpkgs_lib, two_profiles  # noqa: F401

SECTION = "## Dashboard"
OWN_NETWORK = ["bwrap", "--dev-bind", "/", "/", "--unshare-net", "--die-with-parent", "--"]
SERVE = r"""
set -m  # each line its own job, as typed at a prompt: Ctrl-C (SIGINT) reaches it
serve() {  # $1: a README line; $2: a name for its files. Its URL, the page, its exit
  bash -c "$1" > "$2.out" 2> "$2.err" & local pid=$! url=""
  for _ in $(seq 400); do
    url=$(grep -Eo 'http://[^ ]+token=[^ ]+' "$2.out" || true)
    [ -n "$url" ] || ! kill -0 $pid 2>/dev/null && break
    sleep 0.05
  done
  echo "$2 url $url"
  echo "$2 got $(curl -s -c "$2.jar" -b "$2.jar" -L -o "$2.html" \
    -w '%{http_code} %{url_effective}' "$url")"
  echo "$2 default $(curl -s -b "$2.jar" -o /dev/null -w '%{http_code}' \
    "${url%%/p/*}/p/default/profiles")"
  if [ -n "${3:-}" ]; then
    bash -c "$3" > "$2.second" 2>&1 && echo "$2 second 0" || echo "$2 second $?"
  fi
  kill -INT $pid; wait $pid && echo "$2 exit 0" || echo "$2 exit $?"
}
"""


@pytest.fixture(scope="module")
def lines() -> list[str]:
    [block] = code_blocks(section(SECTION))
    return commands(block)


def in_own_network(environ: dict[str, str], script: str, cwd: Path) -> dict[str, str]:
    """``script`` (after ``SERVE``) in a strict bash with a loopback of its own: the
    ``name what value`` lines it printed."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    done = subprocess.run([*OWN_NETWORK, "bash", "-euo", "pipefail", "-c", SERVE + script],
                          env=on_path(environ), cwd=cwd, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return {f"{name} {what}": value for name, what, value in
            (line.split(" ", 2) for line in done.stdout.splitlines() if line.count(" ") >= 2)}


def test_the_block_is_the_four_lines_run_here(lines: list[str]) -> None:
    assert lines == ["hermes dashboard", "hermes -p work dashboard",
                     "hermes dashboard --port 0", "hermes config set dashboard.port 9200"]


def test_hermes_dashboard_prints_the_url_that_opens_it(
        environ: dict[str, str], root: Path, tmp_path: Path, lines: list[str]) -> None:
    plain = lines[0]
    hermes(environ, "profile create work")
    seen = in_own_network(environ, f"serve '{plain}' plain '{plain}'", tmp_path)
    token = (root / "dashboard" / "token").read_text().strip()
    assert (root / "dashboard" / "token").stat().st_mode & 0o777 == 0o600
    # on the token's secret name, which curl (as browsers) resolves to loopback itself
    at = f"http://{label_of(token)}.localhost:9119"
    assert seen["plain url"] == f"{at}/p/default/profiles?token={token}"
    # the token became the session's cookie and left the address
    assert seen["plain got"] == f"200 {at}/p/default/profiles"
    assert 'href="/p/work/profiles"' in (tmp_path / "plain.html").read_text()
    assert seen["plain default"] == "200"
    # a second one on the same port: one line, exit status 2
    assert seen["plain second"] == "2"
    second = (tmp_path / "plain.second").read_text()
    assert second.count("\n") == 1 and "cannot listen on 127.0.0.1:9119" in second, second
    assert seen["plain exit"] == "0"  # Ctrl-C stops it
    assert "hermes dashboard: stopped" in (tmp_path / "plain.out").read_text()
    assert not any(token in log.read_text(errors="replace") for log in root.rglob("*.log"))


def test_a_profile_s_url_opens_that_profile_only(
        environ: dict[str, str], root: Path, tmp_path: Path, lines: list[str]) -> None:
    scoped = lines[1]
    hermes(environ, "profile create work")
    seen = in_own_network(environ, f"serve '{scoped}' scoped", tmp_path)
    token = (root / "profiles" / "work" / "dashboard" / "profile-token").read_text().strip()
    at = f"http://{label_of(token)}.localhost:9119"
    assert seen["scoped url"] == f"{at}/p/work/profiles?token={token}"
    assert seen["scoped got"] == f"200 {at}/p/work/profiles"
    assert seen["scoped default"] == "403"
    assert token != (root / "dashboard" / "token").read_text().strip()


def test_any_free_port_and_the_port_setting(
        environ: dict[str, str], tmp_path: Path, lines: list[str]) -> None:
    plain, _, any_port, set_port = lines
    seen = in_own_network(environ, f"""
serve '{any_port}' any
{set_port} > /dev/null
serve '{plain}' moved
""", tmp_path)
    free = re.fullmatch(r"http://\w{20,}\.localhost:(\d+)/p/default/profiles\?token=\S+",
                        seen["any url"])
    assert free and int(free[1]) not in (0, 9119) and seen["any got"].startswith("200 ")
    at = seen["moved url"].partition("/p/")[0]
    assert at.endswith(".localhost:9200") and at == seen["any url"].rpartition(":")[0] + ":9200"
    assert seen["moved got"] == f"200 {at}/p/default/profiles"


def hermes(environ: dict[str, str], command: str) -> None:
    subprocess.run(["bash", "-c", f"hermes {command}"], env=on_path(environ), check=True,
                   capture_output=True)


def test_the_readme_nixos_block_makes_the_unit(nixpkgs_lib: str) -> None:  # noqa: F811
    [block] = code_blocks(section(SECTION), "nix")
    body = block.strip().removeprefix("services.hermes-agent.")
    deployed = evaluate(nixpkgs_lib, two_profiles(extra=body))
    assert deployed["failedAssertions"] == []
    unit = deployed["units"]["hermes-agent-dashboard"]
    assert command_of(unit)[1:] == ["dashboard", "--no-open", "--host", "127.0.0.1",
                                    "--port", "9119"]
    assert deployed["firewall"] == []
