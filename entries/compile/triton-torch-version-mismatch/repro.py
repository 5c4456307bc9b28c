"""Reproducer for triton-torch-version-mismatch.

`python repro.py`: triton 2.3.1 (the release torch 2.3.1 pinned), left from an older
install, comes first on the import path, ahead of the triton 3.7.1 that torch 2.13.0
pins: its folder is put at the head of `sys.path`, where `PYTHONPATH`, a `pip install
--user` or a Triton source tree in the working folder would put it (`pip install
triton==2.3.1` over the pinned release gives torch the same import). torch 2.13.0, here a CPU build, imports
it as soon as `torch.compile` loads Dynamo and inductor: torch/_inductor/runtime/hints.py
runs `import triton.backends.compiler`, a package Triton 2.x does not have, and
`torch.compile` fails with `ModuleNotFoundError: No module named 'triton.backends'`.
`python repro.py --fixed`: the stale copy is taken off the path, so `import triton` finds
the release torch pins. Inductor builds its C++ kernels for the CPU and the compiled
model's output equals eager output.
"""

import atexit
import os
import shutil
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]

work = tempfile.mkdtemp(prefix="repro-triton-mismatch-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(work, "inductor-cache")

# The machine's state: triton 2.3.1 ahead of the pinned triton on the import path. It is
# installed apart (reproducer.private_requirements), in this folder under the prefix.
STALE_TRITON = os.path.join(sys.prefix, "failpedia-private", "triton-2.3.1")
sys.path.insert(0, STALE_TRITON)

if FIXED:
    # --- fix: start
    # Remove the stale Triton (`pip uninstall triton` for that copy, or take its folder out
    # of PYTHONPATH) so that `import triton` finds the release this torch pins.
    sys.path.remove(STALE_TRITON)
    # --- fix: end

import torch  # noqa: E402
import triton  # noqa: E402

print("torch", torch.__version__, "| triton", triton.__version__)

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)).eval()
compiled = torch.compile(model)  # default backend: inductor
x = torch.randn(8, 16)
with torch.no_grad():
    out = compiled(x)  # inductor builds its kernels on this first call
    expected = model(x)
print("compiled model ran: output", tuple(out.shape))

import torch._inductor.metrics  # noqa: E402

# --- check: start
built = torch._inductor.metrics.generated_kernel_count
assert built > 0, "inductor built no kernel"
torch.testing.assert_close(out, expected)
print(f"check: inductor built {built} kernel(s); compiled output equals eager output")
# --- check: end
