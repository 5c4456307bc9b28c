"""Reproducer for ninja-required.

The machine: `ninja` was installed with pip (`pip install ninja`), which put the
executable in the Python environment's scripts folder, but the job runs that Python by
its full path with a PATH that lacks the folder (a virtual environment not activated, a
Slurm or cron script, a notebook kernel). The script gives the job a PATH on which no `ninja`
can be found (each PATH folder that holds one is replaced by links to everything else in
it, so the compiler stays reachable); torch's own check then runs for real.

`python repro.py`: `torch.utils.cpp_extension.load` of a tiny C++ operator runs
`ninja --version`, finds no ninja, and raises `RuntimeError: Ninja is required to load
C++ extensions`.
`python repro.py --fixed`: the environment's scripts folder (where pip put `ninja`) is
put on PATH; the extension builds with ninja, and its result equals torch's own.
"""

import atexit
import os
import shutil
import sys
import sysconfig
import tempfile

import torch

FIXED = "--fixed" in sys.argv[1:]

# The machine: the job's PATH reaches no ninja. Each PATH folder that holds one is
# replaced by a folder of links to everything else in it (the C++ compiler, the
# assembler, the linker stay reachable), as on a machine where ninja was never installed
# system-wide and pip's copy sits in a folder the PATH lacks.
MACHINE = tempfile.mkdtemp(prefix="repro-path-")
atexit.register(shutil.rmtree, MACHINE, ignore_errors=True)
path = []
for index, folder in enumerate(os.environ.get("PATH", os.defpath).split(os.pathsep)):
    if os.path.isfile(os.path.join(folder, "ninja")):
        without = os.path.join(MACHINE, str(index))
        os.mkdir(without)
        for name in os.listdir(folder):
            if name != "ninja":
                os.symlink(os.path.join(folder, name), os.path.join(without, name))
        folder = without
    path.append(folder)
os.environ["PATH"] = os.pathsep.join(path)

if FIXED:
    # --- fix: start
    # Put the environment's scripts folder, where `pip install ninja` put the
    # executable, on PATH (what activating the environment does).
    os.environ["PATH"] = sysconfig.get_path("scripts") + os.pathsep + os.environ["PATH"]
    # --- fix: end

from torch.utils import cpp_extension  # noqa: E402

SOURCE = """
#include <torch/extension.h>

torch::Tensor scaled_add(torch::Tensor x, torch::Tensor y, double alpha) {
  return x + alpha * y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scaled_add", &scaled_add); }
"""

with tempfile.TemporaryDirectory(prefix="repro-ninja-") as build:
    source = os.path.join(build, "scaled_add.cpp")
    with open(source, "w") as handle:
        handle.write(SOURCE)
    print("ninja available:", cpp_extension.is_ninja_available())
    module = cpp_extension.load(
        name="scaled_add_ext", sources=[source], build_directory=build, verbose=False
    )
    x = torch.randn(4, 5, dtype=torch.float64)
    y = torch.randn(4, 5, dtype=torch.float64)
    out = module.scaled_add(x, y, 0.5)
    print("extension result:", tuple(out.shape))

    # --- check: start
    assert os.path.isfile(os.path.join(build, "build.ninja"))  # built by ninja
    torch.testing.assert_close(out, torch.add(x, y, alpha=0.5), rtol=0, atol=0)
    print("check: the C++ operator built with ninja and equals torch.add(x, y, alpha=0.5)")
    # --- check: end
