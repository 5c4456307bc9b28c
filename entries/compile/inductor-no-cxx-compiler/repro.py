"""Reproducer for inductor-no-cxx-compiler.

`python repro.py`: simulates a slim container image: PATH holds no C++ compiler. A
model compiled with `torch.compile` (default backend, inductor) runs on CPU; inductor
generates C++ kernels, searches `torch._inductor.config.cpp.cxx` for a compiler
to build them, finds none and raises `InvalidCxxCompiler` on the first call.
`python repro.py --fixed`: before compiling, a working compiler is made visible to
inductor (its folder on PATH and its path in `cpp.cxx`); the model compiles and runs. On a
machine with no compiler at all it falls back to `backend="aot_eager"`, which needs none.
"""

import os
import shutil
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]

work = tempfile.mkdtemp(prefix="repro-no-cxx-")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(work, "inductor-cache")

# The simulated slim image: nothing on PATH, so no g++. The real PATH stands for the
# folders where installing a compiler (`apt-get install g++`) would put one.
INSTALLED_TOOLCHAIN_PATH = os.environ.get("PATH") or os.defpath
empty_bin = os.path.join(work, "bin")
os.makedirs(empty_bin)
os.environ["PATH"] = empty_bin

import torch  # noqa: E402
import torch._inductor.config  # noqa: E402

print("torch", torch.__version__, "| cpp.cxx =", torch._inductor.config.cpp.cxx)
backend = "inductor"

# --- fix: start
def make_cxx_visible(toolchain_path: str) -> str:
    """Point inductor at a C++ compiler that runs; fall back to a backend that needs none."""
    for name in ("g++", "clang++", "c++"):
        cxx = shutil.which(name, path=toolchain_path)
        if cxx:
            # g++ itself finds `as` and `ld` through PATH, so put its folder there too.
            os.environ["PATH"] = os.path.dirname(cxx) + os.pathsep + os.environ["PATH"]
            torch._inductor.config.cpp.cxx = (cxx,)
            print("inductor will build its kernels with", cxx)
            return "inductor"
    print("no C++ compiler installed: using backend='aot_eager' (no fused kernels)")
    return "aot_eager"
# --- fix: end

if FIXED:
    backend = make_cxx_visible(INSTALLED_TOOLCHAIN_PATH)

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)).eval()
compiled = torch.compile(model, backend=backend)

try:
    with torch.no_grad():
        out = compiled(torch.randn(8, 16))  # inductor compiles on this first call
    print("compiled model ran: output", tuple(out.shape), "with backend", repr(backend))
finally:
    shutil.rmtree(work, ignore_errors=True)
