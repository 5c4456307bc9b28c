"""Reproducer for tensor-could-not-infer-dtype.

`python repro.py`: tabular records are read into Python lists; two sensor readings are
missing and arrive as `None`, as a JSON `null` or an empty CSV cell parsed by hand does.
`torch.tensor(rows)` must pick one dtype for every element and has none for `NoneType`:
`RuntimeError: Could not infer dtype of NoneType`.
`python repro.py --fixed`: missing readings become `float("nan")` with a mask beside
them, so the tensor keeps every record and every known value, and the statistics skip
the gaps. The check asserts that the known values are unchanged, the mask marks exactly
the missing cells, and the per-column means equal those of the known values alone.
"""

import sys

import torch

FIXED = "--fixed" in sys.argv[1:]

rows = [
    [21.5, 0.31, 1013.0],
    [22.0, None, 1012.5],
    [21.8, 0.35, 1011.9],
    [None, 0.33, 1012.2],
    [23.1, 0.30, 1010.8],
]


def to_tensor(records: list[list[float | None]]) -> tuple[torch.Tensor, torch.Tensor]:
    values = torch.tensor(records)  # dtype inferred from the elements
    return values, torch.ones_like(values, dtype=torch.bool)


if FIXED:
    # --- fix: start
    def to_tensor(records: list[list[float | None]]) -> tuple[torch.Tensor, torch.Tensor]:
        # a missing value is NaN in the tensor and False in the mask: nothing is dropped
        present = torch.tensor([[v is not None for v in r] for r in records])
        values = torch.tensor([[float("nan") if v is None else v for v in r] for r in records])
        return values, present
    # --- fix: end


values, present = to_tensor(rows)
column_means = values.nansum(0) / present.sum(0)
print(f"features {tuple(values.shape)} {values.dtype}; {int((~present).sum())} missing; means {column_means.tolist()}")

# --- check: start
assert values.shape == (len(rows), 3) and values.dtype == torch.float32  # every record kept
for i, r in enumerate(rows):
    for j, v in enumerate(r):
        assert bool(present[i, j]) == (v is not None), (i, j)  # the mask marks exactly the gaps
        if v is not None:
            assert values[i, j].item() == torch.tensor(v).item(), (i, j)  # known values unchanged
for j in range(3):
    known = [r[j] for r in rows if r[j] is not None]
    torch.testing.assert_close(column_means[j], torch.tensor(sum(known) / len(known)))
print("check: all 5 records kept, 2 gaps masked, column means equal the means of the known values")
# --- check: end
