"""Reproducer for numpy-not-available.

`python repro.py`: builds the environment a fresh `pip install torch` gives a job: torch
and the distributions its metadata requires, resolved from the installed metadata and
linked into a temporary folder. numpy is not among them (torch does not declare it). A
child interpreter that sees only that folder imports torch, which warns
`Failed to initialize NumPy: No module named 'numpy'`, then the job converts its
predictions with `tensor.numpy()` and fails with `RuntimeError: Numpy is not available`.
`python repro.py --fixed`: the job's requirements name numpy next to torch (what
`python -m pip install numpy` does for that interpreter), so the same child imports torch
silently and converts tensors to arrays.

Nothing is installed or downloaded: the environment is made of links to the packages
already installed for this interpreter, and removed afterwards.
"""

import importlib.metadata
import os
import re
import subprocess
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]

BARE_REQUIREMENTS = ["torch"]  # what a bare `pip install torch` puts in a fresh environment

# --- fix: start
# Declare numpy yourself: torch's package metadata does not require it, so
# `pip install torch` (or a requirements file listing only torch) leaves it out.
REQUIREMENTS_WITH_NUMPY = ["torch", "numpy"]
# --- fix: end

REQUIREMENTS = REQUIREMENTS_WITH_NUMPY if FIXED else BARE_REQUIREMENTS

JOB = """
import torch

torch.manual_seed(0)
model = torch.nn.Linear(4, 2)
predictions = model(torch.randn(8, 4)).argmax(dim=1)
print("predictions as an array:", predictions.numpy())
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


with tempfile.TemporaryDirectory(prefix="repro-numpy-env-") as site:
    installed = build_environment(site, REQUIREMENTS)
    print(f"job environment: {', '.join(sorted(installed, key=str.lower))}", flush=True)
    # -S: no site-packages of this interpreter; the job sees the folder above and the
    # standard library only, like a fresh virtual environment.
    env = dict(os.environ, PYTHONPATH=site, PYTHONNOUSERSITE="1")
    job = subprocess.run([sys.executable, "-S", "-c", JOB], env=env, timeout=120)
    sys.exit(job.returncode)
