"""`mkdocs serve` rebuilds the site when an entry file changes."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from sitebuild import REPO

# Starts mkdocs serve and waits for rebuilds.
pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode("utf-8")
    except OSError:
        return ""


def _wait_for(url: str, needle: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if needle in _fetch(url):
            return True
        time.sleep(0.5)
    return False


def test_serve_rebuilds_when_an_entry_changes(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "mkdocs.yml", project / "mkdocs.yml")
    for name in ("docs", "templates", "entries"):
        shutil.copytree(REPO / name, project / name)
    entry = project / "entries/compile/dynamo-recompile-limit/entry.yaml"
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "--dev-addr", f"127.0.0.1:{port}"],
        cwd=project,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/failpedia/compile/dynamo-recompile-limit/"
        assert _wait_for(url, "Quick answer", 90), "serve did not come up"
        text = entry.read_text(encoding="utf-8")
        entry.write_text(text.replace("Dynamo compiled the same", "Zq7 edited: compiled"))
        assert _wait_for(url, "Zq7 edited", 90), "the page was not rebuilt after the edit"
    finally:
        server.terminate()
        server.wait(timeout=30)
