"""Reproducer for dataloader-timeout.

`python repro.py`: a DataLoader with `timeout=2` over a dataset that pays one storage
round trip per item. `time.sleep(0.1)` stands in for that latency (an object-store GET,
an NFS open). A batch of 32 items takes one worker about 3.2 s, longer than the 2 s the
main process waits for the next batch, so the first `next()` raises
`RuntimeError: DataLoader timed out after 2 seconds`. More workers do not help: each
batch is built by one worker, so the first batch always takes the full 3.2 s.
`python repro.py --fixed`: the dataset implements `__getitems__`, which the DataLoader
calls with the whole batch of indices; the worker makes one request for 32 items and a
batch takes about 0.1 s, well inside the same 2 s timeout.
"""

import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]
ROUND_TRIP = 0.1  # seconds per storage request (stand-in for network latency)


def fetch(indices: list[int]) -> list[torch.Tensor]:
    """One storage request, however many records it asks for."""
    time.sleep(ROUND_TRIP)
    return [torch.full((4,), float(i)) for i in indices]


class RemoteRecords(Dataset):
    def __len__(self) -> int:
        return 128

    def __getitem__(self, index: int) -> torch.Tensor:
        return fetch([index])[0]  # one round trip per item: 32 per batch


Records = RemoteRecords  # one round trip per item
if FIXED:
# --- fix: start
    class Records(RemoteRecords):
        def __getitems__(self, indices: list[int]) -> list[torch.Tensor]:
            """Called by the DataLoader with a whole batch of indices: one round trip per batch."""
            return fetch(indices)
# --- fix: end


def main() -> None:
    loader = DataLoader(Records(), batch_size=32, num_workers=2, timeout=2)
    start = time.perf_counter()
    batches = []
    for step, batch in enumerate(loader):
        print(f"batch {step}: {tuple(batch.shape)} after {time.perf_counter() - start:.1f} s")
        batches.append(batch)

    # --- check: start
    records = torch.cat(batches)
    expected = torch.stack([torch.full((4,), float(i)) for i in range(len(RemoteRecords()))])
    assert [len(batch) for batch in batches] == [32, 32, 32, 32]
    assert torch.equal(records, expected), "records missing, repeated or out of order"
    print(f"check: all {len(expected)} records arrived once, in order, in batches of 32")
    # --- check: end


if __name__ == "__main__":
    main()
