"""Reproducer for dataloader-spawn-cant-pickle-local.

`python repro.py`: DataLoaders with num_workers=2 and the `spawn` start method (the
default on macOS and Windows, the usual choice with CUDA) must pickle the dataset and
`collate_fn` to send them to each worker.
- Loader 1 uses a lambda returned by `collate_with_padding()` as `collate_fn`: pickling
  fails with `AttributeError: Can't pickle local object
  'collate_with_padding.<locals>.<lambda>'` (printed, then the script goes on).
- Loader 2 also gives the dataset a module-level lambda as its transform: pickling fails with
  `_pickle.PicklingError: Can't pickle <function <lambda> at 0x...>: attribute lookup
  <lambda> on __main__ failed`.
Both start with torch's warning `Got pickle error when attempting to start a worker Process.`
`python repro.py --fixed`: the transform is a module-level `def` and the collate_fn a
`functools.partial` of a module-level function; both pickle by reference, and the
spawned workers of both loaders load every batch.
"""

import functools
import sys
import traceback

import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]
LENGTHS = [5, 3, 4, 2]


class TokenDataset(Dataset):
    def __init__(self, transform=None) -> None:
        self.transform = transform

    def __len__(self) -> int:
        return len(LENGTHS)

    def __getitem__(self, index: int) -> torch.Tensor:
        record = torch.arange(1, LENGTHS[index] + 1, dtype=torch.float32)
        return record if self.transform is None else self.transform(record)


def pad_batch(batch, pad_value: float) -> torch.Tensor:
    longest = max(len(seq) for seq in batch)
    out = torch.full((len(batch), longest), pad_value)
    for row, seq in enumerate(batch):
        out[row, : len(seq)] = seq
    return out


scale = lambda x: x / 10  # noqa: E731  module-level, but its name is "<lambda>"


def collate_with_padding(pad_value: float):
    return lambda batch: pad_batch(batch, pad_value)  # a lambda local to this function


if FIXED:
# --- fix: start
    def scale(x: torch.Tensor) -> torch.Tensor:
        """A def, not a lambda: pickled by reference (module + name), imported by each worker."""
        return x / 10

    def collate_with_padding(pad_value: float):
        """functools.partial of a module-level function pickles; a lambda or nested def does not."""
        return functools.partial(pad_batch, pad_value=pad_value)
# --- fix: end


def make_loader(dataset: Dataset, collate_fn) -> DataLoader:
    return DataLoader(
        dataset, batch_size=2, num_workers=2, collate_fn=collate_fn,
        multiprocessing_context="spawn",
    )


def main(pad_value: float = -1.0) -> None:
    collate_fn = collate_with_padding(pad_value)
    # Loader 1: the collate_fn alone (the dataset keeps its records as they are).
    try:
        for batch in make_loader(TokenDataset(), collate_fn):
            print("loader 1 batch from spawned workers:", batch.tolist())
    except AttributeError:
        traceback.print_exc()  # keep going: show the dataset being pickled too
    # Loader 2: the whole pipeline, the dataset's transform included.
    batches = []
    for batch in make_loader(TokenDataset(scale), collate_fn):
        print("loader 2 batch from spawned workers:", batch.tolist())
        batches.append(batch)

    # --- check: start
    rows = [row for batch in batches for row in batch]
    assert len(rows) == len(LENGTHS)
    for row, length in zip(rows, LENGTHS):
        record = torch.arange(1, length + 1, dtype=torch.float32) / 10  # computed here, not in a worker
        torch.testing.assert_close(row[:length], record)
        assert bool((row[length:] == pad_value).all()), row
    print("check: every record came back from the spawned workers, scaled and padded")
    # --- check: end


if __name__ == "__main__":  # required with spawn: workers re-import this file
    main()
