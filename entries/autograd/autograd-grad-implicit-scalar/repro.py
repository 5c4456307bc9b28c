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

torch.manual_seed(0)
print("torch", torch.__version__)
model = nn.Linear(10, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss(reduction="none")  # one loss per sample, to weight them
class_weights = torch.tensor([1.0, 1.0, 3.0])  # up-weight the rare class 2

seen = []
for step in range(3):
    x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    logits = model(x)
    per_sample = criterion(logits, y)
    weights = class_weights[y]
    loss = per_sample * weights
    if FIXED:
        # --- fix: start
        loss = (per_sample * weights).sum() / weights.sum()  # weighted mean: one number
        # --- fix: end
    print(f"step {step}: loss shape {tuple(loss.shape)}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    seen.append((logits.detach(), y, loss.detach()))
    print(f"step {step}: loss {loss.item():.4f}")

# --- check: start
reference = nn.CrossEntropyLoss(weight=class_weights)  # PyTorch's own weighted mean
assert len(seen) == 3
for logits, y, loss in seen:
    torch.testing.assert_close(loss, reference(logits, y))
print("check: each step's loss equals CrossEntropyLoss(weight=...) on the same batch")
# --- check: end
