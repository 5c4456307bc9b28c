"""Reproducer for dataloader-worker-exception.

`python repro.py`: a dataset reads one `.npy` file per sample from a manifest (a list of
paths, as a CSV of file names would give). One listed file is missing on disk. With
`num_workers=2`, the worker that draws that sample gets `FileNotFoundError` inside
`__getitem__`; it catches it, sends the formatted traceback to the main process, and the
main process re-raises it as
`FileNotFoundError: Caught FileNotFoundError in DataLoader worker process N.` followed by
`Original Traceback (most recent call last):` and the worker's own traceback, which ends
at the `np.load` line of the dataset.
`python repro.py --fixed`: the dataset checks its manifest once, in `__init__`, reports the
entries whose files are missing and keeps only readable ones, so no worker meets the bad
record and the epoch completes.
"""

import os
import shutil
import sys
import tempfile

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]


class NpyDataset(Dataset):
    def __init__(self, paths: list[str]) -> None:
        self.paths = paths

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> torch.Tensor:
        return torch.from_numpy(np.load(self.paths[index]))


# --- fix: start
class CheckedNpyDataset(NpyDataset):
    """Validate the manifest up front, in the main process, where errors are readable."""

    def __init__(self, paths: list[str]) -> None:
        missing = [p for p in paths if not os.path.isfile(p)]
        for path in missing:
            print(f"dataset: skipping missing file {path}", file=sys.stderr)
        super().__init__([p for p in paths if os.path.isfile(p)])
# --- fix: end


def main() -> None:
    data_dir = tempfile.mkdtemp(prefix="repro-worker-exception-")
    try:
        paths = []
        for i in range(32):
            path = os.path.join(data_dir, f"sample_{i:03d}.npy")
            np.save(path, np.full((4,), i, dtype=np.float32))
            paths.append(path)
        os.remove(paths[21])  # a file the manifest lists but the disk does not have

        dataset = CheckedNpyDataset(paths) if FIXED else NpyDataset(paths)
        loader = DataLoader(dataset, batch_size=4, num_workers=2)
        total = 0
        for batch in loader:
            total += batch.shape[0]
        print(f"epoch finished: {total} samples")
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
