"""Reproducer for pip-resolution-impossible.

`python repro.py`: `pip install torch==2.13.0 torchvision==0.29.0`.
Each torchvision release is built for one torch release, and 0.29.0's metadata says so
(`Requires-Dist: torch (==2.14.0)`), so pip's resolver finds no set of versions
that satisfies both pins and stops with `ERROR: Cannot install ... because these package
versions have conflicting dependencies.` and `ERROR: ResolutionImpossible`.
`python repro.py --fixed`: `python -m pip install torch==2.13.0 torchvision==0.28.0`, the
torchvision release built for torch 2.13; pip resolves and installs the set. The check
reads the installed versions and torchvision's torch requirement.

Offline and without touching this environment: pip installs into a temporary folder
(`PIP_TARGET`) from a local folder (`PIP_NO_INDEX`, `PIP_FIND_LINKS`) of metadata-only
wheels whose `Requires-Dist: torch==...` lines are those of the real torchvision 0.28.0
and 0.29.0 wheels (their numpy and pillow requirements are left out, as they play no part
in the conflict).
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

# (name, version, requirements) as published; torchvision pins the torch it was built for
INDEX = [
    ("torch", "2.13.0", []),
    ("torch", "2.14.0", []),
    ("torchvision", "0.28.0", ["torch==2.13.0"]),
    ("torchvision", "0.29.0", ["torch==2.14.0"]),
]

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


index = tempfile.mkdtemp(prefix="repro-pip-resolution-index-")  # stands in for PyPI
target = tempfile.mkdtemp(prefix="repro-pip-resolution-env-")  # the environment pip installs into
for name, version, requires in INDEX:
    write_wheel(Path(index), name, version, requires)
# pip: the local index only, no configuration of this machine, install into `target`
os.environ.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=index, PIP_TARGET=target, PIP_CONFIG_FILE=os.devnull,
                  PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore")

# torchvision bumped alone: 0.29.0 is built for torch 2.14
pip_install = [sys.executable, "-m", "pip", "install", "torch==2.13.0", "torchvision==0.29.0"]

if FIXED:
    # --- fix: start
    # Pin torch and torchvision as a pair from the compatibility table (torch 2.13 <->
    # torchvision 0.28), or pin torch alone and leave torchvision unpinned so that pip
    # picks the release that matches it.
    # $ python -m pip install torch==2.13.0 torchvision==0.28.0
    pip_install = [sys.executable, "-m", "pip", "install", "torch==2.13.0", "torchvision==0.28.0"]
    # --- fix: end

print("$ python " + " ".join(pip_install[1:]), flush=True)
result = subprocess.run(pip_install, timeout=120)
installed = {
    dist.metadata["Name"]: (dist.version, dist.requires or [])
    for dist in importlib.metadata.distributions(path=[target])
}
shutil.rmtree(index, ignore_errors=True)
shutil.rmtree(target, ignore_errors=True)

# --- check: start
assert result.returncode == 0, f"pip failed with exit code {result.returncode}"
torch_version, _ = installed["torch"]
torchvision_version, torchvision_requires = installed["torchvision"]
assert torch_version == "2.13.0"  # the torch the project is written for
assert f"torch=={torch_version}" in torchvision_requires  # a torchvision built for that torch
print(f"check: torch {torch_version} with torchvision {torchvision_version}, which requires exactly that torch")
# --- check: end
