"""The built book, served on 127.0.0.1 and driven by headless Debian Chromium.

These tests read the HTML that a book build wrote, so they run AFTER the build:
``make browser`` (part of ``make test``, after the book build) sets
``LIVINGDICT_BROWSER=1``; without it the folder is not collected (``pytest tests``
runs before the book exists). Environment:

- ``LIVINGDICT_HTML``: the built HTML to test (default ``<repo>/_build/html``);
  screenshots go to its sibling ``screenshots/`` (``_build/screenshots/``).
- ``LIVINGDICT_REQUIRE_TOOLS=1`` (set by ``.ci/run``): a missing Chromium fails
  instead of skipping.
- ``LIVINGDICT_CHROMIUM``: the browser binary (default ``/usr/bin/chromium``; never a
  browser that a tool downloads for itself).
- Chromium resolves no host but the local server's (``--host-resolver-rules``):
  the book is served whole, MathJax too (vendored in ``book/_ext/static``), and
  a request to another host is a test failure, never a download.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import bookconfig  # tests/: on sys.path through tests/conftest.py
import pytest

if not os.environ.get("LIVINGDICT_BROWSER"):
    collect_ignore_glob = ["test_*.py"]

CHROMIUM = os.environ.get("LIVINGDICT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002
        pass

    def do_GET(self) -> None:  # noqa: N802
        # the browser's own request (no page asks for it): no content, as
        # a host without a favicon would answer, not a 404 the test counts
        if self.path == "/favicon.ico":
            self.send_response(204)
            self.end_headers()
            return
        super().do_GET()


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    """Base URL of the built book served from a thread on a free local port."""
    root = bookconfig.built_html()
    if not (root / "search.html").is_file():
        pytest.fail(
            f"no built book at {root}: run `make book` (or set LIVINGDICT_HTML)"
        )
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).is_file():
        message = f"Chromium not found at {CHROMIUM} (Debian: apt-get install -y chromium)"
        if os.environ.get("LIVINGDICT_REQUIRE_TOOLS"):
            pytest.fail(message + "; LIVINGDICT_REQUIRE_TOOLS is set")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    folder = bookconfig.built_html().parent / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
