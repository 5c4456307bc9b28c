"""Reproducer for pip-resolution-impossible.

`python repro.py`: `pip install torch==2.13.0 torchvision==0.29.0`.
torchvision releases are built for exactly one torch release and say so in their metadata
(`torchvision 0.29.0` requires `torch==2.14.0`), so pip's resolver finds no set of versions
that satisfies both pins and stops with `ERROR: Cannot install ... because these package
versions have conflicting dependencies.` and `ERROR: ResolutionImpossible`.
`python repro.py --fixed`: the pins name the torchvision release built for torch 2.13
(`torchvision==0.28.0`); pip resolves the set.

Offline and without touching this environment: pip runs with `--dry-run --ignore-installed
--no-index` against a local folder of metadata-only wheels whose `Requires-Dist: torch==...`
lines are those of the real torchvision 0.28.0 and 0.29.0 wheels (their numpy and pillow
requirements are left out, as they play no part in the conflict).
"""

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

FIXED = "--fixed" in sys.argv[1:]

# (name, version, requirements) as published; torchvision pins the torch it was built for
INDEX = [
    ("torch", "2.13.0", []),
    ("torch", "2.14.0", []),
    ("torchvision", "0.28.0", ["torch==2.13.0"]),
    ("torchvision", "0.29.0", ["torch==2.14.0"]),
]

BROKEN_PINS = ["torch==2.13.0", "torchvision==0.29.0"]  # torchvision bumped alone

# --- fix: start
# Pin torch and torchvision as a pair from the compatibility table
# (torch 2.13 <-> torchvision 0.28), or pin torch alone and leave torchvision unpinned
# so that pip picks the release that matches it.
FIXED_PINS = ["torch==2.13.0", "torchvision==0.28.0"]
# --- fix: end


def write_wheel(folder: Path, name: str, version: str, requires: list[str]) -> None:
    """A wheel that holds only metadata: enough for pip to resolve, nothing to import."""
    dist_info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {requirement}\n" for requirement in requires)
    wheel = "Wheel-Version: 1.0\nGenerator: repro\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = f"{dist_info}/METADATA,,\n{dist_info}/WHEEL,,\n{dist_info}/RECORD,,\n"
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as archive:
        archive.writestr(f"{dist_info}/METADATA", metadata)
        archive.writestr(f"{dist_info}/WHEEL", wheel)
        archive.writestr(f"{dist_info}/RECORD", record)


with tempfile.TemporaryDirectory(prefix="repro-pip-resolution-") as index:
    for name, version, requires in INDEX:
        write_wheel(Path(index), name, version, requires)
    pins = FIXED_PINS if FIXED else BROKEN_PINS
    print("$ pip install " + " ".join(pins), flush=True)
    command = [
        sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-cache-dir",
        "--dry-run", "--ignore-installed", "--no-index", "--find-links", index, *pins,
    ]
    # no pip configuration files or PIP_* settings of this machine: only the local folder
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    result = subprocess.run(command, env=env, timeout=120)
    sys.exit(result.returncode)
