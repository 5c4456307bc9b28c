"""Reproducer for cuda-reinit-forked.

`python repro.py`: the training process initializes CUDA (it moves the model to the GPU),
then iterates a DataLoader with two worker processes started by `fork` (the default on
Linux up to Python 3.13). The Dataset "helpfully" puts each sample on the GPU in
`__getitem__`. A forked child inherits the parent's memory but not a usable CUDA context,
so PyTorch marks it as a bad fork and the worker's first CUDA call raises
`RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with
multiprocessing, you must use the 'spawn' start method`, which the DataLoader re-raises
in the main process as `Caught RuntimeError in DataLoader worker process 0`.
`python repro.py --fixed`: workers only build CPU tensors; the main process moves each
batch to the GPU (from pinned memory, without blocking). Workers then never touch CUDA,
whatever the start method. The check compares the inputs the model was trained on with
the 64 samples the Dataset defines, built in the main process: all of them, in order.

Needs a CUDA GPU, Linux (for `fork`).
"""

import sys

import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]

if not torch.cuda.is_available():
    sys.exit("this reproducer needs a CUDA GPU")
device = torch.device("cuda")


class Features(Dataset):
    """The bug: samples are moved to the GPU inside the worker."""

    def __len__(self) -> int:
        return 64

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        generator = torch.Generator().manual_seed(index)
        x = torch.randn(16, generator=generator)
        return x.to(device), torch.tensor(index % 4, device=device)


if FIXED:
    # --- fix: start
    class Features(Dataset):
        """Workers build CPU tensors; the training loop moves whole batches to the GPU."""

        def __len__(self) -> int:
            return 64

        def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
            generator = torch.Generator().manual_seed(index)
            return torch.randn(16, generator=generator), torch.tensor(index % 4)
    # --- fix: end


def main() -> torch.Tensor:
    """Train one epoch; return the inputs the model was trained on, in order."""
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 4).to(device)  # CUDA is initialized in the parent here
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(
        Features(),
        batch_size=8,
        num_workers=2,
        multiprocessing_context="fork",  # the Linux default before Python 3.14
        pin_memory=True,
    )
    trained_on = []
    for batch in loader:
        x, y = (t.to(device, non_blocking=True) for t in batch)  # whole batches, from pinned memory
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        trained_on.append(x)
    print(f"trained {len(trained_on)} steps, last loss {loss.item():.4f}")
    return torch.cat(trained_on)


if __name__ == "__main__":
    trained_on = main()

    # --- check: start
    # The samples the Dataset defines, built here in the main process without workers.
    expected = torch.stack([torch.randn(16, generator=torch.Generator().manual_seed(i)) for i in range(64)])
    assert trained_on.device.type == "cuda", f"trained on {trained_on.device}"
    torch.testing.assert_close(trained_on.cpu(), expected, rtol=0, atol=0)
    print(f"check: the model trained on the GPU on all {len(expected)} samples, in order, as the Dataset defines them")
    # --- check: end
