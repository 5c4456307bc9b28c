"""Reproducer for dataloader-too-many-open-files.

`python repro.py`: an embedding pass over 2048 rows with a 2-worker DataLoader keeps every
batch it receives (to concatenate them at the end, as feature extraction and prediction
loops do). With the default `file_descriptor` sharing strategy on Linux, each batch a
worker sends arrives as shared memory backed by an open file descriptor, which stays open
in the main process while the batch is alive. The soft limit on open files is set to 128
here, standing in for the common default of 1024 on a data set 8 times smaller; after
about a hundred kept batches the main process cannot receive another descriptor, and the
DataLoader raises `RuntimeError: Too many open files. Communication with the workers is no
longer possible. ...`.
`python repro.py --fixed`: `torch.multiprocessing.set_sharing_strategy("file_system")` at
the start: workers pass shared memory by file name, so kept batches hold no descriptors,
and all 256 batches arrive under the same limit. The check compares every row received
with the row the data set holds.
"""

import resource
import sys

import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]
ROWS, WIDTH, BATCH = 2048, 16, 8

if FIXED:
    # --- fix: start
    # Share worker batches by file name, not by an open file descriptor per batch.
    torch.multiprocessing.set_sharing_strategy("file_system")
    # --- fix: end


class Rows(Dataset):
    def __len__(self) -> int:
        return ROWS

    def __getitem__(self, i: int) -> torch.Tensor:
        return torch.arange(WIDTH, dtype=torch.float32) + i * WIDTH  # row i holds i*16 ... i*16+15


def main() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (128, hard))  # stands in for the usual 1024
    print("sharing strategy:", torch.multiprocessing.get_sharing_strategy())

    loader = DataLoader(Rows(), batch_size=BATCH, num_workers=2)
    batches = []
    for batch in loader:
        batches.append(batch)  # every kept batch from a worker keeps its shared memory alive
    print(f"received {len(batches)} batches")

    # --- check: start
    received = torch.cat(batches)
    expected = torch.stack([Rows()[i] for i in range(ROWS)])  # the rows, built in this process
    assert len(batches) == ROWS // BATCH
    assert torch.equal(received, expected), "rows missing, repeated, out of order or changed"
    print(f"check: all {ROWS} rows arrived intact and in order, in {len(batches)} batches")
    # --- check: end


if __name__ == "__main__":
    main()
