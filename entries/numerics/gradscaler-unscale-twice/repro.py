"""Reproducer for gradscaler-unscale-twice.

`python repro.py`: mixed-precision training with gradient accumulation over 4
micro-batches. The loop calls `scaler.unscale_(optimizer)` and clips the gradient norm
after every micro-batch, but `scaler.step()` and `scaler.update()` only run every 4th
one. The second micro-batch calls `unscale_` again on an optimizer that is still in the
"unscaled" state, and `GradScaler` raises.
`python repro.py --fixed`: `unscale_` and clipping move inside the accumulation boundary,
right before `scaler.step()`, so they run once per optimizer step, after all
micro-batches have added their (scaled) gradients.

`GradScaler("cpu")` keeps the same per-optimizer state machine as the CUDA scaler, so the
check fires the same way on a machine without a GPU.
"""

import sys

import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

ACCUM_STEPS = 4
MAX_NORM = 1.0

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
scaler = torch.amp.GradScaler("cpu")
batches = [(torch.randn(8, 16), torch.randn(8, 1)) for _ in range(8)]


def micro_batch_loss(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.float16):
        out = model(x)
    return nn.functional.mse_loss(out.float(), y) / ACCUM_STEPS


def train_unscale_every_micro_batch() -> None:
    for i, (x, y) in enumerate(batches):
        scaler.scale(micro_batch_loss(x, y)).backward()
        scaler.unscale_(optimizer)  # runs 4 times per step: the second call raises
        norm = nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        if (i + 1) % ACCUM_STEPS == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            print(f"micro-batch {i}: optimizer step, grad norm {norm:.4f}")


# --- fix: start
def train_unscale_once_per_step() -> None:
    for i, (x, y) in enumerate(batches):
        scaler.scale(micro_batch_loss(x, y)).backward()  # keep accumulating scaled grads
        if (i + 1) % ACCUM_STEPS == 0:
            scaler.unscale_(optimizer)  # once, after the last micro-batch of the step
            norm = nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
            scaler.step(optimizer)  # sees the optimizer is already unscaled: no second unscale
            scaler.update()  # resets the per-optimizer state for the next step
            optimizer.zero_grad()
            print(f"micro-batch {i}: optimizer step, grad norm {norm:.4f}")
# --- fix: end


(train_unscale_once_per_step if FIXED else train_unscale_every_micro_batch)()
print(f"finished; loss scale {scaler.get_scale():.0f}")
