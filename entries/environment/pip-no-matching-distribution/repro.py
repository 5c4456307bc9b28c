"""Reproducer for pip-no-matching-distribution.

`python repro.py`: a project's README says `pip install torch==1.13.1`, run with Python
3.11 or newer. torch publishes binary wheels only, one per CPython version, and 1.13.1
has wheels for CPython 3.7 to 3.10 only. pip skips every file whose tags do not match this
interpreter, finds no candidate, and stops with `ERROR: Could not find a version that
satisfies the requirement torch==1.13.1 (from versions: ...)` and
`ERROR: No matching distribution found for torch==1.13.1`; the list holds only the
releases that do have wheels for this Python.
`python repro.py --fixed`: `python -m pip install torch==2.13.0`, a release built for this
Python; pip resolves and installs it. The check reads the installed torch's wheel tags.

Offline and without touching this environment: pip installs into a temporary folder
(`PIP_TARGET`) from a local folder (`PIP_NO_INDEX`, `PIP_FIND_LINKS`) holding
metadata-only wheels whose file names carry the tags of the real releases (`cp37` to
`cp310` for 1.13.1).
"""

import importlib.metadata
import os
import shutil
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


index = tempfile.mkdtemp(prefix="repro-pip-no-match-index-")  # stands in for PyPI
target = tempfile.mkdtemp(prefix="repro-pip-no-match-env-")  # the environment pip installs into
for version, tags in INDEX:
    for tag in tags:
        write_wheel(Path(index), version, tag)
# pip: the local index only, no configuration of this machine, install into `target`
os.environ.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=index, PIP_TARGET=target, PIP_CONFIG_FILE=os.devnull,
                  PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore")

pip_install = [sys.executable, "-m", "pip", "install", "torch==1.13.1"]  # a README written for Python 3.10

if FIXED:
    # --- fix: start
    # Pin a torch release that publishes wheels for the Python you run (torch 2.0 was the
    # first for Python 3.11), or keep the old pin and create the environment with a Python
    # that release supports (3.10 or older for torch 1.13).  $ python -m pip install torch==2.13.0
    pip_install = [sys.executable, "-m", "pip", "install", "torch==2.13.0"]
    # --- fix: end

print(f"Python {sys.version_info.major}.{sys.version_info.minor}: $ python {' '.join(pip_install[1:])}", flush=True)
result = subprocess.run(pip_install, timeout=120)
installed = {dist.metadata["Name"]: (dist.version, dist.read_text("WHEEL")) for dist in importlib.metadata.distributions(path=[target])}
shutil.rmtree(index, ignore_errors=True)
shutil.rmtree(target, ignore_errors=True)

# --- check: start
assert result.returncode == 0, f"pip failed with exit code {result.returncode}"
torch_version, torch_wheel_tags = installed["torch"]
assert f"Tag: {THIS_PYTHON}-" in torch_wheel_tags, torch_wheel_tags  # a build for this interpreter
print(f"check: torch {torch_version} is installed, built for {THIS_PYTHON}")
# --- check: end
