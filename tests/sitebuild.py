"""Build the site and serve it on 127.0.0.1 for tests that need the real output."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

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
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
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
