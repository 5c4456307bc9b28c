"""Reproducer for triton-ptxas-too-old.

Triton compiles ahead of time for a GPU it is not running on, so no GPU is needed: a
vector-add kernel is compiled for an RTX 50xx (`GPUTarget("cuda", 120, 32)`, sm_120).

`python repro.py`: `TRITON_PTXAS_BLACKWELL_PATH` names the `ptxas` of CUDA 12.4 (from the
`nvidia-cuda-nvcc-cu12` 12.4.131 wheel), as a machine that points Triton at an older
system toolkit does. For sm_100 and later, triton 3.7.1 assembles with the `ptxas` that
variable names; CUDA 12.4 predates Blackwell and stops with
`ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'`.
`python repro.py --fixed`: the variable names a `ptxas` that knows sm_120 (here the
`ptxas-blackwell` of CUDA 13.1 that triton 3.7.1 ships in its wheel; on a real machine,
the `bin/ptxas` of a CUDA 12.8+ toolkit). The kernel assembles, and NVIDIA's `cuobjdump`
reads the cubin back as sm_120a machine code of `add_kernel`: two global loads, an add
and a store.
"""

import atexit
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]

work = tempfile.mkdtemp(prefix="repro-ptxas-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
os.environ["TRITON_CACHE_DIR"] = os.path.join(work, "triton-cache")

# The machine's setting: Triton pointed at CUDA 12.4's ptxas (a /usr/local/cuda-12.4 install
# stands for it here, as the pip wheel of that toolkit release).
OLD_PTXAS = str(
    importlib.metadata.distribution("nvidia-cuda-nvcc-cu12").locate_file(
        "nvidia/cuda_nvcc/bin/ptxas"
    )
)
os.environ["TRITON_PTXAS_BLACKWELL_PATH"] = OLD_PTXAS

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

NVIDIA_BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
NEW_PTXAS = os.path.join(NVIDIA_BIN, "ptxas-blackwell")  # CUDA 13.1, shipped with triton 3.7.1

if FIXED:
    # --- fix: start
    # Point Triton's Blackwell assembler at a ptxas new enough for sm_120 (CUDA 12.8+).
    os.environ["TRITON_PTXAS_BLACKWELL_PATH"] = NEW_PTXAS
    # --- fix: end


def release(ptxas: str) -> str:
    """The CUDA release a ptxas binary reports, e.g. 'release 12.4, V12.4.131'."""
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-2]


print("triton", triton.__version__, "| target sm_120 (RTX 50xx)")
print("TRITON_PTXAS_BLACKWELL_PATH ->", release(os.environ["TRITON_PTXAS_BLACKWELL_PATH"]))


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


source = ASTSource(
    add_kernel,
    signature={
        "x_ptr": "*fp32",
        "y_ptr": "*fp32",
        "out_ptr": "*fp32",
        "n": "i32",
        "BLOCK": "constexpr",
    },
    constexprs={"BLOCK": 128},
)
kernel = triton.compile(source, target=GPUTarget("cuda", 120, 32))
cubin = kernel.asm["cubin"]
print(f"compiled add_kernel for sm_120: {len(cubin)}-byte cubin")

# --- check: start
# Read the cubin back with NVIDIA's own disassembler, not with Triton.
assert cubin[:4] == b"\x7fELF" and int.from_bytes(cubin[18:20], "little") == 190, "not a CUDA ELF"
cubin_path = os.path.join(work, "add_kernel.cubin")
with open(cubin_path, "wb") as handle:
    handle.write(cubin)
sass = subprocess.run(
    [os.path.join(NVIDIA_BIN, "cuobjdump"), "-sass", cubin_path],
    capture_output=True,
    text=True,
    check=True,
).stdout
assert "code for sm_120a" in sass, sass[:400]
assert "Function : add_kernel" in sass, sass[:400]
instructions = [line.split("*/", 1)[1].split(";")[0] for line in sass.splitlines() if ";" in line]
loads = [op for op in instructions if "LDG" in op]
adds = [op for op in instructions if "FADD" in op]
stores = [op for op in instructions if "STG" in op]
assert len(loads) == 2 and adds and stores, instructions
print(
    f"check: cuobjdump reads sm_120a code for add_kernel: {len(loads)} global loads, "
    f"{len(adds)} FADD, {len(stores)} global store"
)
# --- check: end
