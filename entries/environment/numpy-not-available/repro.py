"""Reproducer for numpy-not-available.

`python repro.py`: builds the environment a fresh `pip install torch` gives a job: torch
and the distributions its metadata requires, resolved from the installed metadata and
linked into a temporary folder. numpy is not among them (torch does not declare it). A
child interpreter that sees only that folder imports torch, which warns
`Failed to initialize NumPy: No module named 'numpy'`, then the job converts its
predictions with `tensor.numpy()` and fails with `RuntimeError: Numpy is not available`.
`python repro.py --fixed`: `python -m pip install numpy` installs numpy into that
environment, and the same job imports torch silently and converts tensors to arrays. The
check compares the array the job saved with the predictions computed here.

Nothing is downloaded: the environment is made of links to the packages already
installed for this interpreter, pip installs from a local wheel of the installed numpy
(rebuilt from its files), and everything is removed afterwards.
"""

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import torch

FIXED = "--fixed" in sys.argv[1:]

JOB = """
import sys

import torch

torch.manual_seed(0)
model = torch.nn.Linear(4, 2)
predictions = model(torch.randn(8, 4)).argmax(dim=1)
array = predictions.numpy()
print("predictions as an array:", array)
array.tofile(sys.argv[1])  # the job's output file
"""


def closure(requirements: list[str]) -> list[importlib.metadata.Distribution]:
    """The installed distributions `pip install <requirements>` would put in the environment."""
    seen: dict[str, importlib.metadata.Distribution] = {}
    todo = list(requirements)
    while todo:
        requirement = todo.pop()
        if "extra ==" in requirement:
            continue  # optional extras such as `torch[opt-einsum]`
        name = re.match(r"[A-Za-z0-9._-]+", requirement).group()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        try:
            distribution = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # a requirement for another platform or Python version
        seen[key] = distribution
        todo.extend(distribution.requires or [])
    return list(seen.values())


def build_environment(folder: str, requirements: list[str]) -> list[str]:
    """Link the top-level files of each distribution into `folder`; return their names."""
    names = []
    for distribution in closure(requirements):
        root = distribution.locate_file("")
        tops = {path.parts[0] for path in distribution.files or [] if path.parts[0] != ".."}
        for top in sorted(tops):
            source = os.path.join(root, top)
            target = os.path.join(folder, top)
            if os.path.exists(source) and not os.path.lexists(target):
                os.symlink(source, target)
        names.append(distribution.metadata["Name"])
    return names


def build_wheel(folder: str, name: str) -> None:
    """Pack the installed distribution `name` back into a wheel in `folder` (offline)."""
    distribution = importlib.metadata.distribution(name)
    dist_info = f"{distribution.metadata['Name']}-{distribution.version}.dist-info"
    tag = re.search(r"^Tag: (\S+)", distribution.read_text("WHEEL"), re.MULTILINE).group(1)
    root = distribution.locate_file("")
    files = [
        path for path in distribution.files or []
        if path.parts[0] != ".." and "__pycache__" not in path.parts
        and path.name not in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")
    ]
    wheel = os.path.join(folder, f"{distribution.metadata['Name']}-{distribution.version}-{tag}.whl")
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as archive:
        for path in files:
            archive.write(os.path.join(root, path), str(path))
        archive.writestr(f"{dist_info}/RECORD", "".join(f"{path},,\n" for path in files))


site = tempfile.mkdtemp(prefix="repro-numpy-env-")  # the job's fresh environment
wheels = tempfile.mkdtemp(prefix="repro-numpy-wheels-")  # stands in for the package index
installed = build_environment(site, ["torch"])  # what `pip install torch` puts there
print(f"job environment: {', '.join(sorted(installed, key=str.lower))}", flush=True)
build_wheel(wheels, "numpy")
# pip: install into the job's environment, from the local wheels only, no configuration
os.environ.update(PIP_TARGET=site, PIP_NO_INDEX="1", PIP_FIND_LINKS=wheels, PIP_CONFIG_FILE=os.devnull,
                  PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore")

if FIXED:
    # --- fix: start
    # torch's package metadata does not require numpy: install it next to torch, with the
    # interpreter that runs the job.  $ python -m pip install numpy
    subprocess.run([sys.executable, "-m", "pip", "install", "numpy"], check=True)
    # --- fix: end

predictions_file = os.path.join(wheels, "predictions.bin")
# -S: no site-packages of this interpreter; the job sees its environment and the
# standard library only, like a fresh virtual environment.
job_env = dict(os.environ, PYTHONPATH=site, PYTHONNOUSERSITE="1")
job = subprocess.run([sys.executable, "-S", "-c", JOB, predictions_file], env=job_env, timeout=120)
saved = np.fromfile(predictions_file, dtype=np.int64) if job.returncode == 0 else None
shutil.rmtree(site, ignore_errors=True)
shutil.rmtree(wheels, ignore_errors=True)

# --- check: start
torch.manual_seed(0)
model = torch.nn.Linear(4, 2)
expected = model(torch.randn(8, 4)).argmax(dim=1)  # the job's predictions, computed here
assert saved is not None, f"the job failed with exit code {job.returncode}"
np.testing.assert_array_equal(saved, expected.numpy())
print("check: the job's array equals the predictions computed here")
# --- check: end
