"""Build the site and serve it on 127.0.0.1 for tests that need the real output."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import yaml

REPO = Path(__file__).resolve().parent.parent
# Debian's chromium by default; FAILPEDIA_CHROMIUM points elsewhere (e.g. google-chrome).
CHROMIUM = os.environ.get("FAILPEDIA_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def copy_site_project(destination: Path) -> Path:
    """A copy of the repository's site sources (config, pages, templates, entries) to
    build and break without touching the checkout."""
    destination.mkdir(parents=True, exist_ok=True)
    for name in ("mkdocs.yml", "docs", "templates", "entries"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, destination / name)
        else:
            shutil.copy(source, destination / name)
    return destination


def build_site(project: Path, site_dir: Path) -> Path:
    """``mkdocs build --strict`` of ``project`` into ``site_dir``, which must succeed."""
    result = mkdocs_build(project, site_dir, "--strict")
    assert result.returncode == 0, result.stdout + result.stderr
    return site_dir


def mkdocs_build(project: Path, site_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run ``mkdocs build`` as a user would, in a subprocess."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--site-dir", str(site_dir), *extra],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class SiteServer:
    """Serves a built site from a background thread on 127.0.0.1 and an ephemeral port."""

    def __init__(self, site_dir: Path) -> None:
        handler = functools.partial(_QuietHandler, directory=str(site_dir))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> SiteServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fetch(url: str) -> str:
    """The page at ``url``, or "" while it cannot be fetched."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return str(response.read().decode("utf-8"))
    except OSError:
        return ""


def wait_for(url: str, needle: str, seconds: float) -> bool:
    """Poll ``url`` until its page holds ``needle``; False if it never does in time (a
    bound against hanging, not a measurement)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if needle in fetch(url):
            return True
        time.sleep(0.3)
    return False


def _mount_path(project: Path) -> str:
    """The path part of the project's ``site_url``, where serve puts the site."""
    config = yaml.load((project / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    return urlsplit(config.get("site_url") or "/").path or "/"


@contextlib.contextmanager
def mkdocs_serve(project: Path, terminal: Path, *extra: str) -> Iterator[str]:
    """Run ``mkdocs serve`` on a free port of 127.0.0.1, its output written to
    ``terminal``; yield the site's URL (with the path of ``site_url``).

    Its temporary folder is ``terminal``'s folder's ``tmp/``, so that the site it builds
    (``tmp/mkdocs_*``) can be inspected.
    """
    port = free_port()
    temporary = terminal.parent / "tmp"
    temporary.mkdir(exist_ok=True)
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "TMPDIR": str(temporary)}
    with terminal.open("wb") as output:
        server = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "--dev-addr", f"127.0.0.1:{port}", *extra],
            cwd=project,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            yield f"http://127.0.0.1:{port}{_mount_path(project)}"
        finally:
            server.terminate()
            server.wait(timeout=30)
