"""Shared helpers for the runner's tests: copy a fixture project, run ``failpedia verify``
on it as a user does, and look for processes a reproducer left behind.

``tests/fixtures/runner`` holds reproducers that behave one ordinary way each;
``tests/fixtures/hostile`` holds reproducers that attack the machine that runs them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from helpers import TESTS_DIR

RUNNER_FIXTURE = TESTS_DIR / "fixtures" / "runner"
HOSTILE_FIXTURE = TESTS_DIR / "fixtures" / "hostile"
LINUX = sys.platform.startswith("linux")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def copy_project(destination: Path, fixture: Path = RUNNER_FIXTURE) -> Path:
    """Copy a fixture project into ``destination/project`` as a git repository."""
    root = destination / "project"
    shutil.copytree(fixture, root, ignore=shutil.ignore_patterns("__pycache__"))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fixture")
    return root


def verify_command(root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "failpedia.cli", "--root", str(root), "verify", *args]


def verify(
    root: Path, *args: str, extra_env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **(extra_env or {})}
    return subprocess.run(
        verify_command(root, *args),
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def processes_with(marker: str) -> list[int]:
    """Live (non-zombie) processes whose command line holds ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            command = Path(f"/proc/{name}/cmdline").read_bytes()
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in command and state != "Z":
            found.append(int(name))
    return found


def wait_for_processes(marker: str, count: int, seconds: float = 30.0) -> list[int]:
    """Poll until exactly ``count`` processes hold ``marker`` (0: all gone); return them."""
    deadline = time.monotonic() + seconds
    while True:
        found = processes_with(marker)
        if len(found) == count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)
