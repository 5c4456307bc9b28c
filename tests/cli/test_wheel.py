"""The wheel works away from the repository: diagnose and explain from the shipped index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from diagnose_helpers import CORPUS, essence, run_diagnose
from sitebuild import REPO

# Builds a wheel and installs it in a fresh virtual environment.
pytestmark = pytest.mark.slow


def test_wheel_diagnoses_and_explains_outside_the_repository(tmp_path: Path) -> None:
    # Nothing of the checkout may leak into the clean environment.
    clean = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--wheel-dir",
            str(wheels),
            str(REPO),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    [wheel] = wheels.glob("failpedia-*.whl")
    environment = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(environment)
    python = environment / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)],
        capture_output=True,
        text=True,
        timeout=900,
        env=clean,
    )
    assert install.returncode == 0, install.stderr
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    command = [str(environment / "bin" / "failpedia")]
    log = CORPUS / "ddp-dataloader-oom.log"
    installed = run_diagnose("--json", str(log), cwd=outside, command=command, env=clean)
    assert installed.returncode == 0, installed.stderr.decode()
    from_repo = run_diagnose("--json", str(log))
    assert essence(json.loads(installed.stdout)) == essence(json.loads(from_repo.stdout))
    # The wheel carries the compiled log reader (this machine has a C compiler).
    assert json.loads(installed.stdout)["warnings"] == [], installed.stderr.decode()
    explained = subprocess.run(
        [*command, "explain", "dataloader-worker-killed-by-signal"],
        cwd=outside,
        capture_output=True,
        text=True,
        timeout=120,
        env=clean,
    )
    assert explained.returncode == 0, explained.stderr
    assert "DataLoader worker (pid N) is killed by signal" in explained.stdout
    assert "is killed by signal: Bus error. It is possible" in explained.stdout
    assert "https://failpedia.github.io/failpedia/data/dataloader-worker-killed-by-signal/" in (
        explained.stdout
    )
    unknown = subprocess.run(
        [*command, "explain", "dataloader-worker-killed"],
        cwd=outside,
        capture_output=True,
        text=True,
        timeout=120,
        env=clean,
    )
    assert unknown.returncode == 2
    assert "did you mean dataloader-worker-killed-by-signal" in unknown.stderr
    # The release workflow's check of every wheel it builds: diagnose, explain by id and by
    # message, and the hook under a raised exception.
    released = subprocess.run(
        [str(python), str(REPO / "scripts" / "check_installed_wheel.py")],
        cwd=outside,
        capture_output=True,
        text=True,
        timeout=900,
        env=clean,
    )
    assert released.returncode == 0, released.stderr
