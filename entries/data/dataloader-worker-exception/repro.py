"""Reproducer for dataloader-worker-exception.

`python repro.py`: a dataset reads one `.npy` feature file per sample from a manifest (a
list of paths, as a CSV of file names would give). The files are a preprocessing cache
built from raw records, and one listed file, `sample_021.npy`, is missing on disk (lost
in an interrupted copy). With `num_workers=2`, the worker that draws that sample gets
`FileNotFoundError` inside `__getitem__`; it catches it, sends the formatted traceback to
the main process, and the main process re-raises it as
`FileNotFoundError: Caught FileNotFoundError in DataLoader worker process N.` followed by
`Original Traceback (most recent call last):` and the worker's own traceback, which ends
at the `np.load` line of the dataset.
`python repro.py --fixed`: before training, every file the manifest lists but the disk
lacks is rebuilt from its raw record with the same preprocessing, so the epoch runs over
all 32 samples.
"""

import os
import shutil
import sys
import tempfile

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]
RAW = np.arange(32 * 4, dtype=np.float32).reshape(32, 4)  # the raw records, one per sample


def preprocess(record: np.ndarray) -> np.ndarray:
    """The feature extraction whose output the .npy cache holds."""
    return (record - record.mean()) / 2


def write_features(index: int, path: str) -> None:
    np.save(path, preprocess(RAW[index]))


class NpyDataset(Dataset):
    def __init__(self, paths: list[str]) -> None:
        self.paths = paths

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> torch.Tensor:
        return torch.from_numpy(np.load(self.paths[index]))


def main() -> None:
    data_dir = tempfile.mkdtemp(prefix="repro-worker-exception-")
    try:
        paths = [os.path.join(data_dir, f"sample_{i:03d}.npy") for i in range(len(RAW))]
        for index, path in enumerate(paths):
            write_features(index, path)
        os.remove(paths[21])  # listed in the manifest, lost on disk

        if FIXED:
# --- fix: start
            # Restore what the manifest lists but the disk lacks, from the raw data, before training.
            missing = [index for index, path in enumerate(paths) if not os.path.isfile(path)]
            for index in missing:
                print(f"rebuilding {os.path.basename(paths[index])} from raw record {index}")
                write_features(index, paths[index])
# --- fix: end

        loader = DataLoader(NpyDataset(paths), batch_size=4, num_workers=2)
        batches = []
        for batch in loader:
            batches.append(batch)
        print(f"epoch finished: {sum(len(batch) for batch in batches)} samples")

        # --- check: start
        trained_on = torch.cat(batches)  # every sample the epoch delivered, in order
        expected = torch.stack([torch.from_numpy(preprocess(record)) for record in RAW])
        assert len(trained_on) == len(RAW), f"{len(trained_on)} of {len(RAW)} samples"
        torch.testing.assert_close(trained_on, expected)
        print(f"check: all {len(RAW)} samples were trained on, each with its raw record's features")
        # --- check: end
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
