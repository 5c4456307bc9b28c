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

import copy
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


def train() -> None:
    for i, (x, y) in enumerate(batches):
        scaler.scale(micro_batch_loss(x, y)).backward()
        scaler.unscale_(optimizer)  # runs 4 times per step: the second call raises
        norm = nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        if (i + 1) % ACCUM_STEPS == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            print(f"micro-batch {i}: optimizer step, grad norm {norm:.4f}")


if FIXED:
    # --- fix: start
    def train() -> None:
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


initial = copy.deepcopy(model)
train()
print(f"finished; loss scale {scaler.get_scale():.0f}")

# --- check: start
# reference: the same accumulation, clipping and AdamW steps in plain float32, no scaler
reference = initial
reference_optimizer = torch.optim.AdamW(reference.parameters(), lr=1e-2)
for i, (x, y) in enumerate(batches):
    (nn.functional.mse_loss(reference(x), y) / ACCUM_STEPS).backward()
    if (i + 1) % ACCUM_STEPS == 0:
        nn.utils.clip_grad_norm_(reference.parameters(), MAX_NORM)
        reference_optimizer.step()
        reference_optimizer.zero_grad()
for p, q in zip(model.parameters(), reference.parameters()):
    torch.testing.assert_close(p, q, atol=1e-3, rtol=1e-3)
print("check: weights equal plain float32 training with the same accumulation and clipping")
# --- check: end
