"""Reproducer for training-loss-nan.

`python repro.py`: a small classifier is trained with plain SGD (momentum 0.9) at a
learning rate of 10, with no warmup and no gradient clipping. Each step overshoots, the
logits grow by orders of magnitude, and within about twenty steps `cross_entropy` of
infinite logits is `inf - inf = nan`. The loop checks the loss as DETR's
`train_one_epoch` (engine.py) and the DeiT/MAE/DEIM loops copied from it do
(`if not math.isfinite(loss_value)`: print `Loss is nan, stopping training`, then
`sys.exit(1)`), in the f-string form of torchvision's detection reference,
so the run stops with that line and exit status 1.
`python repro.py --fixed`: the learning rate is one the model can follow (0.05); the run
finishes, and its loss curve equals the same training done in float64.
"""

import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]

STEPS, BATCH = 200, 32
lr = 10.0  # far too high for this model, and no warmup or clipping to soften it

if FIXED:
    # --- fix: start
    lr = 0.05  # a learning rate the model can follow (found by a short sweep)
    # --- fix: end


def make_problem(dtype: torch.dtype) -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    """The same data and initial weights for every run, in the given dtype."""
    torch.manual_seed(0)
    x = torch.randn(256, 16) * 3
    y = (x @ torch.randn(16, 4)).argmax(1)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
    return model.to(dtype), x.to(dtype), y


def train(dtype: torch.dtype) -> list[float]:
    """Train for STEPS steps; stop the way DETR's engine.py does on a non-finite loss."""
    model, x, y = make_problem(dtype)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    for step in range(STEPS):
        idx = torch.arange(step * BATCH, (step + 1) * BATCH) % len(x)
        loss = F.cross_entropy(model(x[idx]), y[idx])
        loss_value = loss.item()
        if not math.isfinite(loss_value):
            print(f"step {step}: last finite losses {[f'{v:.3g}' for v in losses[-3:]]}")
            print(f"Loss is {loss_value}, stopping training")  # as torchvision's engine.py
            sys.exit(1)
        losses.append(loss_value)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses


losses = train(torch.float32)
print(f"lr {lr}: loss {losses[0]:.4f} at step 0, {losses[-1]:.4f} at step {STEPS - 1}")

# --- check: start
# the same training in float64: the float32 run must follow it step by step to the end
reference = train(torch.float64)
assert len(losses) == len(reference) == STEPS, "every step was trained"
assert all(math.isfinite(v) for v in losses), "every loss is finite"
torch.testing.assert_close(torch.tensor(losses), torch.tensor(reference), rtol=1e-3, atol=1e-4)
first, last = sum(reference[:10]) / 10, sum(reference[-10:]) / 10
assert last < 0.1 * first, f"the loss fell as in float64 ({first:.3f} -> {last:.4f})"
print(f"check: {STEPS} finite losses equal the float64 run's; mean loss {first:.3f} -> {last:.4f}")
# --- check: end
