"""Reproducer for gradscaler-unscale-fp16-grads.

`python repro.py`: the model is cast to fp16 with `.half()`, so its parameters, and
therefore their `.grad`, are float16. `GradScaler.step()` unscales the gradients first and
refuses float16 ones: `ValueError: Attempting to unscale FP16 gradients.`
`python repro.py --fixed`: the parameters stay float32 (master weights) and only the
forward pass runs in float16 under `torch.autocast`; gradients come back float32 and the
scaler unscales, skips overflowing steps and updates as designed.

The check is plain Python in `GradScaler._unscale_grads_` and does not depend on the
device, so `GradScaler("cpu")` shows the same error as `GradScaler("cuda")`.
"""

import contextlib
import copy
import sys

import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

x = torch.randn(64, 16)
y = x @ torch.randn(16, 1)


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))


model = make_model().half()  # the usual mistake: the whole model in fp16, then a GradScaler
autocast = contextlib.nullcontext()
if FIXED:
    # --- fix: start
    model = make_model()  # no .half(): the optimizer updates float32 master weights
    autocast = torch.autocast(device_type="cpu", dtype=torch.float16)  # fp16 forward only
    # --- fix: end

initial = copy.deepcopy(model).float()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu")

applied = 0
for step in range(6):
    optimizer.zero_grad()
    with autocast:
        out = model(x.to(model[0].weight.dtype))
    loss = (out.float() - y).pow(2).mean()
    scaler.scale(loss).backward()
    grad_dtype = model[0].weight.grad.dtype
    scale = scaler.get_scale()
    scaler.step(optimizer)  # unscale_ runs here and checks the gradient dtype
    scaler.update()
    applied += scaler.get_scale() >= scale  # the scale drops only when the step was skipped
    print(f"step {step}: loss {loss.item():.4f}, grad dtype {grad_dtype}, scale {scaler.get_scale():.0f}")

# --- check: start
# reference: the same number of plain float32 SGD steps, no scaler, no float16
reference = initial
reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.05)
for _ in range(applied):
    reference_optimizer.zero_grad()
    (reference(x) - y).pow(2).mean().backward()
    reference_optimizer.step()
assert applied >= 3  # most steps were taken, not skipped
for p, q in zip(model.parameters(), reference.parameters()):
    assert p.dtype == torch.float32
    torch.testing.assert_close(p, q, atol=2e-3, rtol=2e-3)
print(f"check: float32 weights after {applied} applied steps equal plain float32 SGD's")
# --- check: end
