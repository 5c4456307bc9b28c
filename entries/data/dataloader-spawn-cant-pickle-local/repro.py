"""Reproducer for dataloader-spawn-cant-pickle-local.

`python repro.py`: DataLoaders with num_workers=2 and the `spawn` start method (the
default on macOS and Windows, the usual choice with CUDA) must pickle the dataset and
`collate_fn` to send them to each worker.
- Loader 1 uses a lambda defined inside `main()` as `collate_fn`: pickling fails with
  `AttributeError: Can't pickle local object 'main.<locals>.<lambda>'` (printed, then the
  script goes on).
- Loader 2 gives the dataset a module-level lambda as its transform: pickling fails with
  `_pickle.PicklingError: Can't pickle <function <lambda> at 0x...>: attribute lookup
  <lambda> on __main__ failed`.
Both start with torch's warning `Got pickle error when attempting to start a worker Process.`
`python repro.py --fixed`: one loader with both fixes: the transform is a module-level
`def` and the collate_fn a `functools.partial` of a module-level function; both pickle
by reference and the two spawned workers load every batch.
"""

import functools
import sys
import traceback

import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]
LENGTHS = [5, 3, 4, 2]


class TokenDataset(Dataset):
    def __init__(self, transform) -> None:
        self.transform = transform

    def __len__(self) -> int:
        return len(LENGTHS)

    def __getitem__(self, index: int) -> torch.Tensor:
        return self.transform(torch.arange(1, LENGTHS[index] + 1, dtype=torch.float32))


def pad_batch(batch, pad_value: float) -> torch.Tensor:
    longest = max(len(seq) for seq in batch)
    out = torch.full((len(batch), longest), pad_value)
    for row, seq in enumerate(batch):
        out[row, : len(seq)] = seq
    return out


scale_lambda = lambda x: x / 10  # noqa: E731  module-level, but named "<lambda>"

# --- fix: start
def scale(x: torch.Tensor) -> torch.Tensor:
    """Module-level def: pickled as a reference (module + name) and imported by each worker."""
    return x / 10


def picklable_collate(pad_value: float):
    """functools.partial of a module-level function pickles; a lambda or nested def does not."""
    return functools.partial(pad_batch, pad_value=pad_value)
# --- fix: end


def make_loader(dataset: Dataset, collate_fn) -> DataLoader:
    return DataLoader(
        dataset, batch_size=2, num_workers=2, collate_fn=collate_fn,
        multiprocessing_context="spawn",
    )


def main(pad_value: float = -1.0) -> None:
    if FIXED:
        # Both fixes in one loader: module-level transform, partial collate_fn.
        loader = make_loader(TokenDataset(scale), picklable_collate(pad_value))
        for batch in loader:
            print("batch from spawned workers:", batch.tolist())
        return
    # Loader 1: the collate_fn is a lambda local to main().
    try:
        iter(make_loader(TokenDataset(scale), lambda batch: pad_batch(batch, pad_value)))
    except AttributeError:
        traceback.print_exc()  # keep going: show the dataset being pickled too
    # Loader 2: the dataset holds a module-level lambda.
    iter(make_loader(TokenDataset(scale_lambda), functools.partial(pad_batch, pad_value=pad_value)))


if __name__ == "__main__":  # required with spawn: workers re-import this file
    main()
