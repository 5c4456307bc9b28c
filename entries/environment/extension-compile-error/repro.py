"""Reproducer for extension-compile-error.

A project ships a C++ extension written for torch 1.4 and older: its input check uses the
`AT_CHECK` macro, which torch 1.5 removed in favour of `TORCH_CHECK`. Its `setup.py`
builds it with `torch.utils.cpp_extension.BuildExtension`, which writes a `build.ninja`
file and runs `ninja -v`. The compiler stops at the first use of the missing macro
(`error: 'AT_CHECK' was not declared in this scope`), ninja stops the build
(`ninja: build stopped: subcommand failed.`), and torch's builder raises its wrapper,
`RuntimeError: Error compiling objects for extension`, which names no cause: the cause is
the compiler's `error:` line above it.

Nothing is simulated: the compiler, ninja (pinned) and torch's builder run for real on
a `python setup.py build_ext --inplace` of the extension.

`python repro.py`: the build fails and the wrapper is the last line of the traceback.
`python repro.py --fixed`: the source uses `TORCH_CHECK`; the extension builds, imports,
and its result equals `torch.add(x, y, alpha=0.5)` exactly, and its check still refuses
tensors of different shapes.
"""

import glob
import importlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

import torch

FIXED = "--fixed" in sys.argv[1:]

# The extension's input check, as written for torch 1.4 and older.
CHECK = 'AT_CHECK(x.sizes() == y.sizes(), "scaled_add: x and y must have the same shape");'

if FIXED:
    # --- fix: start
    # Read the first `error:` line above the RuntimeError and fix what it names: torch
    # 1.5 removed AT_CHECK; TORCH_CHECK takes the same arguments.
    CHECK = 'TORCH_CHECK(x.sizes() == y.sizes(), "scaled_add: x and y must have the same shape");'
    # --- fix: end

SOURCE = r"""
#include <torch/extension.h>

torch::Tensor scaled_add(torch::Tensor x, torch::Tensor y, double alpha) {
  CHECK_LINE
  return x + alpha * y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scaled_add", &scaled_add); }
""".replace("CHECK_LINE", CHECK)

SETUP = """
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name="scaled_add_ext",
    ext_modules=[CppExtension("scaled_add_ext", ["scaled_add.cpp"])],
    cmdclass={"build_ext": BuildExtension},
)
"""

project = tempfile.mkdtemp(prefix="repro-extension-")
try:
    with open(os.path.join(project, "scaled_add.cpp"), "w") as handle:
        handle.write(SOURCE)
    with open(os.path.join(project, "setup.py"), "w") as handle:
        handle.write(SETUP)
    # ninja comes from the environment's scripts folder, where `pip install ninja` puts it.
    env = dict(os.environ, MAX_JOBS="1")
    env["PATH"] = sysconfig.get_path("scripts") + os.pathsep + env.get("PATH", os.defpath)
    build = subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    # The whole build log: the compiler's output, ninja's, then torch's traceback.
    print(build.stdout, flush=True)
    if build.returncode != 0:
        raise SystemExit(f"python setup.py build_ext failed (exit {build.returncode})")
    ninja_files = glob.glob(os.path.join(project, "build", "*", "build.ninja"))
    print("extension built by ninja:", ninja_files != [], flush=True)

    sys.path.insert(0, project)
    scaled_add_ext = importlib.import_module("scaled_add_ext")  # the module just built

    x = torch.randn(4, 5, dtype=torch.float64)
    y = torch.randn(4, 5, dtype=torch.float64)
    out = scaled_add_ext.scaled_add(x, y, 0.5)

    # --- check: start
    torch.testing.assert_close(out, torch.add(x, y, alpha=0.5), rtol=0, atol=0)
    try:
        scaled_add_ext.scaled_add(x, torch.zeros(3), 0.5)
    except RuntimeError as error:
        assert "must have the same shape" in str(error), error
    else:
        raise AssertionError("the shape check did not run")
    print("check: the extension built and equals torch.add(x, y, alpha=0.5); it refuses other shapes")
    # --- check: end
finally:
    shutil.rmtree(project, ignore_errors=True)
