"""Reproducer for cuda-illegal-memory-access.

`python repro.py`: a hand-written CUDA kernel (compiled at run time with NVRTC through
`torch.cuda._compile_kernel`) gathers embedding rows for a batch of raw user ids. It
trusts the ids: it reads `table[id * dim + j]` without checking `0 <= id < num_rows`.
The ids come straight from the data (values around 3e9) instead of being mapped to row
numbers, so the kernel reads gigabytes past the end of the table, the GPU's memory
management unit faults, and the next call that waits for the GPU raises
`torch.AcceleratorError: CUDA error: an illegal memory access was encountered`
(`RuntimeError` before torch 2.8). The error is reported at `torch.cuda.synchronize()`,
not at the launch: kernels run asynchronously.
`python repro.py --fixed`: the ids are mapped to rows (`id % num_rows`, the hashing
trick) before the launch, and the kernel checks the bound itself, so an id that slips
through yields a zero row instead of a fault.

Needs a CUDA GPU and torch >= 2.8 (for `torch.cuda._compile_kernel`, which uses the
NVRTC library shipped with the CUDA wheels).
"""

import os
import sys
import tempfile

import torch

FIXED = "--fixed" in sys.argv[1:]
NUM_ROWS, DIM, BATCH = 100_000, 64, 256

if not torch.cuda.is_available():
    sys.exit("this reproducer needs a CUDA GPU")
if not hasattr(torch.cuda, "_compile_kernel"):
    sys.exit(f"this reproducer needs torch >= 2.8 (torch.cuda._compile_kernel); found {torch.__version__}")

# One block per id, one thread per embedding column. `row` is not checked.
# (`_compile_kernel` passes tensors as pointers and Python ints as C `int`.)
UNCHECKED_GATHER = r"""
extern "C" __global__
void gather_rows(const float* table, const long long* ids, float* out, int n_ids, int dim) {
    int i = blockIdx.x;
    int j = threadIdx.x;
    if (i < n_ids && j < dim) {
        long long row = ids[i];
        out[(long long)i * dim + j] = table[row * dim + j];
    }
}
"""

# --- fix: start
# Bounds-checked kernel: out-of-range rows produce zeros instead of wild reads.
CHECKED_GATHER = r"""
extern "C" __global__
void gather_rows(const float* table, const long long* ids, float* out, int n_ids, int dim,
                 int num_rows) {
    int i = blockIdx.x;
    int j = threadIdx.x;
    if (i < n_ids && j < dim) {
        long long row = ids[i];
        out[(long long)i * dim + j] = (row >= 0 && row < num_rows) ? table[row * dim + j] : 0.0f;
    }
}
"""


def ids_to_rows(raw_ids: torch.Tensor, num_rows: int) -> torch.Tensor:
    """Map raw ids (any int64) into [0, num_rows) before they index the table."""
    return torch.remainder(raw_ids, num_rows)
# --- fix: end


def compile_kernel(source: str, name: str):
    """NVRTC-compile `name` from `source` (no CUDA toolkit needed: the kernels use no headers)."""
    import torch.utils.cpp_extension as cpp_extension

    if cpp_extension.CUDA_HOME is None:
        # torch adds <CUDA_HOME>/include to NVRTC's search path and raises if there is no
        # toolkit; an empty include folder is enough for these header-free kernels.
        cpp_extension.CUDA_HOME = tempfile.mkdtemp(prefix="no-cuda-toolkit-")
        os.makedirs(os.path.join(cpp_extension.CUDA_HOME, "include"))
    return torch.cuda._compile_kernel(source, name)


torch.manual_seed(0)
device = torch.device("cuda")
table = torch.randn(NUM_ROWS, DIM, device=device)
raw_user_ids = torch.randint(2_900_000_000, 3_100_000_000, (BATCH,), device=device)
out = torch.empty(BATCH, DIM, device=device)
print(f"table {tuple(table.shape)}, ids from {raw_user_ids.min().item()} to {raw_user_ids.max().item()}")

if FIXED:
    kernel = compile_kernel(CHECKED_GATHER, "gather_rows")
    rows = ids_to_rows(raw_user_ids, NUM_ROWS)
    kernel(grid=(BATCH, 1, 1), block=(DIM, 1, 1), args=[table, rows, out, BATCH, DIM, NUM_ROWS])
else:
    kernel = compile_kernel(UNCHECKED_GATHER, "gather_rows")
    kernel(grid=(BATCH, 1, 1), block=(DIM, 1, 1), args=[table, raw_user_ids, out, BATCH, DIM])

print("kernel launched; waiting for the GPU")
torch.cuda.synchronize()  # an illegal access made by the kernel is reported here
print(f"gathered {tuple(out.shape)}, mean {out.mean().item():.4f}")
