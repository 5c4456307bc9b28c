"""Reproducer for pip-no-matching-distribution.

`python repro.py`: a project's README says `pip install torch==1.13.1`, run with Python
3.11 or newer. torch publishes binary wheels only, one per CPython version, and 1.13.1
has wheels for CPython 3.7 to 3.10 only. pip skips every file whose tags do not match this
interpreter, finds no candidate, and stops with `ERROR: Could not find a version that
satisfies the requirement torch==1.13.1 (from versions: ...)` and
`ERROR: No matching distribution found for torch==1.13.1`; the list holds only the
releases that do have wheels for this Python.
`python repro.py --fixed`: the pin names a release built for this Python; pip resolves it.

Offline and without touching this environment: pip runs with `--dry-run
--ignore-installed --no-index` against a local folder holding metadata-only wheels whose
file names carry the tags of the real releases (`cp37` to `cp310` for 1.13.1).
"""

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

FIXED = "--fixed" in sys.argv[1:]
THIS_PYTHON = f"cp{sys.version_info.major}{sys.version_info.minor}"
LINUX = "manylinux2014_x86_64"

# (version, wheel tags): torch 1.13.1 shipped wheels for CPython 3.7 to 3.10 only
INDEX = [
    ("1.13.1", [f"cp{minor}-cp{minor}-{LINUX}" for minor in ("37", "38", "39", "310")]),
    ("2.12.0", [f"{THIS_PYTHON}-{THIS_PYTHON}-{LINUX}", f"{THIS_PYTHON}-none-any"]),
    ("2.13.0", [f"{THIS_PYTHON}-{THIS_PYTHON}-{LINUX}", f"{THIS_PYTHON}-none-any"]),
]

BROKEN_PIN = "torch==1.13.1"  # from a README written when Python 3.10 was current

# --- fix: start
# Pin a torch release that publishes wheels for the Python you run (torch 2.0 was the
# first for Python 3.11), or keep the old pin and create the environment with a Python
# that release supports (3.10 or older for torch 1.13).
FIXED_PIN = "torch==2.13.0"
# --- fix: end


def write_wheel(folder: Path, version: str, tag: str) -> None:
    """A wheel that holds only metadata: enough for pip to select it, nothing to import."""
    dist_info = f"torch-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n"
    wheel = f"Wheel-Version: 1.0\nGenerator: repro\nRoot-Is-Purelib: false\nTag: {tag}\n"
    record = f"{dist_info}/METADATA,,\n{dist_info}/WHEEL,,\n{dist_info}/RECORD,,\n"
    with zipfile.ZipFile(folder / f"torch-{version}-{tag}.whl", "w") as archive:
        archive.writestr(f"{dist_info}/METADATA", metadata)
        archive.writestr(f"{dist_info}/WHEEL", wheel)
        archive.writestr(f"{dist_info}/RECORD", record)


with tempfile.TemporaryDirectory(prefix="repro-pip-no-match-") as index:
    for version, tags in INDEX:
        for tag in tags:
            write_wheel(Path(index), version, tag)
    pin = FIXED_PIN if FIXED else BROKEN_PIN
    print(f"Python {sys.version_info.major}.{sys.version_info.minor}: $ pip install {pin}", flush=True)
    command = [
        sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-cache-dir",
        "--dry-run", "--ignore-installed", "--no-index", "--find-links", index, pin,
    ]
    # no pip configuration files or PIP_* settings of this machine: only the local folder
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    result = subprocess.run(command, env=env, timeout=120)
    sys.exit(result.returncode)
