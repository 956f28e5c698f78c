"""The README's Dashboard line for Docker (``docker run ... -p 127.0.0.1:9119:9119 ...
dashboard --host 0.0.0.0``, then ``docker logs``) against the image: the URL in the logs
opens it from the host, a foreign ``Host`` is refused, ``docker stop`` ends it cleanly
(exit 0). Its name, volume and host port are the test's own (9119 may be taken here).
Reuses the session's image of tests/test_image.py (marked ``image``: a real dockerd)."""

from __future__ import annotations

import re

import httpx
import pytest

from conftest import wait_until
from image_support import docker, inspect, published_port
from readme_support import section
from test_image import image, names, source, unique  # noqa: F401

pytestmark = [pytest.mark.image, pytest.mark.timeout(1500)]

URL = re.compile(r"http://(\w{20,}\.localhost):9119(/p/default/profiles\?token=\S+)")
"""On the token's secret name, which the browser resolves to the host's loopback."""


def test_the_dashboard_answers_the_port_published_on_loopback(
        image: str, names: list[str]) -> None:  # noqa: F811
    volume, name = unique("vol", names), unique("dashboard", names)
    written = re.search(r"`(docker run -d [^`]+)`, then\s+`docker logs hermes-dashboard`",
                        section("## Dashboard"))
    assert written, "the README's Docker line"
    ours = {"hermes-dashboard": name, "127.0.0.1:9119:9119": "127.0.0.1::9119",
            "hermes-data:/home/hermes/.hermes": f"{volume}:/home/hermes/.hermes",
            "hermes:latest": image}
    words = [ours.get(word, word) for word in written[1].split()]
    assert words[:2] == ["docker", "run"] and len(set(words) & set(ours.values())) == 4
    docker(*words[1:])
    # the Host header below is what a browser sends through -p 127.0.0.1:9119:9119
    found = wait_until(lambda: URL.search(docker("logs", name).stdout), 60, "the URL")
    assert isinstance(found, re.Match)
    port = published_port(name, 9119)
    as_published = {"Host": f"{found[1]}:9119"}
    with httpx.Client(timeout=10) as browser:
        plain = browser.get(f"http://127.0.0.1:{port}{found[2]}",
                            headers={"Host": "127.0.0.1:9119"})
        assert plain.status_code == 303 and plain.headers["location"] == found[0]
        page = browser.get(f"http://127.0.0.1:{port}{found[2]}", headers=as_published,
                           follow_redirects=False)
        assert page.status_code == 303 and "hermes_dashboard_9119" in page.headers["set-cookie"]
        opened = browser.get(f"http://127.0.0.1:{port}/p/default/profiles",
                             headers=as_published)
        assert opened.status_code == 200 and "Profiles" in opened.text
        rebound = browser.get(f"http://127.0.0.1:{port}/p/default/profiles",
                              headers={"Host": "attacker.example:9119"})
        assert rebound.status_code == 403
    docker("stop", "-t", "20", name)
    assert inspect(name)["State"]["ExitCode"] == 0
    assert "hermes dashboard: stopped" in docker("logs", name).stdout
