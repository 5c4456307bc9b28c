"""Reproducer for autograd-grad-implicit-scalar.

`python repro.py`: a classifier's loss is built with `reduction="none"` so that each
sample can be weighted, and the weighted per-sample losses, a tensor of shape [16], go
straight to `backward()`. Backward can only invent the starting gradient (1.0) for a
single number, so it refuses.
`python repro.py --fixed`: the weighted losses are reduced to one number (a weighted
mean over the batch) before `backward()`, and training runs.
"""

import sys

import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]


# --- fix: start
def reduce_loss(per_sample: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Weighted mean over the batch: a 0-d loss, so backward can start from 1.0."""
    return (per_sample * weights).sum() / weights.sum()
# --- fix: end


torch.manual_seed(0)
print("torch", torch.__version__)
model = nn.Linear(10, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss(reduction="none")  # one loss per sample, to weight them

for step in range(3):
    x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    weights = torch.where(y == 2, 3.0, 1.0)  # up-weight the rare class
    per_sample = criterion(model(x), y)
    loss = reduce_loss(per_sample, weights) if FIXED else per_sample * weights
    print(f"step {step}: loss shape {tuple(loss.shape)}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")
