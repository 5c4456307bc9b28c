"""Reproducer for multiprocessing-spawn-main-guard.

`python repro.py`: the training loop sits at module level and the DataLoader uses the
`spawn` start method (the default on macOS and Windows). Each spawned worker starts a
fresh interpreter that imports this file again (as `__mp_main__`) to find the dataset
class; the import runs the module-level loop, which tries to start workers of its own
while the worker is still bootstrapping. CPython refuses with `RuntimeError: An attempt
has been made to start a new process before the current process has finished its
bootstrapping phase.`, printed by each worker; the main process then reports
`DataLoader worker (pid N) exited unexpectedly with exit code 1`.
`python repro.py --fixed`: the same loop under `if __name__ == "__main__":`. A worker's
import now only defines the dataset class and the function, and the two spawned workers
load every batch.
"""

import sys

import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]


class SquaresDataset(Dataset):
    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int) -> torch.Tensor:
        return torch.tensor([index, index * index])


def train() -> list[torch.Tensor]:
    loader = DataLoader(
        SquaresDataset(), batch_size=4, num_workers=2, multiprocessing_context="spawn"
    )
    batches = []
    for batch in loader:
        print("batch from spawned workers:", batch.tolist())
        batches.append(batch)
    return batches


# As written, the training code runs whenever Python imports this file, a spawned worker's
# import included.
runs_training = True
if FIXED:
# --- fix: start
    # The main guard: true only in the process you started. A spawned worker imports this
    # file as "__mp_main__" and skips the training code.
    runs_training = __name__ == "__main__"
# --- fix: end

if runs_training:
    batches = train()

    # --- check: start
    expected = torch.tensor([[i, i * i] for i in range(len(SquaresDataset()))])
    assert torch.equal(torch.cat(batches), expected), "samples missing or out of order"
    print(f"check: the spawned workers loaded all {len(expected)} samples, in order")
    # --- check: end
