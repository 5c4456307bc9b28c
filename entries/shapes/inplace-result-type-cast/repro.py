"""Reproducer for inplace-result-type-cast.

`python repro.py`: two integer tensors are updated in place with a floating result.
Class counts from `torch.bincount` are int64, and `freqs /= total` is true division, whose
result is float: `result type Float can't be cast to the desired output type Long`.
Grid-cell indices are int64, and clamping them in place with a bound computed from a
float tensor makes the result float too: `result type Float can't be cast to the desired
output type long int`. In-place ops and `out=` write into the existing tensor, whose
integer dtype cannot hold the floating result, so PyTorch refuses instead of truncating.
`python repro.py --fixed`: the division is done out of place, into a new float tensor,
and the integer indices are clamped with integer bounds.
"""

import sys
import traceback

import torch

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

labels = torch.randint(0, 4, (100,))
counts = torch.bincount(labels, minlength=4)  # int64
centres = torch.rand(10, 2)  # box centres in [0, 1)
grid = torch.tensor(8.0)  # grid size, a float tensor (e.g. from a shape or a gain vector)
centres[0] = torch.tensor([1.0, 0.999999])  # a centre on the far edge
cells = (centres * grid).long()  # int64 cell indices; the edge one is 8, out of range


def class_frequencies(counts):
    freqs = counts.clone()
    freqs /= counts.sum()  # in place on int64: true division gives float
    return freqs


def clamp_cells(cells, grid):
    return cells.clamp_(0, grid - 1)  # the float bound makes the result float


if FIXED:
# --- fix: start
    def class_frequencies(counts):
        # Divide out of place: the result gets a floating dtype of its own.
        return counts / counts.sum()

    def clamp_cells(cells, grid):
        # Clamp integer indices with integer bounds.
        return cells.clamp_(0, int(grid) - 1)
# --- fix: end

freqs = clamped = None
try:
    freqs = class_frequencies(counts)
    print(f"ok, class frequencies {freqs.tolist()} ({freqs.dtype})")
except RuntimeError:
    traceback.print_exc()  # torch's own traceback and message
try:
    clamped = clamp_cells(cells.clone(), grid)
    print(f"ok, cells {clamped.tolist()} ({clamped.dtype})")
except RuntimeError:
    traceback.print_exc()  # torch's own traceback and message

# --- check: start
# Reference: the same numbers computed with Python ints and floats.
assert freqs is not None and clamped is not None, "a computation did not run"
label_list = labels.tolist()
expected_freqs = torch.tensor([label_list.count(c) / len(label_list) for c in range(4)], dtype=torch.float64)
assert freqs.is_floating_point(), freqs.dtype
torch.testing.assert_close(freqs.double(), expected_freqs, rtol=1e-6, atol=1e-7)
size = int(grid.item())
expected_cells = [[min(max(int(v * size), 0), size - 1) for v in row] for row in centres.tolist()]
assert clamped.dtype == torch.int64, clamped.dtype
assert clamped.tolist() == expected_cells, (clamped.tolist(), expected_cells)
assert clamped[0].tolist() == [size - 1, size - 1]
print("check: frequencies and clamped cell indices equal the Python computation")
# --- check: end
