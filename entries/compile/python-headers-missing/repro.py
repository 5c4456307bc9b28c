"""Reproducer for python-headers-missing.

`python repro.py`: simulates a Python installed without its development headers (a
distribution's `python3.X` package without `python3.X-dev`, a slim image): a Python prefix
whose standard library is the real one but whose `include/python3.X/` folder is absent, so
`sysconfig.get_path("include")` names a folder with no `Python.h`. A model compiled with
`torch.compile` (default backend, inductor) runs on CPU in that Python; inductor generates
C++ kernels with Python bindings (`#include <Python.h>`), and g++ stops with
`fatal error: Python.h: No such file or directory`.
`python repro.py --fixed`: the headers are installed into that prefix first (what
`apt-get install python3.X-dev` does for the system Python); inductor builds its kernels
and the compiled model's output equals eager output.
"""

import atexit
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

import torch

FIXED = "--fixed" in sys.argv[1:]

work = tempfile.mkdtemp(prefix="repro-python-h-")
atexit.register(shutil.rmtree, work, ignore_errors=True)

# A Python prefix without development headers: the interpreter's standard library (and
# lib-dynload) under lib/, no include/ folder. The child process runs the real interpreter
# with PYTHONHOME pointing here, so sysconfig reports <prefix>/include/python3.X.
version = f"python{sys.version_info.major}.{sys.version_info.minor}"
prefix = os.path.join(work, "python-prefix")
os.makedirs(os.path.join(prefix, "lib"))
os.symlink(os.path.dirname(os.__file__), os.path.join(prefix, "lib", version))
include_dir = os.path.join(prefix, "include", version + sys.abiflags)
HEADERS_PACKAGE = sysconfig.get_path("include")  # what the -dev package installs

if FIXED:
    # --- fix: start
    # Install the development headers for this Python: on Debian/Ubuntu
    # `apt-get install python3.X-dev` (here, the same files copied into the prefix).
    if not os.path.exists(os.path.join(HEADERS_PACKAGE, "Python.h")):
        raise SystemExit("no Python headers to install: apt-get install python3-dev")
    shutil.copytree(HEADERS_PACKAGE, include_dir)
    # --- fix: end

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)).eval()
x = torch.randn(8, 16)
model_path = os.path.join(work, "model.pt")
out_path = os.path.join(work, "compiled-out.pt")
torch.save({"model": model, "x": x}, model_path)

CHILD = """
import sys, sysconfig, torch, torch._inductor.config, torch._inductor.metrics
torch._inductor.config.compile_threads = 1
print("child python: sys.prefix =", sys.prefix, "| include =", sysconfig.get_path("include"))
saved = torch.load(sys.argv[1], weights_only=False)
compiled = torch.compile(saved["model"])  # default backend: inductor
with torch.no_grad():
    out = compiled(saved["x"])  # inductor generates and builds its C++ kernels here
torch.save({"out": out, "kernels": torch._inductor.metrics.generated_kernel_count}, sys.argv[2])
print("compiled model ran: output", tuple(out.shape))
"""
env = dict(
    os.environ,
    PYTHONHOME=prefix,
    PYTHONPATH=os.pathsep.join(p for p in sys.path if p),  # site-packages, torch included
    TORCHINDUCTOR_CACHE_DIR=os.path.join(work, "inductor-cache"),
)
child = subprocess.run([sys.executable, "-c", CHILD, model_path, out_path, *sys.argv[1:]], env=env)
if child.returncode != 0:
    sys.exit(child.returncode)

# --- check: start
result = torch.load(out_path)
assert result["kernels"] > 0, "inductor built no C++ kernel"
with torch.no_grad():
    expected = model(x)
torch.testing.assert_close(result["out"], expected)
print(f"check: inductor built {result['kernels']} C++ kernel(s); compiled output equals eager output")
# --- check: end
