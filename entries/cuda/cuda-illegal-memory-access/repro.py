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
`python repro.py --fixed`: the raw ids are looked up in the table's vocabulary (the sorted
user ids the table was built for, row i belonging to the i-th id) with
`torch.searchsorted`, and an id with no row stops the job on the host, with its value,
before the launch; the same kernel then reads only rows that exist. The check compares
the gathered rows with PyTorch's own indexing of the rows the batch's users own.

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

# One block per id, one thread per embedding column. `row` is not checked: the caller
# promises 0 <= row < num_rows. (`_compile_kernel` passes tensors as pointers and Python
# ints as C `int`.)
GATHER_ROWS = r"""
extern "C" __global__
void gather_rows(const float* table, const long long* rows, float* out, int n_rows, int dim) {
    int i = blockIdx.x;
    int j = threadIdx.x;
    if (i < n_rows && j < dim) {
        long long row = rows[i];
        out[(long long)i * dim + j] = table[row * dim + j];
    }
}
"""


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
# The table has one row per known user; row i belongs to the i-th smallest user id.
spread = torch.randint(0, 2_000, (NUM_ROWS,), device=device)
user_ids = 2_900_000_000 + 2_000 * torch.arange(NUM_ROWS, device=device) + spread  # sorted, unique
table = torch.randn(NUM_ROWS, DIM, device=device)
users_in_batch = torch.randint(0, NUM_ROWS, (BATCH,), device=device)  # which users the batch is about
raw_ids = user_ids[users_in_batch]  # what the data holds: user ids, around 3e9
print(f"table {tuple(table.shape)}, ids from {raw_ids.min().item()} to {raw_ids.max().item()}")

rows = raw_ids  # the bug: raw user ids used as row numbers
if FIXED:
    # --- fix: start
    # Look each id up in the table's vocabulary (sorted user ids, one per row) and refuse
    # ids that have no row, on the host, before any kernel reads with them.
    rows = torch.searchsorted(user_ids, raw_ids).clamp(max=len(user_ids) - 1)
    unknown = user_ids[rows] != raw_ids
    if unknown.any():
        raise ValueError(f"{int(unknown.sum())} ids have no row in the table, e.g. {raw_ids[unknown][0].item()}")
    # --- fix: end

out = torch.empty(BATCH, DIM, device=device)
kernel = compile_kernel(GATHER_ROWS, "gather_rows")
kernel(grid=(BATCH, 1, 1), block=(DIM, 1, 1), args=[table, rows, out, BATCH, DIM])
print("kernel launched; waiting for the GPU")
torch.cuda.synchronize()  # an illegal access made by the kernel is reported here
print(f"gathered {tuple(out.shape)}, mean {out.mean().item():.4f}")

# --- check: start
expected = table[users_in_batch]  # PyTorch's own indexing of the rows the batch's users own
torch.testing.assert_close(out, expected, rtol=0, atol=0)
print(f"check: all {BATCH} gathered rows are the rows of the requested users")
# --- check: end
