"""Reproducer for pip-build-isolation-no-torch.

A package with a C++ torch extension (`fusedops`) builds it from a `setup.py` that
imports torch at its top, as most such projects do (`from torch.utils.cpp_extension
import BuildExtension, CppExtension`). Its `pyproject.toml` names only setuptools as a
build requirement. `pip install` builds it in an isolated environment (PEP 517 build
isolation): a fresh folder holding only the declared build requirements, not the
packages installed beside pip. Running `setup.py` there to get the build requirements
fails with `ModuleNotFoundError: No module named 'torch'`, and pip stops with
`× Getting requirements to build wheel did not run successfully.`, although torch is
installed.

`python repro.py`: `pip install` of the package, offline (`--no-index`, with setuptools
from the wheel CPython 3.11 ships in `ensurepip`, the one local wheel the isolated build
needs), fails as above.
`python repro.py --fixed`: the same command with `--no-build-isolation`: pip builds in the
current environment, with its torch and setuptools; the extension compiles, installs, and
the check compares its op with the same computation in torch.

Needs a C++ compiler; the fixed build takes 30 to 90 s. The pip release is the
environment's own (the output names it).
"""

import ensurepip
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

FIXED = "--fixed" in sys.argv[1:]

SETUP_PY = """\
import torch  # the build needs torch's headers and BuildExtension
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name="fusedops",
    version="0.1.0",
    ext_modules=[CppExtension("fusedops", ["fusedops.cpp"])],
    cmdclass={"build_ext": BuildExtension},
)
"""

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"
"""

SOURCE = r"""
#include <torch/extension.h>

// out = a + alpha * b
torch::Tensor scaled_add(torch::Tensor a, torch::Tensor b, double alpha) {
  TORCH_CHECK(a.sizes() == b.sizes(), "scaled_add: shapes differ");
  return a + alpha * b;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scaled_add", &scaled_add); }
"""

work = Path(tempfile.mkdtemp(prefix="repro-build-isolation-"))
try:
    package = work / "fusedops"
    package.mkdir()
    (package / "setup.py").write_text(SETUP_PY)
    (package / "pyproject.toml").write_text(PYPROJECT)
    (package / "fusedops.cpp").write_text(SOURCE)

    # The local wheels an offline install may use: setuptools, from CPython's ensurepip.
    wheelhouse = work / "wheels"
    wheelhouse.mkdir()
    bundled = sorted((Path(ensurepip.__file__).parent / "_bundled").glob("setuptools-*.whl"))
    if not bundled:
        raise SystemExit("this Python's ensurepip ships no setuptools wheel (Python 3.12+)")
    shutil.copy2(bundled[-1], wheelhouse)

    target = work / "site"
    command = [
        sys.executable, "-m", "pip", "install", "--no-index", "--find-links", str(wheelhouse),
        "--no-cache-dir", "--target", str(target), str(package),
    ]  # fmt: skip
    # No pip configuration of this machine (extra indexes, constraints) takes part.
    env = {name: value for name, value in os.environ.items() if not name.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    if FIXED:
        # --- fix: start
        # Build in this environment, which has torch, instead of an isolated one:
        #   $ python -m pip install --no-build-isolation ./fusedops
        command.insert(command.index("install") + 1, "--no-build-isolation")
        # --- fix: end

    pip_version = subprocess.run(
        [sys.executable, "-m", "pip", "--version"], capture_output=True, text=True, env=env
    ).stdout.split(" from ")[0]
    print(f"torch {torch.__version__} is installed; {pip_version}", flush=True)
    print("$ python -m pip install " + " ".join(command[4:]), flush=True)
    install = subprocess.run(command, capture_output=True, text=True, env=env)
    sys.stdout.write(install.stdout)
    sys.stdout.flush()
    sys.stderr.write(install.stderr)
    sys.stderr.flush()
    if install.returncode != 0:
        raise SystemExit(f"pip install failed (exit {install.returncode})")

    # --- check: start
    sys.path.insert(0, str(target))
    fusedops = importlib.import_module("fusedops")  # the module pip just built and installed

    torch.manual_seed(0)
    a, b = torch.randn(64, 32), torch.randn(64, 32)
    torch.testing.assert_close(fusedops.scaled_add(a, b, 0.5), a + 0.5 * b)
    assert Path(fusedops.__file__).is_relative_to(target), fusedops.__file__
    print("check: the extension pip built imports and computes a + 0.5 * b as torch does")
    # --- check: end
finally:
    shutil.rmtree(work, ignore_errors=True)
