"""Reproducer for inductor-no-cxx-compiler.

`python repro.py`: simulates a slim container image: PATH holds no C++ compiler. A
model compiled with `torch.compile` (default backend, inductor) runs on CPU; inductor
generates C++ kernels, searches `torch._inductor.config.cpp.cxx` for a compiler
to build them, finds none and raises `InvalidCxxCompiler` on the first call.
`python repro.py --fixed`: before compiling, the installed g++ is made visible to
inductor (its folder on PATH and its path in `cpp.cxx`); inductor builds its C++ kernels
and the compiled model's output equals eager output.
"""

import atexit
import os
import shutil
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]

work = tempfile.mkdtemp(prefix="repro-no-cxx-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(work, "inductor-cache")

# The simulated slim image: nothing on PATH, so no g++. The real PATH stands for the
# folders where installing a compiler (`apt-get install g++`) would put one.
INSTALLED_TOOLCHAIN_PATH = os.environ.get("PATH") or os.defpath
empty_bin = os.path.join(work, "bin")
os.makedirs(empty_bin)
os.environ["PATH"] = empty_bin

import torch  # noqa: E402
import torch._inductor.config  # noqa: E402
import torch._inductor.metrics  # noqa: E402

print("torch", torch.__version__, "| cpp.cxx =", torch._inductor.config.cpp.cxx)

if FIXED:
    # --- fix: start
    # g++ is installed but not on this process's PATH: put its folder on PATH (g++ finds
    # `as` and `ld` there too) and name it in inductor's compiler search.
    cxx = shutil.which("g++", path=INSTALLED_TOOLCHAIN_PATH)
    if cxx is None:
        raise SystemExit("no g++ installed: apt-get install g++ (or build-essential)")
    os.environ["PATH"] = os.path.dirname(cxx) + os.pathsep + os.environ["PATH"]
    torch._inductor.config.cpp.cxx = (cxx,)
    # --- fix: end

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)).eval()
compiled = torch.compile(model)  # default backend: inductor
x = torch.randn(8, 16)
with torch.no_grad():
    out = compiled(x)  # inductor generates and builds its C++ kernels on this first call
    expected = model(x)
print("compiled model ran: output", tuple(out.shape))

# --- check: start
built = torch._inductor.metrics.generated_kernel_count
assert built > 0, "inductor built no C++ kernel"
torch.testing.assert_close(out, expected)
print(f"check: inductor built {built} C++ kernel(s); compiled output equals eager output")
# --- check: end
