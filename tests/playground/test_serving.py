"""The playground is served only when asked for (A2A_PLAYGROUND=true, `./dev serve`), and a
door without it loads nothing of it: not the module, not the files."""

from __future__ import annotations

import dataclasses

from starlette.testclient import TestClient

from http_service.app import create_app
from tests.support.harness import ANON, memory_operations


def test_off_by_default_the_page_is_not_there() -> None:
    client = TestClient(create_app(memory_operations(settings=ANON)))
    assert client.get("/playground").status_code == 404
    assert client.get("/playground/app.js").status_code == 404


def test_on_the_page_and_its_files_are_served_with_a_policy_that_keeps_them_home() -> None:
    settings = dataclasses.replace(ANON, playground=True,
                                   public_url="http://127.0.0.1:8000/a2a")
    client = TestClient(create_app(memory_operations(settings=settings)))
    page = client.get("/a2a/playground")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert 'data-endpoint="/a2a"' in page.text and 'src="/a2a/playground/app.js"' in page.text
    policy = page.headers["content-security-policy"]
    assert "connect-src 'self'" in policy and "default-src 'none'" in policy
    assert client.get("/a2a/playground/app.js").headers["content-type"].startswith(
        "text/javascript")
    assert client.get("/a2a/playground/style.css").status_code == 200
    assert client.get("/a2a/playground/other.js").status_code != 200
